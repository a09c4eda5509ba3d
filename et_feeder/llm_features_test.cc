// generate-llm's features for reproducing published runs: context parallelism, uneven pipeline
// stages, the overlap flags, FP8 and the physical compute model, and the FLOP-count conventions.
// Expected values are derived from first principles in each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "et_feeder/llm_workload.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;

int64_t IntAttr(const Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return a.has_int64_val() ? a.int64_val() : a.int32_val();
  }
  return -1;
}
std::string StringAttr(const Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return a.string_val();
  }
  return "";
}
bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
const Node* Named(const std::vector<Node>& nodes, const std::string& name) {
  for (const Node& n : nodes) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}
bool DependsOn(const Node& n, uint64_t id) {
  return std::find(n.data_deps().begin(), n.data_deps().end(), id) != n.data_deps().end();
}

LlmConfig Small() {
  LlmConfig c;
  c.layers = 8;
  c.hidden = 1024;
  c.heads = 8;
  c.kv_heads = 4;
  c.mlp = Mlp::kSwiglu;
  c.seq_length = 1024;
  c.vocab = 1000;
  c.micro_batches = 2;
  return c;
}

GpuModel Gpu() {
  GpuModel g;
  g.name = "test";
  g.peak_tflops_bf16 = 100;
  g.peak_tflops_fp8 = 200;
  g.memory_bandwidth_gbps = 1000;
  g.sms = 1;
  g.tile_m = 1;
  g.tile_n = 1;  // no wave quantization: every GEMM at its efficiency
  g.gemm_efficiency_bf16 = 0.5;
  g.gemm_efficiency_fp8 = 0.5;
  g.attention_forward_efficiency = 0.5;
  g.attention_backward_efficiency = 0.25;
  return g;
}

// Context parallelism: ranks r = ((stage·dp + replica)·cp + cp rank)·tp + tp rank; each rank
// computes b·s/cp tokens, attention over all s keys, and exchanges its K and V (b·(s/cp)·2·kv·d/tp
// elements) with its cp group; the step's FLOPs summed over every rank are cp = 1's.
TEST(LlmFeatures, ContextParallelismSplitsTheSequence) {
  LlmConfig one = Small();
  one.tp = 2;
  one.dp = 2;
  ASSERT_TRUE(CheckLlmConfig(&one).ok());
  LlmConfig c = Small();
  c.tp = 2;
  c.cp = 2;
  c.dp = 1;
  c.micro_batches = 4;  // the same global batch: dp 1 × 4 against dp 2 × 2
  ASSERT_TRUE(CheckLlmConfig(&c).ok()) << CheckLlmConfig(&c).message();
  const LlmShape s = ShapeOf(c);
  EXPECT_EQ(s.npus, 4);
  EXPECT_EQ(s.activation_bytes, 1024 / 2 * 1024 * 2);  // b·(s/cp)·h·e
  // Same model FLOPs per step as the cp = 1 run of the same global batch (attention: each rank's
  // s/cp queries against s keys is 1/cp of the sequence's).
  EXPECT_DOUBLE_EQ(s.step_flops, ShapeOf(one).step_flops);
  const std::vector<Node> rank1 = BuildLlmRank(c, 1);
  const Node* gather = Named(rank1, "fwd_mb0_layer0_kv_allgather");
  ASSERT_NE(gather, nullptr);
  const int64_t d = 1024 / 8;
  EXPECT_EQ(IntAttr(*gather, "comm_size"), 512 * 2 * 4 * d / 2 * 2);
  // Rank 1 is tp rank 1 of cp rank 0; its cp peer is rank 3 (tp rank 1 of cp rank 1), as the
  // METADATA node declares.
  const std::string group = StringAttr(*gather, "pg_name");
  ASSERT_FALSE(group.empty());
  EXPECT_TRUE(
      Has(rank1[0].inputs().values(), "{\"pg_name\": \"" + group + "\", \"ranks\": [1, 3]}"))
      << rank1[0].inputs().values();
  // The ring's part of attention waits for the exchange; the rank's own block does not.
  const Node* own = Named(rank1, "fwd_mb0_layer0_attention_own");
  const Node* ring = Named(rank1, "fwd_mb0_layer0_attention_ring");
  ASSERT_NE(own, nullptr);
  ASSERT_NE(ring, nullptr);
  EXPECT_FALSE(DependsOn(*own, gather->id()));
  EXPECT_TRUE(DependsOn(*ring, gather->id()));
  // Backward returns the key and value gradients: a reduce-scatter of cp times the share.
  const Node* dkv = Named(rank1, "bwd_mb0_layer0_dkv_reducescatter");
  ASSERT_NE(dkv, nullptr);
  EXPECT_EQ(IntAttr(*dkv, "comm_size"), 2 * IntAttr(*gather, "comm_size"));
  // Gradients are reduced over dp × cp = 2 ranks of the same stage and tp rank: 1 and 3.
  bool reduced = false;
  for (const Node& n : rank1) {
    if (n.name() == "grad_allreduce_all") {
      reduced = true;
      EXPECT_TRUE(Has(rank1[0].inputs().values(),
                      "{\"pg_name\": \"" + StringAttr(n, "pg_name") + "\", \"ranks\": [1, 3]}"));
    }
  }
  EXPECT_TRUE(reduced);
}

TEST(LlmFeatures, ContextParallelismMistakesAreNamed) {
  LlmConfig c = Small();
  c.cp = 3;  // 1024 tokens do not split into 3
  const Status s = CheckLlmConfig(&c);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "--cp is '3'")) << s.message();
  // The combination whose collectives reach the system layer's queues in different orders.
  LlmConfig gather = Small();
  gather.cp = 2;
  gather.dp = 2;
  gather.distributed_optimizer = true;
  gather.overlap_param_gather = true;
  gather.comm_streams = 2;
  const Status g = CheckLlmConfig(&gather);
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(Has(g.message(), "--overlap-param-gather")) << g.message();
  gather.comm_streams = 1;
  EXPECT_TRUE(CheckLlmConfig(&gather).ok());
}

// The pipeline stage whose rank runs each layer's first forward (of micro-batch 0); a layer run
// on two stages fails, one run nowhere stays -1.
std::vector<int> StageOfEachLayer(const LlmConfig& c) {
  std::vector<int> stage_of(static_cast<size_t>(c.layers), -1);
  for (int64_t stage = 0; stage < c.pp; ++stage) {
    for (const Node& n : BuildLlmRank(c, stage)) {
      for (int l = 0; l < c.layers; ++l) {
        if (n.name() == "fwd_mb0_layer" + std::to_string(l) + "_qkv") {
          EXPECT_EQ(stage_of[l], -1) << l;
          stage_of[l] = static_cast<int>(stage);
        }
      }
    }
  }
  return stage_of;
}

// Uneven stages: 10 layers on 4 stages, 1 on the first and the last, 4 on each other stage.
TEST(LlmFeatures, FirstAndLastStagesHoldTheirOwnLayers) {
  LlmConfig c = Small();
  c.layers = 10;
  c.pp = 4;
  c.first_stage_layers = 1;
  c.last_stage_layers = 1;
  ASSERT_TRUE(CheckLlmConfig(&c).ok()) << CheckLlmConfig(&c).message();
  const LlmShape s = ShapeOf(c);
  EXPECT_EQ(s.LayersOf(0), 1);
  EXPECT_EQ(s.LayersOf(1), 4);
  EXPECT_EQ(s.LayersOf(2), 4);
  EXPECT_EQ(s.LayersOf(3), 1);
  EXPECT_EQ(s.ChunkFirstLayer(3), 9);
  // Every layer's forward runs on exactly one stage, in order.
  EXPECT_EQ(StageOfEachLayer(c), (std::vector<int>{0, 1, 1, 1, 1, 2, 2, 2, 2, 3}));
  // The step's FLOPs do not depend on how the layers are spread.
  LlmConfig even = Small();
  even.layers = 10;
  even.pp = 2;
  ASSERT_TRUE(CheckLlmConfig(&even).ok());
  EXPECT_DOUBLE_EQ(s.step_flops, ShapeOf(even).step_flops);

  LlmConfig bad = Small();
  bad.pp = 4;
  bad.first_stage_layers = 3;  // leaves 5 layers for 3 stages
  const Status st = CheckLlmConfig(&bad);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Has(st.message(), "--first-stage-layers is '3'")) << st.message();
}

// Uneven stages with interleaving (Llama 3 405B's schedule: one layer fewer on the first and the
// last of the virtual stages): 14 layers on 2 stages of 2 chunks, 3 on the first and the last
// chunk, 4 on the two others. Virtual stage vs = chunk·pp + stage: stage 0 holds chunks 0 (layers
// 0-2) and 2 (7-10), stage 1 chunks 1 (3-6) and 3 (11-13), 7 layers each.
TEST(LlmFeatures, FirstAndLastVirtualStagesHoldTheirOwnLayers) {
  LlmConfig c = Small();
  c.layers = 14;
  c.pp = 2;
  c.virtual_stages = 2;
  c.first_stage_layers = 3;
  c.last_stage_layers = 3;
  ASSERT_TRUE(CheckLlmConfig(&c).ok()) << CheckLlmConfig(&c).message();
  const LlmShape s = ShapeOf(c);
  EXPECT_EQ(s.ChunkLayers(0), 3);
  EXPECT_EQ(s.ChunkLayers(1), 4);
  EXPECT_EQ(s.ChunkLayers(2), 4);
  EXPECT_EQ(s.ChunkLayers(3), 3);
  EXPECT_EQ(s.ChunkFirstLayer(2), 7);
  EXPECT_EQ(s.LayersOf(0), 7);
  EXPECT_EQ(s.LayersOf(1), 7);
  EXPECT_EQ(s.DenseStageParams(0), 7 * s.layer_params + s.embedding_params);
  EXPECT_EQ(s.DenseStageParams(1), 7 * s.layer_params + s.head_params);
  EXPECT_EQ(StageOfEachLayer(c), (std::vector<int>{0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}));
  LlmConfig even = Small();
  even.layers = 14;
  even.pp = 2;
  ASSERT_TRUE(CheckLlmConfig(&even).ok());
  EXPECT_DOUBLE_EQ(s.step_flops, ShapeOf(even).step_flops);

  LlmConfig bad = c;
  bad.last_stage_layers = 0;  // leaves 11 layers for 3 chunks
  const Status st = CheckLlmConfig(&bad);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Has(st.message(), "the other 3 virtual stages an equal share")) << st.message();
}

// --overlap-param-gather: each layer's parameters are gathered at the start (1/dp of them at
// element bytes), its first forward waits for them, and nothing is gathered after the optimizer.
TEST(LlmFeatures, ParametersAreGatheredBesideTheForwardPasses) {
  LlmConfig c = Small();
  c.dp = 2;
  c.distributed_optimizer = true;
  c.overlap_param_gather = true;
  c.grad_sync = GradSync::kPerLayer;
  c.comm_streams = 2;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  const LlmShape s = ShapeOf(c);
  const std::vector<Node> r = BuildLlmRank(c, 0);
  const Node* gather = Named(r, "param_all_gather_layer3");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(IntAttr(*gather, "comm_size"), (s.layer_params + 1) / 2 * c.element_bytes);
  const Node* first_forward = Named(r, "fwd_mb0_layer3_qkv");
  ASSERT_NE(first_forward, nullptr);
  EXPECT_TRUE(DependsOn(*first_forward, gather->id()));
  const auto optimizer =
      std::find_if(r.begin(), r.end(), [](const Node& n) { return n.name() == "optimizer_step"; });
  ASSERT_NE(optimizer, r.end());
  for (auto it = optimizer; it != r.end(); ++it) EXPECT_FALSE(Has(it->name(), "param_all_gather"));
  EXPECT_LT(gather - r.data(), first_forward - r.data());

  LlmConfig bad = Small();
  bad.overlap_param_gather = true;
  EXPECT_FALSE(CheckLlmConfig(&bad).ok());
}

// --tp-comm-overlap: the reduce-scatter of a row-parallel product starts with it (it does not
// wait for the product) and the next node waits for both.
TEST(LlmFeatures, TensorParallelCollectivesRunBesideTheirProducts) {
  LlmConfig c = Small();
  c.tp = 2;
  c.sequence_parallel = true;
  c.tp_comm_overlap = true;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  const std::vector<Node> r = BuildLlmRank(c, 0);
  const Node* projection = Named(r, "fwd_mb0_layer0_projection");
  const Node* reduce = Named(r, "fwd_mb0_layer0_attention_reducescatter");
  const Node* gather = Named(r, "fwd_mb0_layer0_mlp_allgather");
  const Node* fc1 = Named(r, "fwd_mb0_layer0_fc1");
  ASSERT_TRUE(projection && reduce && gather && fc1);
  EXPECT_FALSE(DependsOn(*reduce, projection->id()));
  EXPECT_FALSE(DependsOn(*fc1, gather->id()));  // the gather feeds fc1 as it runs
  const Node* fc2 = Named(r, "fwd_mb0_layer0_fc2");
  ASSERT_NE(fc2, nullptr);
  EXPECT_TRUE(DependsOn(*fc2, gather->id()));

  LlmConfig bad = Small();
  bad.tp = 2;
  bad.tp_comm_overlap = true;  // without sequence parallelism
  EXPECT_FALSE(CheckLlmConfig(&bad).ok());
}

// The physical model's durations: a product X[m×k]·W[k×n] at 2mkn / (peak × efficiency), FP8 at
// the FP8 peak; attention causal (half the s² work), backward 2.5 times the forward's FLOPs.
TEST(LlmFeatures, PhysicalDurationsFollowTheGpuModel) {
  LlmConfig c = Small();
  c.gpu = Gpu();
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  const std::vector<Node> r = BuildLlmRank(c, 0);
  const double tokens = 1024, h = 1024, qkv = 128.0 * (8 + 2 * 4);
  const Node* n = Named(r, "fwd_mb0_layer0_qkv");
  ASSERT_NE(n, nullptr);
  // 2·1024·1024·2048 FLOPs at 100e12 × 0.5 = 85.9 µs.
  EXPECT_EQ(n->duration_micros(), std::llround(2 * tokens * h * qkv / 5e13 * 1e6));
  const Node* attention = Named(r, "fwd_mb0_layer0_attention");
  ASSERT_NE(attention, nullptr);
  const double causal = 4 * tokens * 1024 * h / 2;  // 4·b·s²·h, half of it computed
  EXPECT_EQ(attention->duration_micros(), std::llround(causal / 5e13 * 1e6));
  const Node* back = Named(r, "bwd_mb0_layer0_attention");
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->duration_micros(), std::llround(2.5 * causal / 2.5e13 * 1e6));
  // Memory-bound work is a node of its own: norms and residuals (10 bytes of h per token at
  // e = 2) and SwiGLU (3 of f) at 1000 GB/s.
  const Node* elementwise = Named(r, "fwd_mb0_layer0_elementwise");
  ASSERT_NE(elementwise, nullptr);
  const double f = static_cast<double>(c.ffn_hidden);
  EXPECT_EQ(elementwise->duration_micros(),
            std::llround(tokens * (h * 10 * 2 + f * 3 * 2) / 1e12 * 1e6));
  // FP8: the layers' products at the FP8 peak; the LM head stays BF16.
  LlmConfig fp8 = c;
  fp8.fp8 = true;
  ASSERT_TRUE(CheckLlmConfig(&fp8).ok());
  const std::vector<Node> r8 = BuildLlmRank(fp8, 0);
  EXPECT_EQ(Named(r8, "fwd_mb0_layer0_qkv")->duration_micros(),
            std::llround(2 * tokens * h * qkv / 1e14 * 1e6));
  LlmConfig last = fp8;
  ASSERT_TRUE(CheckLlmConfig(&last).ok());
  const std::vector<Node> last_rank = BuildLlmRank(last, 0);  // Named points into it
  const Node* head = Named(last_rank, "fwd_mb0_lm_head");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->duration_micros(), std::llround(2 * tokens * h * 1024 / 5e13 * 1e6));
  // Without a GPU model, --fp8 is an error naming what it needs.
  LlmConfig bare = Small();
  bare.fp8 = true;
  const Status s = CheckLlmConfig(&bare);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "--gpu-model")) << s.message();
}

// The FLOP conventions of published tables, against their formulas computed here.
TEST(LlmFeatures, PublishedFlopConventions) {
  LlmConfig c;
  ASSERT_TRUE(ApplyLlmPreset("gpt3-175b", &c).ok());
  c.vocab = 51200;
  c.global_batch_size = 1536;
  c.tp = 8;
  c.pp = 16;
  c.dp = 12;
  ASSERT_TRUE(CheckLlmConfig(&c).ok()) << CheckLlmConfig(&c).message();
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
  EXPECT_DOUBLE_EQ(PublishedStepFlops(c, FlopsConvention::kMegatron),
                   72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)));
  EXPECT_DOUBLE_EQ(PublishedStepFlops(c, FlopsConvention::kMegatronRecompute),
                   96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h)));
  // 6N: GPT-3 175B's layers are 12h² weights each (4h² attention, 8h² MLP), plus the embedding
  // and the untied LM head of V·h each (51200 is already a multiple of 128·tp).
  const double n = L * 12 * h * h + 2 * V * h;
  EXPECT_DOUBLE_EQ(PublishedStepFlops(c, FlopsConvention::kSixN), 6 * n * B * s);
  // Without recomputation, Megatron's count is the generator's own (ShapeOf sums its nodes).
  EXPECT_NEAR(PublishedStepFlops(c, FlopsConvention::kMegatron) / ShapeOf(c).step_flops, 1, 1e-12);
  FlopsConvention parsed;
  EXPECT_TRUE(ParseFlopsConvention("6n", &parsed));
  EXPECT_EQ(parsed, FlopsConvention::kSixN);
  EXPECT_FALSE(ParseFlopsConvention("hfu", &parsed));
}

// The flags reach the configuration, and bad ones are named.
TEST(LlmFeatures, FlagsParse) {
  StatusOr<LlmConfig> c = LlmConfigFromFlags(
      {"--model", "llama3-8b", "--dp", "2", "--cp", "2", "--tp", "2", "--global-batch-size", "8",
       "--sequence-parallel", "--tp-comm-overlap", "--distributed-optimizer",
       "--overlap-grad-reduce", "--attention", "unfused"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->cp, 2);
  EXPECT_TRUE(c->tp_comm_overlap);
  StatusOr<LlmConfig> gather = LlmConfigFromFlags(
      {"--model", "llama3-8b", "--dp", "2", "--distributed-optimizer", "--overlap-param-gather"});
  ASSERT_TRUE(gather.ok()) << gather.status().message();
  EXPECT_TRUE(gather->overlap_param_gather);
  EXPECT_EQ(c->grad_sync, GradSync::kPerLayer);
  EXPECT_EQ(c->comm_streams, 2);
  EXPECT_EQ(c->attention, Attention::kUnfused);
  EXPECT_EQ(c->micro_batches, 4);
  StatusOr<LlmConfig> bad = LlmConfigFromFlags({"--model", "llama3-8b", "--attention", "fast"});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.status().message(), "--attention is 'fast'")) << bad.status().message();
}

}  // namespace
}  // namespace et
}  // namespace orrery
