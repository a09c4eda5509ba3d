#include "compute/gpu_model.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace orrery {
namespace {

GpuModel Simple() {
  GpuModel g;
  g.peak_tflops_bf16 = 100;
  g.peak_tflops_fp8 = 200;
  g.memory_bandwidth_gbps = 1000;
  g.memory_efficiency = 0.5;
  g.sms = 4;
  g.tile_m = 128;
  g.tile_n = 128;
  g.gemm_efficiency_bf16 = 0.8;
  g.gemm_efficiency_fp8 = 0.6;
  g.attention_forward_efficiency = 0.5;
  g.attention_backward_efficiency = 0.25;
  g.kernel_overhead_us = 2;
  return g;
}

TEST(GpuModel, WaveQuantization) {
  const GpuModel g = Simple();
  // 512 × 256: 4 × 2 = 8 tiles on 4 SMs, two full waves.
  EXPECT_DOUBLE_EQ(g.WaveEfficiency(512, 256), 1.0);
  // 640 × 256: 5 × 2 = 10 tiles, 3 waves of 4: 10/12.
  EXPECT_DOUBLE_EQ(g.WaveEfficiency(640, 256), 10.0 / 12.0);
  // One tile partly filled still takes one SM of a wave: 1/4.
  EXPECT_DOUBLE_EQ(g.WaveEfficiency(1, 1), 0.25);
}

TEST(GpuModel, GemmIsComputeOrMemoryBoundPlusOverhead) {
  const GpuModel g = Simple();
  // 512 × 4096 × 256, two full waves: 2mkn / (100e12 × 0.8) = 1.07374e9 / 8e13 s.
  const double flops = 2.0 * 512 * 4096 * 256;
  EXPECT_NEAR(g.GemmSeconds(512, 4096, 256, Precision::kBf16), flops / 8e13 + 2e-6, 1e-15);
  // FP8: 200e12 × 0.6.
  EXPECT_NEAR(g.GemmSeconds(512, 4096, 256, Precision::kFp8), flops / 1.2e14 + 2e-6, 1e-15);
  // A thin product is memory-bound: 128 × 128 × 128 at k = 128 moves 3 × 128² × 2 bytes at
  // 1000e9 × 0.5 B/s = 196.6 ns, against 4.19e6 FLOPs / (1e14 × 0.8 × 1/4) = 209.7 ns.
  const double compute = 2.0 * 128 * 128 * 128 / (1e14 * 0.8 * 0.25);
  const double memory = 3.0 * 128 * 128 * 2 / 5e11;
  EXPECT_NEAR(g.GemmSeconds(128, 128, 128, Precision::kBf16), std::max(compute, memory) + 2e-6,
              1e-15);
  // k = 1, an outer product: memory-bound.
  EXPECT_NEAR(g.GemmSeconds(4096, 1, 4096, Precision::kBf16),
              (4096.0 + 4096 + 4096.0 * 4096) * 2 / 5e11 + 2e-6, 1e-15);
}

TEST(GpuModel, AttentionAndMemory) {
  const GpuModel g = Simple();
  EXPECT_NEAR(g.AttentionSeconds(1e12, false), 1e12 / 5e13 + 2e-6, 1e-15);
  EXPECT_NEAR(g.AttentionSeconds(1e12, true), 1e12 / 2.5e13 + 2e-6, 1e-15);
  EXPECT_NEAR(g.MemorySeconds(1e9, 3), 1e9 / 5e11 + 6e-6, 1e-15);
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The roofline's rates: BF16 peak 100 TFLOPS × 0.8, HBM 1000 GB/s × 0.5, 2 us per kernel.
TEST(GpuModel, RooflineRatesAreWhatTheGpuReaches) {
  const RooflineParams p = Simple().Roofline();
  EXPECT_DOUBLE_EQ(p.peak_perf_flops, 80e12);
  EXPECT_DOUBLE_EQ(p.local_mem_bw_bytes_per_s, 500e9);
  EXPECT_DOUBLE_EQ(p.kernel_overhead_ns, 2000);
  // 8e9 FLOP over 1e6 B (compute-bound): 8e9 / 8e13 s = 100 us, + 2 us.
  EXPECT_EQ(RooflineTime(p, 8000000000ull, 1000000ull), Time::FromNs(102000));
}

TEST(GpuModel, LoadsAFileAndNamesEveryBadKey) {
  const std::string good = WriteTemp("good.yaml",
                                     "name: test\npeak-tflops-bf16: 100\nmemory-bandwidth-gbps: "
                                     "1000\nsms: 4\ngemm-efficiency-bf16: 0.8\n");
  StatusOr<GpuModel> g = LoadGpuModel(good);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->name, "test");
  EXPECT_EQ(g->sms, 4);
  EXPECT_DOUBLE_EQ(g->gemm_efficiency_bf16, 0.8);

  const std::string bad =
      WriteTemp("bad.yaml",
                "peak-tflops-bf16: 100\nmemory-bandwidth-gbps: 1000\ngemm-efficiency-bf16: 1.5\n"
                "sm: 4\n");
  StatusOr<GpuModel> b = LoadGpuModel(bad);
  ASSERT_FALSE(b.ok());
  const std::string m = b.status().message();
  EXPECT_NE(m.find("gemm-efficiency-bf16"), std::string::npos) << m;
  EXPECT_NE(m.find("1.5"), std::string::npos) << m;
  EXPECT_NE(m.find("'sm'"), std::string::npos) << m;
  EXPECT_NE(m.find("bad.yaml"), std::string::npos) << m;

  const std::string missing = WriteTemp("missing.yaml", "sms: 4\n");
  StatusOr<GpuModel> n = LoadGpuModel(missing);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("peak-tflops-bf16"), std::string::npos);
}

}  // namespace
}  // namespace orrery
