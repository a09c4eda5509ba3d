// Custom (MSCCL-style) collectives: a collective whose every rank runs its own small Chakra ET of
// COMM_SEND, COMM_RECV and COMP nodes ("<prefix>.<rank>.et"), as ASTRA-sim's
// `*-implementation-custom` and `per-node-custom-implementation` (see README.md, "Custom
// collectives").
//
//   StatusOr<std::shared_ptr<const CustomAlgorithm>> a = CustomAlgorithm::Load("algos/ring_ar");
//   layer.custom().SetForType(CollectiveType::kAllReduce, *a);   // every all-reduce
//   layer.custom().SetForNode(/*chakra node id=*/42, *a);        // or only node 42, any type
//
// Rank r of the algorithm is the r-th member of the collective's communicator group (NPU r for
// all NPUs); comm_dst / comm_src of its sends and receives are algorithm ranks. A send completes
// when its message has arrived, a receive when its message is there; a COMP node takes
// duration_micros * 1000 ns (0 -> 1 ns). Every ready node is issued at once. The collective is
// done on an NPU when its rank's nodes are all done. Message sizes come from the algorithm: the
// workload node's comm_size is not used (as in ASTRA-sim), and there is no chunking.
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
#include "et_feeder/trace.h"
#include "system/system_params.h"

namespace orrery {

class CollectiveListener;
class SystemLayer;
struct CollectiveRequest;

class CustomAlgorithm {
 public:
  // Reads "<prefix>.0.et", "<prefix>.1.et", ... up to the first missing file and checks every
  // node (type, peers within the ranks, sizes). Errors name the file and node.
  static StatusOr<std::shared_ptr<const CustomAlgorithm>> Load(const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  int ranks() const { return static_cast<int>(ranks_.size()); }
  const et::Trace& rank(int r) const { return *ranks_[r]; }

 private:
  std::string prefix_;
  std::vector<std::unique_ptr<et::Trace>> ranks_;
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
