// What generate-llm's nodes cost on a physical GPU model (compute/gpu_model.h): the products,
// attention and memory-bound work of a transformer layer, per tensor-parallel rank and
// micro-batch. Used by llm_workload.cc when LlmConfig::gpu is set.
//
//   Work qkv = ...;                                  // a GEMM's FLOPs, bytes and shape
//   double s = GemmSeconds(config, qkv, GemmPass::kWeightGrad, /*fp8_capable=*/true);
//   Elementwise e = LayerElementwise(config, /*backward=*/false);
//
// Equations and the sources of the constants: et_feeder/README.md ("Physical compute").
#pragma once

#include <cstdint>

#include "et_feeder/llm_workload.h"

namespace orrery {
namespace et {

// A compute node's work: FLOPs, bytes, and for a GEMM X[m×k]·W[k×n] its shape (m = 0 otherwise).
struct Work {
  int64_t flops = 0;
  int64_t bytes = 0;
  int64_t m = 0, k = 0, n = 0;
};

// Ranks that hold a copy of a stage's weights for one tensor-parallel rank: dp × cp.
inline int64_t Replicas(const LlmConfig& c) { return c.dp * c.cp; }
// Tokens of a micro-batch one rank computes: b·s / cp.
inline int64_t RankTokens(const LlmConfig& c) { return c.micro_batch_size * c.seq_length / c.cp; }

// A forward GEMM's passes: forward X·W (m, k, n); the input gradient dY·Wᵀ (m, n, k); the weight
// gradient Xᵀ·dY (k, m, n); both backward products.
enum class GemmPass { kForward, kInputGrad, kWeightGrad, kBackward };
// Seconds of `w`'s pass on c.gpu; in FP8 when c.fp8 and `fp8_capable` (Transformer Engine's
// layers; not the LM head or the router).
double GemmSeconds(const LlmConfig& c, const Work& w, GemmPass pass, bool fp8_capable);
// Attention of one layer per rank and micro-batch (`w` as LayerWork's attention: FLOPs counted
// over the whole s² as Megatron's formula does), forward or backward, fused or unfused
// (LlmConfig::attention); `share` of it (context parallelism runs it in parts).
double AttentionSeconds(const LlmConfig& c, const Work& w, bool backward, double share = 1);

// Memory-bound work as bytes moved in a number of kernels.
struct Elementwise {
  double bytes = 0;
  int kernels = 0;
  double Seconds(const GpuModel& g) const { return g.MemorySeconds(bytes, kernels); }
};
// A layer's norms, activation, residual additions (and dropout on GPT). FP8's casts of the
// products' inputs are in the GPU model's FP8 GEMM efficiency (measured with them).
Elementwise LayerElementwise(const LlmConfig& c, bool backward);
// The LM head's cross entropy over the rank's share of the vocabulary (logits in FP32).
Elementwise HeadElementwise(const LlmConfig& c, int64_t padded_vocab, bool backward);

}  // namespace et
}  // namespace orrery
