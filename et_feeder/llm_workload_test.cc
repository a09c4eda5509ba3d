#include "et_feeder/llm_workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;

int64_t IntAttr(const Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return a.has_int64_val() ? a.int64_val() : a.int32_val();
  }
  ADD_FAILURE() << "node " << n.id() << " '" << n.name() << "' has no " << name;
  return -1;
}
std::string StringAttr(const Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return a.string_val();
  }
  return "";
}
bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// A small GPT: gelu MLP of 4h, multi-head attention; vocabulary 1000 pads to 1024 at tp 2.
LlmConfig SmallGpt() {
  LlmConfig c;
  c.layers = 8;
  c.hidden = 1024;
  c.heads = 8;
  c.seq_length = 512;
  c.vocab = 1000;
  c.micro_batch_size = 2;
  c.micro_batches = 3;
  c.dp = 2;
  c.tp = 2;
  c.pp = 2;
  return c;
}

std::vector<std::vector<Node>> AllRanks(const LlmConfig& c) {
  std::vector<std::vector<Node>> ranks;
  for (int64_t r = 0; r < c.dp * c.tp * c.pp; ++r) ranks.push_back(BuildLlmRank(c, r));
  return ranks;
}

double ModelFlops(const std::vector<std::vector<Node>>& ranks) {
  double sum = 0;
  for (const auto& rank : ranks) {
    for (const Node& n : rank) {
      if (n.type() == ChakraProtoMsg::COMP_NODE && n.name() != "optimizer_step") {
        sum += static_cast<double>(IntAttr(n, "num_ops"));
      }
    }
  }
  return sum;
}

// Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", section 5.1: a step of batch B, sequence s, L layers of hidden h and vocabulary V
// takes 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)) FLOPs (forward, and backward at twice it), and
// 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)) with full recomputation (each layer's forward twice).
TEST(LlmWorkload, StepFlopsAreMegatronsFormula) {
  for (bool recompute : {false, true}) {
    SCOPED_TRACE(recompute);
    LlmConfig c = SmallGpt();
    c.recompute = recompute;
    ASSERT_TRUE(CheckLlmConfig(&c).ok());
    const LlmShape s = ShapeOf(c);
    ASSERT_EQ(s.padded_vocab, 1024);
    const double B = 3 * 2 * 2, seq = 512, L = 8, h = 1024, V = 1024;
    const double expected = recompute
                                ? 96 * B * seq * L * h * h * (1 + seq / (6 * h) + V / (16 * L * h))
                                : 72 * B * seq * L * h * h * (1 + seq / (6 * h) + V / (12 * L * h));
    EXPECT_DOUBLE_EQ(ModelFlops(AllRanks(c)), expected);
    EXPECT_DOUBLE_EQ(s.step_flops, expected);
  }
}

// Grouped-query attention and SwiGLU (Llama 2 70B): per layer, per token, forward:
// 2·h·(h + 2·kv·d) for Q, K and V, 2·h·h for the output projection, 3 × 2·h·f for the gate, up
// and down matrices, and 4·s·h for attention; over tp ranks.
TEST(LlmWorkload, LlamaLayersAndParameters) {
  LlmConfig c;
  ASSERT_TRUE(ApplyLlmPreset("llama2-70b", &c).ok());
  c.tp = 8;
  c.pp = 4;
  c.seq_length = 1024;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  const LlmShape s = ShapeOf(c);
  const double h = 8192, d = 128, kv = 8, f = 28672, tokens = 1024;
  EXPECT_DOUBLE_EQ(
      s.layer_forward_flops,
      tokens * (2 * h * (h + 2 * kv * d) + 2 * h * h + 3 * 2 * h * f + 4 * 1024 * h) / 8);
  // The released model has 68,976,648,192 parameters, of which the norms are 161 × 8192 (two
  // per layer and the final one): the weights are the rest, plus Megatron-LM's padding of the
  // vocabulary to a multiple of 128 × tp (32000 to 32768) in the embedding and the LM head.
  ASSERT_EQ(s.padded_vocab, 32768);
  int64_t weights = 0;
  for (int64_t stage = 0; stage < c.pp; ++stage) weights += s.StageParams(stage) * c.tp;
  EXPECT_EQ(weights, int64_t{68976648192} - 161 * 8192 + 2 * 768 * 8192);
  // Every tensor-parallel rank of the first stage: the layers' shards and the embedding's.
  EXPECT_EQ(s.StageParams(0), 20 * s.layer_params + 32768 / 8 * 8192);
}

// Each replica's data-parallel reduction covers every weight once, whatever the bucketing; with
// the distributed optimizer, each replica all-gathers its 1/dp share of every bucket.
TEST(LlmWorkload, DataParallelReductionCoversEveryWeight) {
  for (GradSync sync : {GradSync::kPerLayer, GradSync::kEnd}) {
    for (bool zero : {false, true}) {
      SCOPED_TRACE(std::to_string(sync == GradSync::kEnd) + std::to_string(zero));
      LlmConfig c = SmallGpt();
      c.grad_sync = sync;
      c.distributed_optimizer = zero;
      ASSERT_TRUE(CheckLlmConfig(&c).ok());
      const LlmShape s = ShapeOf(c);
      const auto ranks = AllRanks(c);
      int64_t reduced = 0, gathered = 0;
      for (int64_t r = 0; r < static_cast<int64_t>(ranks.size()); ++r) {
        const bool replica0 = (r / c.tp) % c.dp == 0;
        for (const Node& n : ranks[r]) {
          if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
          const bool grads = StartsWith(n.name(), "grad_");
          const bool params = StartsWith(n.name(), "param_all_gather_");
          if (!grads && !params) continue;
          // A data-parallel group: ranks of one stage and tp rank.
          const int64_t group = std::stoll(StringAttr(n, "pg_name"));
          EXPECT_EQ(group, 1 + c.pp * c.dp + (r / (c.tp * c.dp)) * c.tp + r % c.tp) << n.name();
          EXPECT_EQ(IntAttr(n, "comm_type"),
                    grads ? (zero ? ChakraProtoMsg::REDUCE_SCATTER : ChakraProtoMsg::ALL_REDUCE)
                          : ChakraProtoMsg::ALL_GATHER);
          if (replica0 && grads) reduced += IntAttr(n, "comm_size");
          if (replica0 && params) gathered += IntAttr(n, "comm_size");
        }
      }
      const int64_t weights = (s.StageParams(0) + s.StageParams(1)) * c.tp;
      EXPECT_EQ(reduced, weights * c.grad_bytes);
      const int buckets = sync == GradSync::kEnd ? 1 : 8 / 2 + 1;  // per stage
      EXPECT_EQ(gathered, zero ? weights / c.dp * c.element_bytes : 0)
          << "(every bucket is even here: " << buckets << " per stage)";
    }
  }
}

// Per micro-batch: two tensor-parallel all-reduces per layer forward and two backward (two more
// with recomputation), the embedding's on the first stage, cross entropy's three and the head's
// input-gradient one on the last; one activation send forward and one gradient send back per
// stage boundary, each matched by a receive of the same tag and size on the neighbour.
TEST(LlmWorkload, TensorAndPipelineCommunication) {
  for (bool recompute : {false, true}) {
    SCOPED_TRACE(recompute);
    LlmConfig c = SmallGpt();
    c.recompute = recompute;
    ASSERT_TRUE(CheckLlmConfig(&c).ok());
    const LlmShape s = ShapeOf(c);
    const int64_t act = 2 * 512 * 1024 * 2;
    ASSERT_EQ(s.activation_bytes, act);
    const auto ranks = AllRanks(c);
    std::map<std::tuple<int64_t, int64_t, int64_t>, int> sends;  // (from, to, tag)
    std::map<std::tuple<int64_t, int64_t, int64_t>, int> receives;
    for (int64_t r = 0; r < static_cast<int64_t>(ranks.size()); ++r) {
      const int64_t stage = r / (c.tp * c.dp);
      int tp_all_reduces = 0;
      const Node* last_tp_reduction = nullptr;
      for (const Node& n : ranks[r]) {
        if (n.type() == ChakraProtoMsg::COMM_COLL_NODE && !StartsWith(n.name(), "grad_")) {
          ++tp_all_reduces;
          last_tp_reduction = &n;
          EXPECT_EQ(std::stoll(StringAttr(n, "pg_name")), 1 + stage * c.dp + (r / c.tp) % c.dp);
          EXPECT_EQ(IntAttr(n, "comm_size"),
                    n.name().find("cross_entropy") != std::string::npos ? 2 * 512 * 4 : act)
              << n.name();
        }
        if (n.type() == ChakraProtoMsg::COMM_SEND_NODE) {
          EXPECT_EQ(IntAttr(n, "comm_size"), act);
          ++sends[{r, IntAttr(n, "comm_dst"), IntAttr(n, "comm_tag")}];
          // A backward send carries the input gradient the last tensor-parallel reduction
          // before it completes: it waits for it (it had waited for the weight gradient only).
          if (n.name().find("send_gradients") != std::string::npos) {
            ASSERT_NE(last_tp_reduction, nullptr) << n.name();
            const auto& deps = n.data_deps();
            EXPECT_NE(std::find(deps.begin(), deps.end(), last_tp_reduction->id()), deps.end())
                << r << ": " << n.name() << " does not wait for " << last_tp_reduction->name();
          }
        }
        if (n.type() == ChakraProtoMsg::COMM_RECV_NODE) {
          EXPECT_EQ(IntAttr(n, "comm_size"), act);
          ++receives[{IntAttr(n, "comm_src"), r, IntAttr(n, "comm_tag")}];
        }
      }
      const int per_layer = recompute ? 6 : 4;
      EXPECT_EQ(tp_all_reduces, 3 * (4 * per_layer + (stage == 0 ? 1 : 4))) << r;
    }
    EXPECT_EQ(sends, receives);
    // Each of the 4 NPUs of a stage: 3 micro-batches' activations or gradients each way.
    EXPECT_EQ(sends.size(), 2u * 4 * 3);
    for (const auto& [key, count] : sends) {
      EXPECT_EQ(count, 1);
      EXPECT_EQ(std::abs(std::get<1>(key) - std::get<0>(key)), c.tp * c.dp);
    }
  }
}

// The order of a stage's passes: GPipe runs every forward, then every backward; 1F1B runs
// pp − stage − 1 forward passes, then one forward and one backward in turn, then the rest of the
// backward passes (fewer warm-up passes when there are fewer micro-batches).
TEST(LlmWorkload, PipelineSchedules) {
  for (auto schedule : {PipelineSchedule::kOneFOneB, PipelineSchedule::kGpipe}) {
    for (int64_t m : {2, 6}) {
      LlmConfig c = SmallGpt();
      c.dp = c.tp = 1;
      c.pp = 4;
      c.micro_batches = m;
      c.schedule = schedule;
      ASSERT_TRUE(CheckLlmConfig(&c).ok());
      for (int64_t stage = 0; stage < 4; ++stage) {
        std::string order, expected;
        for (const Node& n : BuildLlmRank(c, stage)) {
          if (n.type() != ChakraProtoMsg::COMP_NODE) continue;
          // The first layer product of each pass: fc2 backward, qkv forward.
          const std::string first_layer = "_layer" + std::to_string(stage * 2 + 1);
          if (StartsWith(n.name(), "fwd_") &&
              n.name().find("_layer" + std::to_string(stage * 2) + "_qkv") != std::string::npos) {
            order += "F" + n.name().substr(6, n.name().find('_', 6) - 6) + " ";
          }
          if (StartsWith(n.name(), "bwd_") &&
              n.name().find(first_layer + "_fc2") != std::string::npos) {
            order += "B" + n.name().substr(6, n.name().find('_', 6) - 6) + " ";
          }
        }
        const int64_t warmup =
            schedule == PipelineSchedule::kGpipe ? m : std::min<int64_t>(4 - stage - 1, m);
        for (int64_t i = 0; i < warmup; ++i) expected += "F" + std::to_string(i) + " ";
        for (int64_t i = 0; i < m - warmup; ++i) {
          expected += "F" + std::to_string(warmup + i) + " B" + std::to_string(i) + " ";
        }
        for (int64_t i = m - warmup; i < m; ++i) expected += "B" + std::to_string(i) + " ";
        EXPECT_EQ(order, expected) << "stage " << stage << " of 4, " << m << " micro-batches";
      }
    }
  }
}

// Interleaved 1F1B (Megatron-LM's virtual pipeline stages): stage k holds chunks j of layers
// (j·pp + k)·n to (j·pp + k + 1)·n − 1, each layer computed once per micro-batch each way over
// the stages; the hand-offs go around the pipeline (the last stage's chunk 0 to the first
// stage's chunk 1), each send matched by one receive of its tag and size; and each stage runs
// Megatron-LM's order, written out here for pp 2, v 2 and 4 micro-batches: the warm-up is
// 2(pp − k − 1) + (v − 1)·pp passes, micro-batches in groups of pp per chunk, backward passes on
// the chunks in reverse.
TEST(LlmWorkload, InterleavedStagesHandOnAroundThePipeline) {
  LlmConfig c = SmallGpt();
  c.dp = c.tp = 1;
  c.virtual_stages = 2;
  c.micro_batches = 4;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  EXPECT_EQ(ShapeOf(c).layers_per_chunk, 2);
  const auto ranks = AllRanks(c);
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> sends, receives;  // (from, to, tag)
  std::map<std::string, int> layer_passes;  // "fwd_mb1_layer3" -> count over the ranks
  for (int64_t r = 0; r < 2; ++r) {
    std::string order;
    for (const Node& n : ranks[r]) {
      if (n.type() == ChakraProtoMsg::COMM_SEND_NODE) {
        ++sends[{r, IntAttr(n, "comm_dst"), IntAttr(n, "comm_tag")}];
      }
      if (n.type() == ChakraProtoMsg::COMM_RECV_NODE) {
        ++receives[{IntAttr(n, "comm_src"), r, IntAttr(n, "comm_tag")}];
      }
      if (n.type() != ChakraProtoMsg::COMP_NODE) continue;
      const size_t layer = n.name().find("_layer");
      if (layer == std::string::npos) continue;
      const std::string key = n.name().substr(0, n.name().find('_', layer + 1));
      // One node per pass of a layer: its qkv product (backward: its input gradient's).
      if (n.name().find("_qkv") != std::string::npos &&
          n.name().find("_wgrad") == std::string::npos) {
        ++layer_passes[key];
        // The layer's stage: chunk j of stage k holds layers 2(2j + k) and 2(2j + k) + 1.
        const int64_t l = std::stoll(key.substr(layer + 6));
        EXPECT_EQ((l / 2) % 2, r) << n.name();
        // A pass's first layer: its chunk.
        if (l % 2 == (StartsWith(n.name(), "fwd_") ? 0 : 1)) {
          order += (StartsWith(n.name(), "fwd_") ? "F" : "B") +
                   key.substr(6, key.find('_', 6) - 6) + "c" + std::to_string(l / 4) + " ";
        }
      }
    }
    // Stage 0: 2·1 + 2 = 4 warm-up passes; stage 1: 2.
    const std::string expected =
        r == 0 ? "F0c0 F1c0 F0c1 F1c1 F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 B2c1 B3c1 B2c0 B3c0 "
               : "F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 B2c0 B3c0 ";
    EXPECT_EQ(order, expected) << "stage " << r;
  }
  EXPECT_EQ(layer_passes.size(), 2u * 4 * 8);  // both ways, 4 micro-batches, 8 layers
  for (const auto& [key, count] : layer_passes) EXPECT_EQ(count, 1) << key;
  EXPECT_EQ(sends, receives);
  // Per micro-batch, 3 boundaries between the 4 virtual stages, each way.
  EXPECT_EQ(sends.size(), 4u * 3 * 2);
  for (const auto& [key, count] : sends) EXPECT_EQ(count, 1);
  // The last stage's chunk 0 hands its activations to the first stage (virtual stage 1 to 2),
  // tagged 2·(micro-batch·pp·v + virtual stage sent from) = 2 for micro-batch 0.
  EXPECT_EQ(sends.count({1, 0, 2}), 1u);
}

// Every collective of a rank waits for the rank's previous collective (with two streams: the
// previous one of its kind, tensor- or data-parallel), so every group's members issue theirs in
// one order; compute is one chain in the schedule's order.
TEST(LlmWorkload, CollectivesAndComputeAreChainsInProgramOrder) {
  for (int streams : {1, 2}) {
    SCOPED_TRACE(streams);
    LlmConfig c = SmallGpt();
    c.comm_streams = streams;
    c.grad_sync = GradSync::kPerLayer;
    ASSERT_TRUE(CheckLlmConfig(&c).ok());
    const std::vector<Node> rank = BuildLlmRank(c, 5);
    ASSERT_EQ(rank.front().type(), ChakraProtoMsg::METADATA_NODE);
    EXPECT_EQ(rank.front().name(), "process_group:init");
    int64_t previous[2] = {-1, -1}, previous_compute = -1;
    int data_parallel = 0;
    for (const Node& n : rank) {
      auto depends_on = [&](int64_t id) {
        for (uint64_t d : n.data_deps()) {
          if (static_cast<int64_t>(d) == id) return true;
        }
        return false;
      };
      if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
        const int kind = streams == 2 && StartsWith(n.name(), "grad_") ? 1 : 0;
        data_parallel += StartsWith(n.name(), "grad_");
        if (previous[kind] >= 0) {
          EXPECT_TRUE(depends_on(previous[kind])) << n.name();
        }
        previous[kind] = static_cast<int64_t>(n.id());
      }
      if (n.type() == ChakraProtoMsg::COMP_NODE) {
        if (previous_compute >= 0) {
          bool after = false;
          // Through the tensor-parallel all-reduces between them, if any.
          for (const Node& m : rank) {
            if (m.id() >= n.id()) break;
            if (static_cast<int64_t>(m.id()) > previous_compute &&
                m.type() == ChakraProtoMsg::COMM_COLL_NODE &&
                depends_on(static_cast<int64_t>(m.id()))) {
              after = true;
            }
          }
          EXPECT_TRUE(after || depends_on(previous_compute)) << n.name();
        }
        previous_compute = static_cast<int64_t>(n.id());
      }
    }
    // Stage 1 (NPUs 4 to 7): its 4 layers and the LM head.
    EXPECT_EQ(data_parallel, 5);
    // The optimizer waits for both streams.
    EXPECT_EQ(rank.back().name(), "optimizer_step");
    for (int64_t p : previous) {
      if (p < 0) continue;
      bool waits = false;
      for (uint64_t d : rank.back().data_deps()) waits |= static_cast<int64_t>(d) == p;
      EXPECT_TRUE(waits) << p;
    }
  }
}

// Sequence parallelism (Korthikanti et al., 2022): per layer forward, an all-gather of the
// rank's 1/tp of the sequence before each column-parallel product and a reduce-scatter after
// each row-parallel one; backward, their adjoints, and each column-parallel product's input
// gathered again for its weight gradient; the embedding's output reduce-scattered, the LM head's
// input gathered; hand-offs of 1/tp of the activations.
TEST(LlmWorkload, SequenceParallelismGathersAndScattersOverTheSequence) {
  LlmConfig c = SmallGpt();
  c.sequence_parallel = true;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  const LlmShape s = ShapeOf(c);
  const int64_t act = 2 * 512 * 1024 * 2;
  EXPECT_EQ(s.hand_off_bytes, act / 2);
  const auto ranks = AllRanks(c);
  for (int64_t r : {0, 5}) {
    SCOPED_TRACE(r);
    const bool first = r < 4;
    std::map<int64_t, int> count;      // comm_type -> collectives of the tensor-parallel group
    std::map<int64_t, int64_t> bytes;  // comm_type -> their comm_size
    for (const Node& n : ranks[r]) {
      if (n.type() == ChakraProtoMsg::COMM_SEND_NODE ||
          n.type() == ChakraProtoMsg::COMM_RECV_NODE) {
        EXPECT_EQ(IntAttr(n, "comm_size"), act / 2) << n.name();
      }
      if (n.type() != ChakraProtoMsg::COMM_COLL_NODE || StartsWith(n.name(), "grad_")) continue;
      const int64_t type = IntAttr(n, "comm_type");
      ++count[type];
      bytes[type] += IntAttr(n, "comm_size");
      if (type == ChakraProtoMsg::ALL_GATHER) {
        EXPECT_EQ(IntAttr(n, "comm_size"), act / 2);
      }
      if (type == ChakraProtoMsg::REDUCE_SCATTER) {
        EXPECT_EQ(IntAttr(n, "comm_size"), act);
      }
    }
    // Per micro-batch (3): 4 layers of 2 all-gathers and 2 reduce-scatters forward, 4 all-gathers
    // and 2 reduce-scatters backward; the embedding's reduce-scatter and its gradient's
    // all-gather (first stage), or the LM head's input all-gathered forward and again backward,
    // its input gradient reduce-scattered, and cross entropy's 3 all-reduces (last stage).
    EXPECT_EQ(count[ChakraProtoMsg::ALL_GATHER], 3 * (4 * 6 + (first ? 1 : 2)));
    EXPECT_EQ(count[ChakraProtoMsg::REDUCE_SCATTER], 3 * (4 * 4 + 1));
    EXPECT_EQ(count[ChakraProtoMsg::ALL_REDUCE], first ? 0 : 3 * 3);
  }
}

// A small mixture of experts: 4 experts, 2 per token, over ep 2 of dp 4 replicas, tp 2.
LlmConfig SmallMoe() {
  LlmConfig c = SmallGpt();
  c.dp = 4;
  c.pp = 1;
  c.micro_batches = 2;
  c.experts = 4;
  c.moe_top_k = 2;
  c.ep = 2;
  c.sequence_parallel = true;
  c.mlp = Mlp::kSwiglu;
  c.ffn_hidden = 2048;
  return c;
}

// Megatron-Core's all-to-all dispatcher: each layer's MLP routes the rank's tokens, sends top-k
// copies of them to the experts' ranks of its expert-parallel group (ep consecutive replicas),
// gathers an expert's tokens over its tensor-parallel ranks, runs the experts and sends the
// results back (and the adjoints backward). Each rank's experts take top-k times its share of
// the tokens; their weights are reduced over the dp / ep replicas that hold the same experts.
TEST(LlmWorkload, MixtureOfExpertsSendsTokensToTheirExperts) {
  LlmConfig c = SmallMoe();
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  const LlmShape s = ShapeOf(c);
  const int64_t h = 1024, f = 2048, tokens = 2 * 512;
  EXPECT_EQ(s.dispatch_bytes, tokens / 2 * 2 * h * 2);  // 1/tp of the tokens, top-2, bf16
  EXPECT_EQ(s.expert_params, 4 / 2 * 3 * h * f / 2);    // 2 local experts, 3 matrices, over tp
  EXPECT_EQ(LlmCommGroupsJson(c),
            "{\n \"1\": [0, 1],\n \"2\": [2, 3],\n \"3\": [4, 5],\n \"4\": [6, 7],\n"
            " \"5\": [0, 2, 4, 6],\n \"6\": [1, 3, 5, 7],\n"
            " \"7\": [0, 2],\n \"8\": [4, 6],\n \"9\": [1, 3],\n \"10\": [5, 7],\n"
            " \"11\": [0, 4],\n \"12\": [2, 6],\n \"13\": [1, 5],\n \"14\": [3, 7]\n}\n");
  const auto ranks = AllRanks(c);
  const std::vector<Node>& rank = ranks[3];  // replica 1, tp rank 1
  int all_to_alls = 0;
  int64_t expert_flops = 0, dense_reduced = 0, expert_reduced = 0;
  for (const Node& n : rank) {
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
      const int64_t group = std::stoll(StringAttr(n, "pg_name"));
      if (IntAttr(n, "comm_type") == ChakraProtoMsg::ALL_TO_ALL) {
        ++all_to_alls;
        EXPECT_EQ(group, 9) << n.name();
        EXPECT_EQ(IntAttr(n, "comm_size"), s.dispatch_bytes);
      }
      if (StartsWith(n.name(), "grad_allreduce_experts")) {
        EXPECT_EQ(group, 14);
        expert_reduced += IntAttr(n, "comm_size");
      } else if (StartsWith(n.name(), "grad_")) {
        EXPECT_EQ(group, 6);
        dense_reduced += IntAttr(n, "comm_size");
      }
      if (n.name().find("_experts_allgather") != std::string::npos) {
        EXPECT_EQ(group, 2);
        EXPECT_EQ(IntAttr(n, "comm_size"), s.dispatch_bytes);
      }
    }
    if (n.type() == ChakraProtoMsg::COMP_NODE &&
        n.name().find("_experts_fc") != std::string::npos && StartsWith(n.name(), "fwd_")) {
      expert_flops += IntAttr(n, "num_ops");
    }
  }
  // Per micro-batch (2) and layer (8): dispatch and combine, forward and backward.
  EXPECT_EQ(all_to_alls, 2 * 8 * 4);
  // Forward, per micro-batch and layer: top-2 of the micro-batch's tokens through a SwiGLU MLP
  // of width f over tp 2: 2 · tokens · 3 · 2·h·f / 2.
  EXPECT_EQ(expert_flops, 2 * 8 * (2 * tokens * 3 * 2 * h * f / 2));
  EXPECT_EQ(dense_reduced, s.DenseStageParams(0) * c.grad_bytes);
  EXPECT_EQ(expert_reduced, s.ExpertStageParams() * c.grad_bytes);
  // Every expert's weights, once, in an expert-parallel group's 2 replicas × 2 tp ranks.
  EXPECT_EQ(s.ExpertStageParams() * c.ep * c.tp, 8 * 4 * 3 * h * f);
}

// A preset resolves to its published shape; what that shape implies (GPT-3's key-value heads,
// its 4h MLP, Llama 2 7B's 8h/3 MLP) follows a --heads or --hidden given with it, and what is
// published on its own (grouped-query heads, Llama 3's MLP) is kept.
TEST(LlmWorkload, PresetsAndTheShapeFlagsGivenWithThem) {
  struct Published {
    const char* name;
    int64_t heads, kv_heads, ffn_hidden;
  };
  for (const Published& p :
       {Published{"gpt3-13b", 40, 40, 20480}, Published{"gpt3-175b", 96, 96, 49152},
        Published{"llama2-7b", 32, 32, 11008}, Published{"llama2-70b", 64, 8, 28672},
        Published{"llama3-8b", 32, 8, 14336}, Published{"llama3-70b", 64, 8, 28672},
        Published{"mixtral-8x7b", 32, 8, 14336}}) {
    LlmConfig c;
    ASSERT_TRUE(ApplyLlmPreset(p.name, &c).ok()) << p.name;
    c.pp = 2;
    ASSERT_TRUE(CheckLlmConfig(&c).ok()) << p.name;
    EXPECT_EQ(c.heads, p.heads) << p.name;
    EXPECT_EQ(c.kv_heads, p.kv_heads) << p.name;
    EXPECT_EQ(c.ffn_hidden, p.ffn_hidden) << p.name;
  }
  LlmConfig gpt;  // --model gpt3-13b --hidden 512 --heads 8
  ASSERT_TRUE(ApplyLlmPreset("gpt3-13b", &gpt).ok());
  gpt.hidden = 512;
  gpt.heads = 8;
  const Status ok = CheckLlmConfig(&gpt);
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(gpt.kv_heads, 8);
  EXPECT_EQ(gpt.ffn_hidden, 4 * 512);
  LlmConfig llama;  // --model llama3-8b --heads 16 --hidden 2048
  ASSERT_TRUE(ApplyLlmPreset("llama3-8b", &llama).ok());
  llama.heads = 16;
  llama.hidden = 2048;
  ASSERT_TRUE(CheckLlmConfig(&llama).ok());
  EXPECT_EQ(llama.kv_heads, 8);
  EXPECT_EQ(llama.ffn_hidden, 14336);
}

// Mixtral 8x7B's released model has 46,702,792,704 parameters: its weights, plus the routers
// (32 layers × 4096 × 8) and norms (65 × 4096), which Orrery leaves out.
TEST(LlmWorkload, MixtralParametersAndFlops) {
  LlmConfig c;
  ASSERT_TRUE(ApplyLlmPreset("mixtral-8x7b", &c).ok());
  c.dp = 8;
  c.ep = 8;
  c.tp = 2;
  c.sequence_parallel = true;
  c.pp = 2;
  c.seq_length = 1024;
  c.micro_batches = 2;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  EXPECT_EQ(c.experts, 8);
  EXPECT_EQ(c.moe_top_k, 2);
  const LlmShape s = ShapeOf(c);
  ASSERT_EQ(s.padded_vocab, 32000);
  int64_t weights = 0;
  for (int64_t stage = 0; stage < c.pp; ++stage) {
    weights += (s.DenseStageParams(stage) + s.ExpertStageParams() * c.ep) * c.tp;
  }
  EXPECT_EQ(weights, int64_t{46702792704} - 32 * 4096 * 8 - 65 * 4096);
  // Per token and layer, forward: attention as Llama's, the router's 2·h·8 and two experts'
  // SwiGLU MLPs.
  const double h = 4096, d = 128, kv = 8, f = 14336, tokens = 1024;
  EXPECT_DOUBLE_EQ(s.layer_forward_flops, tokens *
                                              (2 * h * (h + 2 * kv * d) + 2 * h * h + 4 * 1024 * h +
                                               2 * h * 8 + 2 * 3 * 2 * h * f) /
                                              2);
  EXPECT_DOUBLE_EQ(ModelFlops(AllRanks(c)), s.step_flops);
}

TEST(LlmWorkload, CommGroupsJson) {
  LlmConfig c = SmallGpt();
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  EXPECT_EQ(LlmCommGroupsJson(c),
            "{\n \"1\": [0, 1],\n \"2\": [2, 3],\n \"3\": [4, 5],\n \"4\": [6, 7],\n"
            " \"5\": [0, 2],\n \"6\": [1, 3],\n \"7\": [4, 6],\n \"8\": [5, 7]\n}\n");
  c.dp = c.tp = c.pp = 1;
  c.micro_batches = 1;
  c.global_batch_size = 0;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  EXPECT_EQ(LlmCommGroupsJson(c), "{}\n");
  // One NPU: no groups, no metadata, no collectives.
  for (const Node& n : BuildLlmRank(c, 0)) {
    EXPECT_EQ(n.type(), ChakraProtoMsg::COMP_NODE) << n.name();
  }
}

TEST(LlmWorkload, DefaultsFollowMegatron) {
  LlmConfig c;
  c.layers = 4;
  c.hidden = 4096;
  c.heads = 32;
  c.mlp = Mlp::kSwiglu;
  c.pp = 2;
  c.dp = 3;
  ASSERT_TRUE(CheckLlmConfig(&c).ok());
  EXPECT_EQ(c.kv_heads, 32);
  EXPECT_EQ(c.ffn_hidden, 11008);  // Llama: 8·4096/3 = 10922 up to a multiple of 256
  EXPECT_EQ(c.micro_batches, 8);   // 4 per pipeline stage
  EXPECT_EQ(c.global_batch_size, 8 * 3);
  LlmConfig g;
  g.layers = 4;
  g.hidden = 64;
  g.heads = 4;
  g.dp = 4;
  g.micro_batch_size = 2;
  g.global_batch_size = 64;
  ASSERT_TRUE(CheckLlmConfig(&g).ok());
  EXPECT_EQ(g.ffn_hidden, 256);
  EXPECT_EQ(g.micro_batches, 8);
}

TEST(LlmWorkload, BadConfigurationsNameTheFlagTheValueAndWhatIsValid) {
  auto problems = [](LlmConfig c) { return CheckLlmConfig(&c).message(); };
  LlmConfig c = SmallGpt();
  c.layers = 9;             // not a multiple of pp 2
  c.heads = 6;              // hidden 1024 is not a multiple; tp 2 divides it
  c.kv_heads = 4;           // does not divide 6
  c.global_batch_size = 7;  // micro-batches 3 × 2 × dp 2 = 12
  const std::string m = problems(c);
  EXPECT_NE(m.find("--pp is '2'; expected a divisor of --layers (9)"), std::string::npos) << m;
  EXPECT_NE(m.find("--hidden is '1024'; expected a multiple of --heads (6)"), std::string::npos)
      << m;
  EXPECT_NE(m.find("--kv-heads is '4'; expected a divisor of --heads (6)"), std::string::npos) << m;
  EXPECT_NE(m.find("--global-batch-size is '7'; expected 12"), std::string::npos) << m;
  c = SmallGpt();
  c.tp = 16;
  EXPECT_NE(problems(c).find("--tp is '16'; expected a divisor of --heads (8)"), std::string::npos);
  // A stage whose optimizer step's bytes pass int64 (its tensor_size had wrapped negative, and
  // the trace written was one its own reader refused).
  c = SmallGpt();
  c.layers = 30000;
  c.pp = 1;
  c.hidden = 1048576;
  c.heads = 1;
  c.kv_heads = 1;
  c.tp = 1;
  c.seq_length = 1;
  c.vocab = 1;
  c.ffn_hidden = 4 * c.hidden;
  EXPECT_NE(problems(c).find("would make a gradient reduction of more than 2^53 bytes"),
            std::string::npos)
      << problems(c);
  c = SmallGpt();
  c.kv_heads = 1;
  EXPECT_NE(problems(c).find("--tp is '2'; expected a divisor of --kv-heads (1)"),
            std::string::npos);
  c = SmallGpt();
  c.micro_batches = 0;
  c.global_batch_size = 6;
  EXPECT_NE(problems(c).find("--global-batch-size is '6'; expected a multiple of "
                             "--micro-batch-size × --dp (4)"),
            std::string::npos);
  c = SmallGpt();
  c.layers = 0;
  c.dp = 0;
  const std::string zero = problems(c);
  EXPECT_NE(zero.find("--layers is '0'; expected a whole number from 1 to 100000"),
            std::string::npos);
  EXPECT_NE(zero.find("--dp is '0'"), std::string::npos) << zero;
  c = SmallGpt();
  c.peak_tflops = 0;
  EXPECT_NE(problems(c).find("--peak-tflops"), std::string::npos);
  c.peak_tflops = 1e-300;  // had written durations of 2^63 us
  EXPECT_NE(problems(c).find("--peak-tflops is '1e-300'; expected a number in [0.001, 1e9]"),
            std::string::npos)
      << problems(c);
  c = SmallGpt();
  c.mem_bw_gbps = 1e12;
  EXPECT_NE(problems(c).find("--mem-bw-gbps is '1e+12'; expected a number in [0.001, 1e9]"),
            std::string::npos)
      << problems(c);
  c = SmallGpt();
  c.comm_streams = 3;
  EXPECT_NE(problems(c).find("--comm-streams is '3'; expected a whole number from 1 to 2"),
            std::string::npos);
  c = SmallGpt();
  c.virtual_stages = 3;  // 4 layers per stage
  c.micro_batches = 3;   // not a multiple of pp 2
  const std::string interleaved = problems(c);
  EXPECT_NE(interleaved.find("--virtual-stages is '3'; expected a divisor of the 4 layers per "
                             "stage"),
            std::string::npos)
      << interleaved;
  EXPECT_NE(interleaved.find("--micro-batches is '3'; expected a multiple of --pp (2)"),
            std::string::npos)
      << interleaved;
  c = SmallGpt();
  c.virtual_stages = 2;
  c.micro_batches = 4;
  c.schedule = PipelineSchedule::kGpipe;
  EXPECT_NE(problems(c).find("--virtual-stages is '2'; expected 1 with --schedule gpipe"),
            std::string::npos);
  c.schedule = PipelineSchedule::kOneFOneB;
  c.pp = 1;
  EXPECT_NE(problems(c).find("--virtual-stages is '2'; expected 1 with --pp 1"), std::string::npos);
  c = SmallMoe();
  c.ep = 3;                     // divides neither 4 experts nor dp 4
  c.sequence_parallel = false;  // needed with tp 2
  const std::string moe = problems(c);
  EXPECT_NE(moe.find("--ep is '3'; expected a divisor of --experts (4)"), std::string::npos) << moe;
  EXPECT_NE(moe.find("--ep is '3'; expected a divisor of --dp (4)"), std::string::npos) << moe;
  EXPECT_NE(moe.find("--tp is '2'; expected 1 with --experts unless --sequence-parallel"),
            std::string::npos)
      << moe;
  c = SmallMoe();
  c.moe_top_k = 5;  // more than the experts
  EXPECT_NE(problems(c).find("--moe-top-k is '5'; expected a whole number from 1 to 4"),
            std::string::npos);
  c = SmallGpt();
  c.ep = 2;
  c.sequence_parallel = true;
  c.seq_length = 511;
  const std::string dense = problems(c);
  EXPECT_NE(dense.find("--ep is '2'; expected 1 without --experts"), std::string::npos) << dense;
  EXPECT_NE(dense.find("--seq-length is '511'; expected a multiple of --tp (2) with "
                       "--sequence-parallel"),
            std::string::npos)
      << dense;
  c = SmallGpt();
  c.micro_batches = 1000000;
  c.layers = 400;
  EXPECT_NE(problems(c).find("nodes per NPU"), std::string::npos);
  LlmConfig p;
  const std::string preset = ApplyLlmPreset("llama2-7", &p).message();
  EXPECT_NE(preset.find("--model is 'llama2-7'; expected one of gpt3-13b, gpt3-175b, llama2-7b"),
            std::string::npos)
      << preset;
  EXPECT_NE(preset.find("did you mean llama2-7b?"), std::string::npos) << preset;
}

}  // namespace
}  // namespace et
}  // namespace orrery
