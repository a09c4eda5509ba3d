#include "workload/critical_path.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace orrery {
namespace {

struct JoinRef {
  int npu;
  uint32_t node;
  Time joined;
};

// The k-th collective of a communicator group, with its lowest member: the same collective on
// every member (a world call confined to parts of the machine is one per part).
using CollectiveId = std::tuple<int, uint64_t, int>;
// A point-to-point message: (source, destination, tag, bytes).
using MessageId = std::tuple<int, int, int64_t, uint64_t>;

class Walker {
 public:
  explicit Walker(const std::vector<CriticalPathNpu>& npus)
      : npus_(npus), index_(npus.size()), joins_(npus.size()), receives_(npus.size()) {
    for (int n = 0; n < static_cast<int>(npus.size()); ++n) {
      if (npus[n].joins != nullptr) {
        std::map<int, uint64_t> position;
        for (const CollectiveJoin& j : *npus[n].joins) {
          const CollectiveId id{j.group, position[j.group]++, j.first};
          joins_[n].emplace(j.node, std::make_pair(j.joined, id));
          members_[id].push_back(JoinRef{n, j.node, j.joined});
        }
      }
      if (npus[n].point_to_point != nullptr) {
        // The k-th send of a message id is received by the k-th receive of it.
        std::map<MessageId, size_t> received;
        for (const PointToPoint& m : *npus[n].point_to_point) {
          if (m.send) {
            sends_[MessageId{n, m.peer, m.tag, m.bytes}].push_back(m.node);
          } else {
            const MessageId id{m.peer, n, m.tag, m.bytes};
            receives_[n].emplace(m.node, std::make_pair(id, received[id]++));
          }
        }
      }
    }
  }

  std::vector<PathSegment> Walk() {
    // Each collective's members by the time they joined it; among equal times the lowest NPU
    // last, so that it is the one found.
    for (auto& [id, joins] : members_) {
      std::sort(joins.begin(), joins.end(), [](const JoinRef& a, const JoinRef& b) {
        return a.joined != b.joined ? a.joined < b.joined : a.npu > b.npu;
      });
    }
    std::vector<PathSegment> path;
    int npu = -1;
    for (int n = 0; n < static_cast<int>(npus_.size()); ++n) {
      if (npus_[n].activities == nullptr || npus_[n].activities->empty()) continue;
      if (npu < 0 || npus_[npu].finish < npus_[n].finish) npu = n;
    }
    if (npu < 0) return path;
    const Activity* a = &npus_[npu].activities->back();
    Time hi = a->end;
    // Each step goes to a node that ended earlier on the same NPU, or strictly back in time to
    // another NPU: it ends. The bound only guards against a broken record.
    size_t steps = 0, bound = 1;
    for (const CriticalPathNpu& n : npus_) bound += n.activities ? 2 * n.activities->size() : 0;
    for (; a != nullptr; ++steps) {
      ORRERY_CHECK(steps <= bound, "the critical path does not reach the start of the run");
      PathSegment seg;
      seg.npu = npu;
      seg.node = a->node;
      seg.track = a->track;
      seg.end = hi;
      const Activity* next = nullptr;
      int next_npu = npu;
      if (auto j = joins_[npu].find(a->node); j != joins_[npu].end()) {
        // The member that joined last before this NPU's part ended (the part could not end
        // before it joined; one that joined later, as after a broadcast's root had sent, was
        // not waited for): go on from there when it joined after this NPU.
        const Time joined = j->second.first;
        const std::vector<JoinRef>& joins = members_.at(j->second.second);
        auto after = std::lower_bound(joins.begin(), joins.end(), a->end,
                                      [](const JoinRef& r, Time t) { return r.joined < t; });
        if (after != joins.begin() && std::prev(after)->joined > joined) {
          const JoinRef& latest = *std::prev(after);
          seg.start = latest.joined;
          seg.link = PathLink::kCollective;
          next_npu = latest.npu;
          next = Find(latest.npu, latest.node);
        }
      } else if (auto r = receives_[npu].find(a->node); r != receives_[npu].end()) {
        const auto& [id, k] = r->second;
        auto s = sends_.find(id);
        const int from = std::get<0>(id);
        const Activity* send =
            s != sends_.end() && k < s->second.size() ? Find(from, s->second[k]) : nullptr;
        if (send != nullptr && send->start > a->start) {
          // Its message was sent after it was posted: go on from the send.
          seg.start = send->start;
          seg.link = PathLink::kMessage;
          next_npu = from;
          next = send;
        }
      }
      if (next == nullptr) {
        seg.start = a->start;
        seg.link = a->link;
        if (a->after != kNoNode) next = Find(npu, a->after);
      }
      if (next != nullptr) {
        seg.from_npu = next_npu;
        seg.from_node = next->node;
      }
      if (seg.end > seg.start) path.push_back(seg);
      hi = seg.start;
      npu = next_npu;
      a = next;
    }
    std::reverse(path.begin(), path.end());
    return path;
  }

 private:
  // The activity of `node` on `npu`, or nullptr.
  const Activity* Find(int npu, uint32_t node) {
    if (npus_[npu].activities == nullptr) return nullptr;
    std::unordered_map<uint32_t, size_t>& index = index_[npu];
    const std::vector<Activity>& acts = *npus_[npu].activities;
    if (index.empty()) {
      for (size_t i = 0; i < acts.size(); ++i) index.emplace(acts[i].node, i);
    }
    auto it = index.find(node);
    return it == index.end() ? nullptr : &acts[it->second];
  }

  const std::vector<CriticalPathNpu>& npus_;
  std::vector<std::unordered_map<uint32_t, size_t>> index_;  // built when first needed
  // Per NPU: each collective node's join time and which collective it is.
  std::vector<std::unordered_map<uint32_t, std::pair<Time, CollectiveId>>> joins_;
  std::map<CollectiveId, std::vector<JoinRef>> members_;  // each collective's members' joins
  // Per NPU: each receive node's message and its ordinal among that message's receives.
  std::vector<std::unordered_map<uint32_t, std::pair<MessageId, size_t>>> receives_;
  std::map<MessageId, std::vector<uint32_t>> sends_;  // send nodes of each message, in order
};

}  // namespace

std::vector<PathSegment> FindCriticalPath(const std::vector<CriticalPathNpu>& npus) {
  return Walker(npus).Walk();
}

}  // namespace orrery
