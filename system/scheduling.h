// Scheduling policies of the system layer: which waiting chunk a dimension's queue serves next
// (intra-dimension) and in which order a chunk visits the dimensions (inter-dimension).
//
//   WaitingStream a{/*priority=*/3, /*phase_bytes=*/4096, /*phases_left=*/2};
//   if (ServedBefore(IntraDimensionPolicy::kSmallestFirst, a, b)) ...
//
//   InterDimensionScheduler inter(InterDimensionPolicy::kRoundRobin, ns_per_byte);
//   std::vector<int> order = inter.NextOrder(CollectiveType::kReduceScatter, false, chunk,
//                                            /*active=*/{0, 1}, /*sizes=*/{4, 8});
//
// The semantics (and when each policy helps) are in system/README.md, "Scheduling".
#pragma once

#include <cstdint>
#include <vector>

#include "system/system_params.h"

namespace orrery {

// What the intra-dimension policies look at in a waiting chunk stream.
struct WaitingStream {
  int priority = 0;          // from scheduling-policy (LIFO / FIFO / EXPLICIT): higher first
  uint64_t phase_bytes = 0;  // input size of the phase it waits to run
  int phases_left = 0;       // phases still to run, this one included
};

// True when `a` must be served strictly before `b`. Ties keep arrival order.
//   FIFO:                    higher priority first;
//   smallestFirst:           smaller phase_bytes first, then higher priority;
//   lessRemainingPhaseFirst: fewer phases_left first, then higher priority.
bool ServedBefore(IntraDimensionPolicy policy, const WaitingStream& a, const WaitingStream& b);

// Chooses each chunk's dimension order. One per NPU; every NPU sees the same sequence of
// collectives, so all compute the same orders without talking to each other.
class InterDimensionScheduler {
 public:
  // ns_per_byte[d]: serialization cost of logical dimension d (1 / link bandwidth), used by
  // offlineGreedy's load estimate.
  InterDimensionScheduler(InterDimensionPolicy policy, std::vector<double> ns_per_byte);

  // The visiting order of the `active` dimensions (ascending ids, sizes[i] NPUs each) for the
  // next chunk of `chunk_bytes`. For an all-gather the order is the visiting order (ascending:
  // highest dimension first). For an all-reduce with localBWAware the chunk reduce-scatters over
  // order[0..k-2], all-reduces on order[k-1] and all-gathers back in reverse.
  std::vector<int> NextOrder(CollectiveType type, bool local_bw_aware, uint64_t chunk_bytes,
                             const std::vector<int>& active, const std::vector<int>& sizes);
  // The same, written into `*order` (its storage reused: one call per chunk).
  void NextOrder(CollectiveType type, bool local_bw_aware, uint64_t chunk_bytes,
                 const std::vector<int>& active, const std::vector<int>& sizes,
                 std::vector<int>* order);

  // offlineGreedy's accumulated load per dimension (ns of serialization), for tests.
  const std::vector<double>& load() const { return load_; }

 private:
  InterDimensionPolicy policy_;
  std::vector<double> ns_per_byte_;
  std::vector<double> load_;
  uint64_t chunks_ = 0;  // roundRobin rotation counter
};

}  // namespace orrery
