#include "et_feeder/llm_compute.h"

namespace orrery {
namespace et {

namespace {

Precision PrecisionOf(const LlmConfig& c, bool fp8_capable) {
  return c.fp8 && fp8_capable ? Precision::kFp8 : Precision::kBf16;
}

// Bytes of a softmax-family kernel's pass over one element of the unfused s² scores: forward,
// the scores written by Q·Kᵀ, read and written by the fused scale-mask-softmax, read and written
// by dropout with its one-byte mask, read by the product with V; backward twice that.
constexpr double kUnfusedScoreBytesPerElement = 6 * 2 + 1;

}  // namespace

double GemmSeconds(const LlmConfig& c, const Work& w, GemmPass pass, bool fp8_capable) {
  const GpuModel& g = *c.gpu;
  const Precision p = PrecisionOf(c, fp8_capable);
  switch (pass) {
    case GemmPass::kForward:
      return g.GemmSeconds(w.m, w.k, w.n, p);
    case GemmPass::kInputGrad:
      return g.GemmSeconds(w.m, w.n, w.k, p);
    case GemmPass::kWeightGrad:
      return g.GemmSeconds(w.k, w.m, w.n, p);
    case GemmPass::kBackward:
      return g.GemmSeconds(w.m, w.n, w.k, p) + g.GemmSeconds(w.k, w.m, w.n, p);
  }
  return 0;
}

double AttentionSeconds(const LlmConfig& c, const Work& w, bool backward, double share) {
  const GpuModel& g = *c.gpu;
  if (c.attention == Attention::kFlash) {
    // Causal: the kernel skips the masked half of the scores. Backward computes Q·Kᵀ again
    // and four more products: 2.5 times the forward's FLOPs (Dao 2023).
    const double causal = static_cast<double>(w.flops) / 2 * share;
    return g.AttentionSeconds(backward ? 2.5 * causal : causal, backward);
  }
  // Unfused: Q·Kᵀ and scores·V as batched GEMMs over every head of the rank and sequence of the
  // micro-batch, the whole s² computed; backward the four products of their gradients.
  const int64_t heads = c.heads / c.tp;
  const int64_t d = c.hidden / c.heads;
  const int64_t queries = c.seq_length / c.cp;
  const int64_t batch = c.micro_batch_size * heads;
  double t = g.GemmSeconds(queries, d, c.seq_length, Precision::kBf16, batch) +
             g.GemmSeconds(queries, c.seq_length, d, Precision::kBf16, batch);
  const double scores = static_cast<double>(batch) * queries * c.seq_length;
  double bytes = scores * kUnfusedScoreBytesPerElement;
  if (backward) {
    t *= 2;
    bytes *= 2;
  }
  return (t + g.MemorySeconds(bytes, backward ? 2 : 2)) * share;
}

Elementwise LayerElementwise(const LlmConfig& c, bool backward) {
  const double e = static_cast<double>(c.element_bytes);
  const double tokens = static_cast<double>(RankTokens(c));
  // Outside the tensor-parallel products a rank holds all of its tokens, or 1/tp of them with
  // sequence parallelism; every rank of a group repeats this work without it.
  const double outside = tokens / (c.sequence_parallel ? c.tp : 1);
  const double h = static_cast<double>(c.hidden);
  const double f = static_cast<double>(c.ffn_hidden) / c.tp;
  Elementwise w;
  // Two norms (read and write h), two residual additions (read two, write one); GPT's dropout
  // (fused with the bias and the addition) adds its one-byte mask.
  const bool dropout = c.mlp == Mlp::kGelu;
  w.bytes = outside * h * (2 * 2 * e + 2 * 3 * e + (dropout ? 2 : 0));
  w.kernels = 4;
  // The activation: GELU reads and writes f; SwiGLU reads the gate and the input, writes f.
  w.bytes += tokens * f * (c.mlp == Mlp::kSwiglu ? 3 : 2) * e;
  w.kernels += 1;
  if (backward) {
    // The adjoints read what the forward read and write the gradients: twice the bytes.
    w.bytes *= 2;
    w.kernels *= 2;
  }
  return w;
}

Elementwise HeadElementwise(const LlmConfig& c, int64_t padded_vocab, bool backward) {
  // Vocabulary-parallel cross entropy over the rank's V/tp logits of each token: the logits read
  // and converted to FP32 (e + 4), the maximum subtracted and exponentiated (4 + 4), summed
  // (4); backward the softmax written as the gradient (4 + e).
  const double logits =
      static_cast<double>(RankTokens(c)) * static_cast<double>(padded_vocab / c.tp);
  const double e = static_cast<double>(c.element_bytes);
  Elementwise w;
  w.bytes = backward ? logits * (4 + e) : logits * (e + 4 + 8 + 4);
  w.kernels = backward ? 1 : 3;
  return w;
}

}  // namespace et
}  // namespace orrery
