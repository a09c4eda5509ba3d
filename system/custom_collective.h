// Custom (MSCCL-style) collectives: a collective whose every rank runs its own small schedule of
// sends, receives and computes, as ASTRA-sim's `*-implementation-custom` and
// `per-node-custom-implementation` (see README.md, "Custom collectives"). The system layer takes
// the schedule as plain data; the workload layer builds it from the per-rank Chakra ETs
// (workload/custom_schedule.h: LoadCustomAlgorithm("algos/ring_ar")).
//
//   std::shared_ptr<const CustomAlgorithm> a = ...;               // LoadCustomAlgorithm
//   layer.custom().SetForType(CollectiveType::kAllReduce, a);    // every all-reduce
//   layer.custom().SetForNode(/*chakra node id=*/42, a);         // or only node 42, any type
//
// Rank r of the algorithm is the r-th member of the collective's communicator group (NPU r for
// all NPUs); the peers of its sends and receives are algorithm ranks. A send completes when its
// message has arrived, a receive when its message is there; a compute step takes its duration.
// Every ready step is issued at once, lowest index first. The collective is done on an NPU when
// its rank's steps are all done. Message sizes come from the algorithm: the workload node's
// comm_size is not used (as in ASTRA-sim), and there is no chunking.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "system/system_params.h"

namespace orrery {

class CollectiveListener;
class SystemLayer;
struct CollectiveRequest;

// One rank's part of a custom collective: its steps in issue order (a step's index is its
// position), each with the steps it waits for.
struct CustomRankSchedule {
  enum class Kind : uint8_t { kSend, kRecv, kCompute };
  struct Step {
    Kind kind = Kind::kCompute;
    int peer = 0;        // send: the destination rank; receive: the source rank
    uint64_t bytes = 0;  // send, receive
    int64_t tag = 0;     // send, receive: tells the messages of one instance apart (< 2^24)
    Time duration;       // compute
    uint64_t id = 0;     // the step's name in messages (the ET's node id)
  };
  std::string source;  // where it came from, for messages (the rank's ET file)
  std::vector<Step> steps;
  // Per step, the steps it waits for and the steps that wait for it (indexes, ascending).
  std::vector<std::vector<uint32_t>> parents;
  std::vector<std::vector<uint32_t>> children;
};

class CustomAlgorithm {
 public:
  // `ranks` must be checked already (every peer a rank of the algorithm but the step's own).
  CustomAlgorithm(std::string prefix, std::vector<CustomRankSchedule> ranks)
      : prefix_(std::move(prefix)), ranks_(std::move(ranks)) {}

  const std::string& prefix() const { return prefix_; }
  int ranks() const { return static_cast<int>(ranks_.size()); }
  const CustomRankSchedule& rank(int r) const { return ranks_[r]; }

 private:
  std::string prefix_;
  std::vector<CustomRankSchedule> ranks_;
};

class CustomRun;

// Which collectives run custom algorithms, and the runs in progress (owned by the SystemLayer).
class CustomCollectives {
 public:
  explicit CustomCollectives(SystemLayer& layer);
  ~CustomCollectives();

  // All collectives of this type (ASTRA-sim: all-reduce, reduce-scatter, all-gather, all-to-all).
  void SetForType(CollectiveType type, std::shared_ptr<const CustomAlgorithm> algorithm);
  // The collective node with this Chakra id, on every NPU, whatever its type (takes precedence).
  void SetForNode(uint64_t node_id, std::shared_ptr<const CustomAlgorithm> algorithm);

  // The algorithm for this request, or null for the built-in ones.
  const CustomAlgorithm* Find(const CollectiveRequest& req) const;
  // Starts NPU `npu`'s part of `req` with `algorithm`; `sequence` numbers the collectives of
  // its group alike on every member (NpuSystem::NextStreamId), which tells this one's messages
  // apart from every other's.
  Status Start(int npu, const CustomAlgorithm& algorithm, const CollectiveRequest& req,
               int sequence, CollectiveListener* listener, uint64_t token);
  // Custom collectives not finished, for deadlock reports.
  std::vector<std::string> DescribeActive(int npu) const;

 private:
  SystemLayer& layer_;
  std::map<CollectiveType, std::shared_ptr<const CustomAlgorithm>> by_type_;
  std::map<uint64_t, std::shared_ptr<const CustomAlgorithm>> by_node_;
  std::list<std::unique_ptr<CustomRun>> runs_;
  // Message-tag instances of the collectives under way: (group, sequence) -> a dense id (its
  // messages' tags are id * 2^24 + the ET's tag), and how many members have yet to start it;
  // forgotten when the last has.
  struct Instance {
    int64_t id = 0;
    int members_to_start = 0;
  };
  std::map<std::pair<int, int>, Instance> instances_;
  int64_t next_instance_ = 0;
};

}  // namespace orrery
