// What the system layer needs to know, independent of how it was configured.
//
//   SystemParams p;
//   p.preferred_dataset_splits = 4;
//   p.impl[CollIndex(CollectiveType::kAllReduce)] = {AlgorithmSpec{AlgorithmKind::kRing}};
//
// The command line fills this from the system YAML/JSON (config/system_config.h) and the flags.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

// Chakra's CollectiveCommType values.
enum class CollectiveType : int {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

const char* CollectiveTypeName(CollectiveType t);

enum class SchedulingPolicy { kLifo, kFifo, kExplicit };

// intra-dimension-scheduling: which waiting chunk a dimension's queue serves next.
enum class IntraDimensionPolicy { kFifo, kSmallestFirst, kLessRemainingPhaseFirst };

// inter-dimension-scheduling: the order in which a chunk visits the dimensions.
enum class InterDimensionPolicy { kAscending, kOfflineGreedy, kRoundRobin };

// group-collectives: how a communicator group smaller than the machine runs all-reduce,
// reduce-scatter, all-gather and all-to-all (system/README.md, "Communicator groups"): kFlat =
// one ring over its sorted members (ASTRA-sim); kHierarchical = one phase per network dimension
// the group spans when it is a sub-grid of the network (else the flat ring).
enum class GroupCollectives { kFlat, kHierarchical };

// broadcast-reduce-algorithm: how broadcast and reduce move their data along the logical ring of
// members (system/README.md, "Collectives beyond ASTRA-sim"): kBinomialTree = a binomial tree
// rooted at the root, each chunk whole per message; kRing = NCCL's ring, a pipeline of slices
// along the ring from the root (broadcast) or to it (reduce).
enum class RootedAlgorithm { kBinomialTree, kRing };

enum class AlgorithmKind {
  kRing,
  kOneRing,
  kDirect,
  kOneDirect,
  kHalvingDoubling,
  kOneHalvingDoubling,
  kDoubleBinaryTree,
  kNvls,        // NVLink SHARP: in-switch reduction (nvls_algorithm.cc)
  kChannelRing  // NCCL's flat ring, rotated per channel (channel_ring_algorithm.cc)
};

struct AlgorithmSpec {
  AlgorithmKind kind = AlgorithmKind::kRing;
  int window = -1;  // direct<N>
};

// Whether an algorithm flattens the whole machine into one ring (the one* algorithms and NCCL's
// channel ring): a list entry of it spans every NPU, and later entries are never reached.
inline bool IsFlattened(AlgorithmKind k) {
  return k == AlgorithmKind::kOneRing || k == AlgorithmKind::kOneDirect ||
         k == AlgorithmKind::kOneHalvingDoubling || k == AlgorithmKind::kChannelRing;
}

// Index of the four natively scheduled collectives in per-collective tables.
enum NativeColl {
  kNativeAllReduce = 0,
  kNativeReduceScatter,
  kNativeAllGather,
  kNativeAllToAll,
  kNumNativeColl
};

// The LogGP shared bus (model-shared-bus; system/loggp.h).
struct LogGpParams {
  int64_t L = 0;                      // ns
  int64_t o = 0;                      // ns
  int64_t g = 0;                      // ns
  double G = 0;                       // ns per byte
  int64_t local_reduction_delay = 1;  // (size / 100) * this + 50 ns per reduction
};

struct SystemParams {
  SchedulingPolicy scheduling = SchedulingPolicy::kLifo;
  IntraDimensionPolicy intra_dimension = IntraDimensionPolicy::kFifo;
  InterDimensionPolicy inter_dimension = InterDimensionPolicy::kAscending;
  bool local_bw_aware = false;  // collective-optimization: localBWAware
  GroupCollectives group_collectives = GroupCollectives::kFlat;
  RootedAlgorithm rooted = RootedAlgorithm::kBinomialTree;  // broadcast-reduce-algorithm
  int active_chunks_per_dimension = 1;
  int preferred_dataset_splits = 1;
  // Every collective is cut into exactly preferred_dataset_splits equal chunks, its size rounded
  // up to a multiple of them, instead of ASTRA-sim's rule (a remainder is one more whole chunk).
  // Set when the network has lanes > 1: there that chunk would cross alone on one lane, a second
  // round at a lane's share of the bandwidth.
  bool whole_chunks = false;
  int64_t endpoint_delay_ns = 10;        // already multiplied by --injection-scale if given
  double local_mem_bw_bytes_per_ns = 0;  // local-mem-bw (GB/s decimal == bytes/ns)
  std::vector<int> queues_per_dim;       // --num-queues-per-dim, one entry per network dim
  std::array<std::vector<AlgorithmSpec>, kNumNativeColl> impl;  // per logical dimension
  bool rendezvous = false;                                      // --rendezvous-protocol
  // p2p-chunk-size: the workload's sends move in pieces of this many bytes (NCCL's p2p chunks;
  // Network::SendInPieces); 0 = whole messages, as ASTRA-sim.
  uint64_t p2p_chunk_bytes = 0;
  bool model_shared_bus = false;  // hand-offs over a LogGP bus instead of endpoint-delay
  LogGpParams loggp;
  double comm_scale = 1.0;  // --comm-scale: multiplies collective and p2p sizes
  // The system configuration's path, for messages ("" = unnamed).
  std::string config_path;
  // How messages name the configuration: its path, or "the system configuration".
  std::string ConfigName() const {
    return config_path.empty() ? "the system configuration" : config_path;
  }
};

}  // namespace orrery
