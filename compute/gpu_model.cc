#include "compute/gpu_model.h"

#include <algorithm>
#include <cmath>

#include "config/schema.h"

namespace orrery {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

const Schema<GpuModel>& GpuSchema() {
  static const Schema<GpuModel> schema = [] {
    Schema<GpuModel> s;
    s.String("name", &GpuModel::name).Help("the GPU, as its datasheet names it");
    s.Number("peak-tflops-bf16", &GpuModel::peak_tflops_bf16)
        .Required()
        .Min(0.001)
        .Max(1e6)
        .Unit("TFLOPS")
        .Help("dense BF16 tensor-core peak (datasheet)");
    s.Number("peak-tflops-fp8", &GpuModel::peak_tflops_fp8)
        .Min(0)
        .Max(1e6)
        .Unit("TFLOPS")
        .Help("dense FP8 tensor-core peak (datasheet); 0: none (--fp8 is then an error)");
    s.Number("memory-bandwidth-gbps", &GpuModel::memory_bandwidth_gbps)
        .Required()
        .Min(0.001)
        .Max(1e6)
        .Unit("GB/s")
        .Help("HBM bandwidth (datasheet)");
    s.Number("memory-efficiency", &GpuModel::memory_efficiency)
        .Min(0.01)
        .Max(1)
        .Help("share of the memory bandwidth a streaming kernel reaches (measured)");
    s.Integer("sms", &GpuModel::sms).Min(1).Max(100000).Help("streaming multiprocessors");
    s.Integer("gemm-tile-m", &GpuModel::tile_m).Min(1).Max(4096).Help("GEMM output tile rows");
    s.Integer("gemm-tile-n", &GpuModel::tile_n).Min(1).Max(4096).Help("GEMM output tile columns");
    s.Number("gemm-efficiency-bf16", &GpuModel::gemm_efficiency_bf16)
        .Min(0.01)
        .Max(1)
        .Help("a full wave of BF16 GEMM tiles' share of the BF16 peak (measured)");
    s.Number("gemm-efficiency-fp8", &GpuModel::gemm_efficiency_fp8)
        .Min(0.01)
        .Max(1)
        .Help("the same for FP8 GEMMs, of the FP8 peak (measured)");
    s.Number("attention-forward-efficiency", &GpuModel::attention_forward_efficiency)
        .Min(0.01)
        .Max(1)
        .Help("fused attention's forward share of the BF16 peak, FLOPs counted causally");
    s.Number("attention-backward-efficiency", &GpuModel::attention_backward_efficiency)
        .Min(0.01)
        .Max(1)
        .Help("and its backward's (2.5 times the forward's FLOPs)");
    s.Number("kernel-overhead-us", &GpuModel::kernel_overhead_us)
        .Min(0)
        .Max(1e4)
        .Unit("us")
        .Help("per kernel: launch and the gap between dependent kernels");
    return s;
  }();
  return schema;
}

}  // namespace

double GpuModel::PeakFlops(Precision p) const {
  return (p == Precision::kFp8 ? peak_tflops_fp8 : peak_tflops_bf16) * 1e12;
}

double GpuModel::WaveEfficiency(int64_t m, int64_t n) const {
  if (m <= 0 || n <= 0) return 1;
  const int64_t tiles = CeilDiv(m, tile_m) * CeilDiv(n, tile_n);
  const int64_t waves = CeilDiv(tiles, sms);
  return static_cast<double>(tiles) / static_cast<double>(waves * sms);
}

double GpuModel::GemmSeconds(int64_t m, int64_t k, int64_t n, Precision p, int64_t batch) const {
  const double flops = 2.0 * static_cast<double>(m) * k * n * batch;
  const double efficiency = (p == Precision::kFp8 ? gemm_efficiency_fp8 : gemm_efficiency_bf16) *
                            WaveEfficiency(m * batch, n);
  const double element = p == Precision::kFp8 ? 1 : 2;
  const double bytes =
      (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n) *
      element * batch;
  const double compute = flops / (PeakFlops(p) * efficiency);
  const double memory = bytes / (memory_bandwidth_gbps * 1e9 * memory_efficiency);
  return std::max(compute, memory) + kernel_overhead_us * 1e-6;
}

double GpuModel::AttentionSeconds(double flops, bool backward) const {
  const double efficiency = backward ? attention_backward_efficiency : attention_forward_efficiency;
  return flops / (peak_tflops_bf16 * 1e12 * efficiency) + kernel_overhead_us * 1e-6;
}

double GpuModel::MemorySeconds(double bytes, int kernels) const {
  return bytes / (memory_bandwidth_gbps * 1e9 * memory_efficiency) +
         kernels * kernel_overhead_us * 1e-6;
}

RooflineParams GpuModel::Roofline() const {
  RooflineParams p;
  p.peak_perf_flops = peak_tflops_bf16 * 1e12 * gemm_efficiency_bf16;
  p.local_mem_bw_bytes_per_s = memory_bandwidth_gbps * 1e9 * memory_efficiency;
  p.kernel_overhead_ns = kernel_overhead_us * 1e3;
  return p;
}

StatusOr<GpuModel> LoadGpuModel(const std::string& path) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  GpuModel g;
  Status s = GpuSchema().Apply(*file, &g);
  if (!s.ok()) return s;
  if (g.name.empty()) g.name = path;
  return g;
}

}  // namespace orrery
