// A physical model of one GPU's compute, for the kernels of a transformer's training step:
// tensor-core GEMMs whose efficiency depends on their shape and datatype, fused attention
// (FlashAttention) or the unfused kind, memory-bound work at the memory bandwidth actually
// reached, and a fixed overhead per kernel. Each constant comes from a public specification or a
// public measurement; a machine profile's `gpu.yaml` holds them and its README cites them.
//
//   StatusOr<GpuModel> g = LoadGpuModel("configs/machines/dgx-h100-ib/gpu.yaml");
//   double s = g->GemmSeconds(/*m=*/8192, /*k=*/8192, /*n=*/3584, Precision::kBf16);
//   double a = g->AttentionSeconds(/*flops=*/1.1e12, /*backward=*/false);
//   double e = g->MemorySeconds(/*bytes=*/6.7e8);
//
// GEMM X[m×k]·W[k×n] (2mkn FLOPs): the output is cut into tiles of tile_m × tile_n, one per
// thread block, that run in waves of `sms` at a time (NVIDIA, "Matrix Multiplication Background",
// tile and wave quantization):
//   tiles = ⌈m/tile_m⌉·⌈n/tile_n⌉,  waves = ⌈tiles/sms⌉,  wave = tiles / (waves·sms)
//   compute = 2mkn / (peak(precision) · gemm_efficiency(precision) · wave)
//   memory  = (mk + kn + mn)·bytes(precision) / (memory_bandwidth · memory_efficiency)
//   time    = max(compute, memory) + kernel_overhead
// gemm_efficiency is the measured best large GEMM's share of the datasheet peak, divided by that
// shape's own wave factor (so a full wave runs at it).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "compute/roofline.h"

namespace orrery {

enum class Precision { kBf16, kFp8 };

struct GpuModel {
  std::string name;
  double peak_tflops_bf16 = 0;         // dense tensor-core peak, BF16/FP16 (datasheet)
  double peak_tflops_fp8 = 0;          // dense FP8 (datasheet); 0 = no FP8 tensor cores
  double memory_bandwidth_gbps = 0;    // HBM, 1e9 B/s (datasheet)
  double memory_efficiency = 1;        // share of it a streaming kernel reaches (measured)
  int64_t sms = 1;                     // streaming multiprocessors (datasheet)
  int64_t tile_m = 128, tile_n = 256;  // a GEMM thread block's output tile
  double gemm_efficiency_bf16 = 1;     // a full wave's share of peak (measured)
  double gemm_efficiency_fp8 = 1;
  // FlashAttention's share of the BF16 peak, forward and backward (measured on causal attention
  // with its FLOPs counted causally: half the s² products).
  double attention_forward_efficiency = 1;
  double attention_backward_efficiency = 1;
  double kernel_overhead_us = 0;  // per kernel: launch and the tail between dependent kernels

  double PeakFlops(Precision p) const;
  // The share of a full wave that a GEMM with an m × n output keeps.
  double WaveEfficiency(int64_t m, int64_t n) const;
  // One GEMM X[m×k]·W[k×n] (`batch` of them side by side, as a batched GEMM), kernel overhead
  // included.
  double GemmSeconds(int64_t m, int64_t k, int64_t n, Precision p, int64_t batch = 1) const;
  // Fused attention of `flops` FLOPs as counted causally (what the kernel computes), one kernel.
  double AttentionSeconds(double flops, bool backward) const;
  // Memory-bound work moving `bytes`, in `kernels` kernels.
  double MemorySeconds(double bytes, int kernels = 1) const;
  // The roofline's rates for a trace's compute nodes, which carry FLOPs and bytes but no shape
  // or datatype (compute/roofline.h): a full wave of BF16 GEMM tiles (peak × gemm-efficiency-bf16),
  // streaming at the bandwidth reached, the kernel overhead per node. What it cannot see: tile
  // and wave quantization, FP8, attention's own rate (generate-llm --gpu-model applies them).
  RooflineParams Roofline() const;
};

// Reads a gpu.yaml (keys in compute/README.md); every problem named with its file, line and key.
StatusOr<GpuModel> LoadGpuModel(const std::string& path);

}  // namespace orrery
