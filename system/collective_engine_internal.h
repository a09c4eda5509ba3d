// What the files of NpuSystem's collective engine share (collective_engine.cc, start_collective.cc,
// system_layer.cc): the implementation lists' names and the checks of an algorithm against the
// dimension it runs on. Internal to //system:system.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "system/collective_engine.h"

namespace orrery::engine_internal {

// Stream's events after a hand-off: done, done and to reduce (size << 2 | this), reduced.
enum StreamEvent : uint64_t { kHandOffDone = 0, kHandOffThenReduce = 1, kReduceDone = 2 };
// Stream::OnMessage cookies: a receive completed (0) or a notified send arrived.
constexpr uint64_t kSendArrived = 1;

// The index of a native collective's implementation list (kNative*), or -1.
int NativeIndex(CollectiveType t);
// The system config's key of that list ("all-reduce-implementation").
const char* ImplKey(CollectiveType t);
// An algorithm as the system config names it.
const char* AlgorithmName(AlgorithmKind k);

// Whether `algo` can run logical dimension `dim` (n NPUs, built of `block`) of a collective of
// type `type`; `split` = an all-reduce that runs reduce-scatter and all-gather there
// (localBWAware). `reordered`: split because the inter-dimension policy may put any dimension
// before the last.
Status CheckAlgorithm(const AlgorithmSpec& algo, CollectiveType type, bool split, int dim, int n,
                      BlockType block, bool reordered = false);

// The coordinates a communicator group takes in each network dimension when its members are
// exactly the Cartesian product of those sets (a sub-grid of the network); empty otherwise.
// `members` is sorted.
std::vector<std::vector<int>> SubGridCoordinates(const Topology& topo,
                                                 const std::vector<int>& members);

// The algorithm a hierarchical group's phase runs on network dimension `dim`.
AlgorithmSpec GroupDimAlgorithm(const std::vector<AlgorithmSpec>& impl, int dim);

}  // namespace orrery::engine_internal
