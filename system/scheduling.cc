#include "system/scheduling.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace orrery {

bool ServedBefore(IntraDimensionPolicy policy, const WaitingStream& a, const WaitingStream& b) {
  switch (policy) {
    case IntraDimensionPolicy::kFifo:
      break;
    case IntraDimensionPolicy::kSmallestFirst:
      if (a.phase_bytes != b.phase_bytes) return a.phase_bytes < b.phase_bytes;
      break;
    case IntraDimensionPolicy::kLessRemainingPhaseFirst:
      if (a.phases_left != b.phases_left) return a.phases_left < b.phases_left;
      break;
  }
  return a.priority > b.priority;
}

InterDimensionScheduler::InterDimensionScheduler(InterDimensionPolicy policy,
                                                 std::vector<double> ns_per_byte)
    : policy_(policy), ns_per_byte_(std::move(ns_per_byte)), load_(ns_per_byte_.size(), 0.0) {}

std::vector<int> InterDimensionScheduler::NextOrder(CollectiveType type, bool local_bw_aware,
                                                    uint64_t chunk_bytes,
                                                    const std::vector<int>& active,
                                                    const std::vector<int>& sizes) {
  std::vector<int> order;
  NextOrder(type, local_bw_aware, chunk_bytes, active, sizes, &order);
  return order;
}

void InterDimensionScheduler::NextOrder(CollectiveType type, bool local_bw_aware,
                                        uint64_t chunk_bytes, const std::vector<int>& active,
                                        const std::vector<int>& sizes, std::vector<int>* out) {
  const bool gather = type == CollectiveType::kAllGather;
  std::vector<int>& order = *out;
  order.assign(active.begin(), active.end());  // ascending
  if (gather) std::reverse(order.begin(), order.end());
  const size_t k = order.size();
  if (k < 2 || policy_ == InterDimensionPolicy::kAscending) return;

  if (policy_ == InterDimensionPolicy::kRoundRobin) {
    const size_t r = static_cast<size_t>(chunks_++ % k);
    std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(r), order.end());
    return;
  }

  // offlineGreedy: the dimension with the least accumulated load takes the biggest share of
  // this chunk (first for a reduce-scatter-like pass, last for an all-gather).
  auto size_of = [&](int d) {
    return sizes[std::find(active.begin(), active.end(), d) - active.begin()];
  };
  auto load = [&](int d) { return d < static_cast<int>(load_.size()) ? load_[d] : 0.0; };
  if (gather) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return load(a) != load(b) ? load(a) > load(b) : a > b; });
  } else {
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return load(a) != load(b) ? load(a) < load(b) : a < b; });
  }
  // Serialization time each dimension spends on this chunk: bytes a ring member sends there
  // times the dimension's ns per byte.
  double c = static_cast<double>(chunk_bytes);
  for (int d : order) {
    if (d >= static_cast<int>(load_.size())) continue;
    const double p = size_of(d);
    switch (type) {
      case CollectiveType::kAllGather:
        load_[d] += c * (p - 1) * ns_per_byte_[d];
        c *= p;
        break;
      case CollectiveType::kReduceScatter:
        load_[d] += c * (p - 1) / p * ns_per_byte_[d];
        c /= p;
        break;
      case CollectiveType::kAllReduce:
        // Reduce-scatter plus all-gather (or an all-reduce) of c on this dimension.
        load_[d] += 2 * c * (p - 1) / p * ns_per_byte_[d];
        if (local_bw_aware) c /= p;
        break;
      default:  // all-to-all: the chunk keeps its size on every dimension
        load_[d] += c * (p - 1) / p * ns_per_byte_[d];
        break;
    }
  }
}

}  // namespace orrery
