// The compute model: roofline for GPU compute nodes, replay of measured durations otherwise.
//
//   RooflineParams p{/*peak_perf_flops=*/989e12, /*local_mem_bw_bytes_per_s=*/3.35e12};
//   Time t = RooflineTime(p, /*num_ops=*/2e12, /*tensor_size=*/4e9);
//   Time r = ReplayTime(/*duration_micros=*/125);   // 125 us; 0 us -> 1 ns, as ASTRA-sim
//
// Roofline (ASTRA-sim's equations): intensity = num_ops / tensor_size [FLOP/B];
// perf = min(peak_perf, local_mem_bw * intensity) [FLOP/s]; time = num_ops / perf, truncated to
// whole ns. tensor_size == 0 costs nothing (ASTRA-sim skips such nodes).
//
// With a GPU model (system key gpu-model; GpuModel::Roofline) the rates are what the GPU reaches,
// not its datasheet's: peak = BF16 peak × gemm-efficiency-bf16, bandwidth = HBM ×
// memory-efficiency, and each node adds the model's kernel overhead: time = num_ops / perf +
// kernel_overhead.
#pragma once

#include <cstdint>

#include "common/units.h"

namespace orrery {

struct RooflineParams {
  double peak_perf_flops = 0;           // peak-perf (TFLOPS) * 1e12
  double local_mem_bw_bytes_per_s = 0;  // local-mem-bw (GB/s, decimal) * 1e9
  double kernel_overhead_ns = 0;        // added to every node it times (0: ASTRA-sim's roofline)
};

// Whether the node is memory-bound under these parameters.
bool MemoryBound(const RooflineParams& p, uint64_t num_ops, uint64_t tensor_size);

Time RooflineTime(const RooflineParams& p, uint64_t num_ops, uint64_t tensor_size);

// A recorded duration: duration_micros * 1000 ns, with 0 replayed as 1 ns (ASTRA-sim).
Time ReplayTime(uint64_t duration_micros);

}  // namespace orrery
