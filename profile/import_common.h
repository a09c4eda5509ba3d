// What the Kineto and the execution-trace importers share: collectives' groups, node
// attributes, the comm-group file, rounding to whole microseconds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "et_feeder/proto/et_def.pb.h"
#include "profile/collectives.h"
#include "profile/importer.h"

namespace orrery {
namespace profile {

// A collective as it will be written.
struct PlannedCollective {
  CollectiveSpec spec;
  int group_id = 0;  // 0: the world (no pg_name)
};

// Group ids over all ranks (ids from 1, ascending rank lists; written into result->groups in
// file indexes). A group with a member that is not imported runs over the whole simulated job
// instead (no pg_name), its size scaled so that each rank moves the bytes it moved in its group
// (all-gather: (g-1)/(w-1); all-reduce, reduce-scatter, all-to-all: ((g-1)/g)/((w-1)/w);
// broadcast, reduce, barrier: unchanged); result->notes says so.
void ResolveGroups(const std::vector<std::vector<PlannedCollective>*>& per_rank,
                   const std::vector<int>& ranks, int world, ImportResult* result);

// is_cpu_op, the GPU stream (when >= 0), and a collective's comm_type, comm_size and pg_name.
void SetNodeAttrs(ChakraProtoMsg::Node* n, bool cpu, int64_t stream, const PlannedCollective* c);

// Writes the groups as a comm-group JSON ({"1": [0, 1], ...}) to `path`.
Status WriteCommGroups(const std::map<int, std::vector<int>>& groups, const std::string& path);
// PyTorch's process_group:init inputs.values for these groups, as Chakra's converter writes it
// (the Python list of its one input, the groups as JSON).
std::string ProcessGroupInitValues(const std::map<int, std::vector<int>>& groups);

// Writes every rank's file in rank order (file f, <prefix>.<f>.et, is the f-th rank imported)
// with `write(i, path, stats)` for input i, into result->ranks; then, with Groups::kJson and
// groups, the comm-group file. `sources[i]` names input i in the summary.
Status WriteRanksAndGroups(
    const std::vector<int>& ranks, const std::vector<std::string>& sources, const ImportOptions& o,
    ImportResult* result,
    const std::function<Status(size_t, const std::string&, RankImport*)>& write);

// "[0, 1, 2]".
std::string GroupText(const std::vector<int>& ranks);

// Rounds a duration to whole microseconds carrying the remainder, so that the sum of a run of
// durations stays within half a microsecond of the exact sum (`carry_ns` keeps the remainder).
int64_t RoundCarrying(int64_t ns, int64_t* carry_ns);

}  // namespace profile
}  // namespace orrery
