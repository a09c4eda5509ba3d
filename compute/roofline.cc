#include "compute/roofline.h"

#include <algorithm>
#include <cstdint>

namespace orrery {

namespace {

double Perf(const RooflineParams& p, uint64_t num_ops, uint64_t tensor_size) {
  const double intensity = static_cast<double>(num_ops) / static_cast<double>(tensor_size);
  return std::min(p.local_mem_bw_bytes_per_s * intensity, p.peak_perf_flops);
}

}  // namespace

bool MemoryBound(const RooflineParams& p, uint64_t num_ops, uint64_t tensor_size) {
  if (tensor_size == 0) return false;
  const double intensity = static_cast<double>(num_ops) / static_cast<double>(tensor_size);
  return p.local_mem_bw_bytes_per_s * intensity < p.peak_perf_flops;
}

Time RooflineTime(const RooflineParams& p, uint64_t num_ops, uint64_t tensor_size) {
  if (tensor_size == 0 || num_ops == 0) return Time::Zero();
  const double perf = Perf(p, num_ops, tensor_size);
  if (!(perf > 0)) return Time::Infinite();
  const double ns = static_cast<double>(num_ops) / perf * 1e9 + p.kernel_overhead_ns;
  return Time::FromNsTruncated(ns);
}

Time ReplayTime(uint64_t duration_micros) {
  if (duration_micros == 0) return Time::FromNs(1);
  if (duration_micros > static_cast<uint64_t>(INT64_MAX)) return Time::Infinite();
  return Time::FromNs(static_cast<int64_t>(duration_micros)) * 1000;  // saturates
}

}  // namespace orrery
