// Checks that the members of a communicator group issue the same collectives in the same order.
//
//   CollectiveOrder order;
//   Status s = order.Record(/*npu=*/3, /*group=*/0, /*group_size=*/8,
//                           {CollectiveType::kAllReduce, 1 << 20, -1}, "node 12 'grad_sync'");
//
// Messages of a collective are matched by the position of the collective in each NPU's sequence
// for the group (as in ASTRA-sim), so members that disagree about the k-th collective would
// exchange messages that never match (a hang) or match the wrong ones (a wrong number). The first
// NPU to reach position k sets what it must be; every other member is compared with it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "system/system_params.h"

namespace orrery {

struct CollectiveSignature {
  CollectiveType type = CollectiveType::kAllReduce;
  uint64_t size = 0;  // ignored for a barrier
  int root = -1;      // broadcast, reduce, gather, scatter only
  // The network dimensions it runs on (the trace's involved_dim, one bool per dimension);
  // empty = every dimension.
  std::vector<bool> dims;
};

class CollectiveOrder {
 public:
  // NPU `npu` issues its next collective in `group` (0 = all NPUs) of `group_size` members.
  // An error names both NPUs, both nodes (`label`) and what each issued.
  Status Record(int npu, int group, int group_size, const CollectiveSignature& sig,
                const std::string& label);
  // Collectives some members of a group have issued and others not (yet), one line each, for
  // the report of a run that cannot finish. `members(group)` lists a group's NPUs.
  std::vector<std::string> DescribeIncomplete(
      const std::function<std::vector<int>(int group)>& members, int max_items) const;
  // How messages name a group ("all NPUs", "communicator group 3"); a run that places traces
  // (--jobs, --replicate-trace) names them in its users' words instead.
  void set_group_namer(std::function<std::string(int group)> namer) { namer_ = std::move(namer); }
  std::string GroupName(int group) const;

 private:
  struct Entry {
    CollectiveSignature sig;
    int npu;            // the first NPU that reached this position
    std::string label;  // its node
    int seen;           // members that have reached it
  };
  struct Sequence {
    uint64_t first = 0;         // position of entries.front()
    std::deque<Entry> entries;  // positions still awaited by some member
  };
  std::map<int, Sequence> groups_;
  std::map<std::pair<int, int>, uint64_t> next_;  // (group, npu) -> its next position
  std::function<std::string(int group)> namer_;
};

}  // namespace orrery
