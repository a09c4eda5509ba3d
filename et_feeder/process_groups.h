// The communicator groups a METADATA process_group:init node declares (PyTorch's), read from its
// inputs: the executor defines them when the node runs; the run's cost estimate reads them
// before the run starts.
//
//   StatusOr<std::vector<ProcessGroupSpec>> g = ParseProcessGroups(*trace.metadata_inputs(i),
//                                                                  /*num_ranks=*/64);
//
// inputs.values holds a Python list of dicts (or Chakra's converter's list of one string holding
// them as JSON), each {'pg_name': '<int>', 'pg_desc': ..., 'pg_size': ..., 'ranks': [...]};
// empty ranks means every rank. Keys are read by name, in any order. A group whose name is not a
// number (PyTorch can hash group names) is one no collective can name (pg_name is a group
// number), so it is left out. Errors ("METADATA: ...") name what is wrong, without the node.
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"

namespace orrery {
namespace et {

struct ProcessGroupSpec {
  int pg = 0;              // the group's number (0 = every rank)
  std::vector<int> ranks;  // its ranks, as listed (every rank when the list is empty)
};

StatusOr<std::vector<ProcessGroupSpec>> ParseProcessGroups(std::string_view values, int num_ranks);

}  // namespace et
}  // namespace orrery
