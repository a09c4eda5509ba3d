// Generated transformer training steps (et_feeder/llm_workload.h) through the simulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "et_feeder/llm_workload.h"
#include "runner/run.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

// The generated step of `c` with a system config and a network config (their texts).
RunOptions LlmCase(const std::string& name, const et::LlmConfig& c, const std::string& system,
                   const std::string& network) {
  const std::string prefix = TestTmp(name);
  Status s = et::WriteLlmWorkload(c, prefix);
  EXPECT_TRUE(s.ok()) << s.message();
  std::ofstream(prefix + ".system.json") << system;
  std::ofstream(prefix + ".net.yml") << network;
  RunOptions o;
  o.workload = prefix;
  o.system_config = prefix + ".system.json";
  o.network_config = prefix + ".net.yml";
  return o;
}

// One switch of `bandwidth` GB/s and `latency` ns for every NPU of `c`.
std::string OneSwitch(const et::LlmConfig& c, const char* bandwidth, const char* latency) {
  return "topology: [ Switch ]\nnpus_count: [ " + std::to_string(c.dp * c.tp * c.pp) +
         " ]\nbandwidth: [ " + bandwidth + " ]\nlatency: [ " + latency + " ]\n";
}

// A network that costs next to nothing: one switch, 1e6 GB/s, no latency.
RunOptions FreeNetworkCase(const std::string& name, const et::LlmConfig& c) {
  return LlmCase(name, c, kRingTestSystem, OneSwitch(c, "1000000.0", "0.0"));
}

int64_t DurationNs(const std::vector<Node>& rank, const std::string& prefix) {
  int64_t ns = 0;
  for (const Node& n : rank) {
    if (n.type() == ChakraProtoMsg::COMP_NODE && n.name().rfind(prefix, 0) == 0) {
      // As ASTRA-sim, a node of 0 µs takes 1 ns (compute/roofline.h, ReplayTime).
      ns += std::max<int64_t>(static_cast<int64_t>(n.duration_micros()) * 1000, 1);
    }
  }
  return ns;
}

// A pass of a pipeline stage, run by hand: forward or backward, of virtual stage `vs` (the
// stage itself without interleaving) on micro-batch `mb`.
struct HandPass {
  bool forward;
  int64_t vs, mb;
};

// Runs each stage's passes in its order by the pipeline's rule: a forward pass once virtual
// stage vs − 1 has run that micro-batch's forward, a backward pass once vs + 1 has run its
// backward (`fwd`, `bwd`: each virtual stage's pass times, ns). Returns when each stage is done,
// and counts the hand-offs waited for; fails the test if a stage cannot go on by the rule.
std::vector<int64_t> RunByHand(const std::vector<std::vector<HandPass>>& order,
                               const std::vector<int64_t>& fwd, const std::vector<int64_t>& bwd,
                               int64_t micro_batches, int* hand_offs) {
  const int stages = static_cast<int>(order.size());
  const int64_t virtual_stages = static_cast<int64_t>(fwd.size());
  std::vector<std::vector<int64_t>> fwd_end(virtual_stages,
                                            std::vector<int64_t>(micro_batches, -1));
  std::vector<std::vector<int64_t>> bwd_end = fwd_end;
  std::vector<int64_t> free_at(stages, 0);
  std::vector<size_t> next(stages, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int k = 0; k < stages; ++k) {
      if (next[k] == order[k].size()) continue;
      const HandPass p = order[k][next[k]];
      int64_t ready = free_at[k];
      if (p.forward && p.vs > 0) {
        if (fwd_end[p.vs - 1][p.mb] < 0) continue;
        ready = std::max(ready, fwd_end[p.vs - 1][p.mb]);
        ++*hand_offs;
      }
      if (!p.forward && p.vs < virtual_stages - 1) {
        if (bwd_end[p.vs + 1][p.mb] < 0) continue;
        ready = std::max(ready, bwd_end[p.vs + 1][p.mb]);
        ++*hand_offs;
      }
      free_at[k] = ready + (p.forward ? fwd[p.vs] : bwd[p.vs]);
      (p.forward ? fwd_end : bwd_end)[p.vs][p.mb] = free_at[k];
      ++next[k];
      progress = true;
    }
  }
  for (int k = 0; k < stages; ++k) {
    EXPECT_EQ(next[k], order[k].size()) << "stage " << k << " cannot go on by the rule";
  }
  return free_at;
}

// With communication (almost) free, a pipeline's step is what its schedule gives: stage k runs
// its passes in order, a forward pass once the stage before has run that micro-batch's forward, a
// backward pass once the stage after has run its backward; then the optimizer. The expected step
// is computed here by that rule from each stage's pass times; the simulator's sends, receives and
// dependencies must reproduce it (each hand-off costs at most 1 µs of the free network's
// endpoint delays and serialisation).
TEST(GeneratedLlm, PipelineStepIsWhatItsScheduleGives) {
  for (auto schedule : {et::PipelineSchedule::kOneFOneB, et::PipelineSchedule::kGpipe}) {
    for (int64_t m : {2, 7}) {
      SCOPED_TRACE(std::to_string(m) + (schedule == et::PipelineSchedule::kGpipe ? " gpipe" : ""));
      et::LlmConfig c;
      c.layers = 8;
      c.hidden = 2048;
      c.heads = 16;
      c.seq_length = 1024;
      c.vocab = 256;  // an LM head of 1% of a stage
      c.pp = 4;
      c.micro_batches = m;
      c.schedule = schedule;
      c.peak_tflops = 100;  // durations of tens to hundreds of µs
      ASSERT_TRUE(et::CheckLlmConfig(&c).ok());
      const int stages = 4;
      std::vector<int64_t> fwd(stages), bwd(stages), opt(stages);
      for (int k = 0; k < stages; ++k) {
        const std::vector<Node> rank = et::BuildLlmRank(c, k);
        fwd[k] = DurationNs(rank, "fwd_mb0_");
        bwd[k] = DurationNs(rank, "bwd_mb0_");
        opt[k] = DurationNs(rank, "optimizer_step");
        ASSERT_GT(fwd[k], 0);
        ASSERT_EQ(DurationNs(rank, "fwd_") + DurationNs(rank, "bwd_"), m * (fwd[k] + bwd[k]));
      }
      // The schedule, run by its rule.
      std::vector<std::vector<HandPass>> order(stages);
      for (int k = 0; k < stages; ++k) {
        const int64_t warmup =
            schedule == et::PipelineSchedule::kGpipe ? m : std::min<int64_t>(stages - k - 1, m);
        for (int64_t i = 0; i < warmup; ++i) order[k].push_back({true, k, i});
        for (int64_t i = 0; i < m - warmup; ++i) {
          order[k].push_back({true, k, warmup + i});
          order[k].push_back({false, k, i});
        }
        for (int64_t i = m - warmup; i < m; ++i) order[k].push_back({false, k, i});
      }
      int hand_offs = 0;
      const std::vector<int64_t> free_at = RunByHand(order, fwd, bwd, m, &hand_offs);
      int64_t expected = 0;
      for (int k = 0; k < stages; ++k) expected = std::max(expected, free_at[k] + opt[k]);
      StatusOr<RunResult> r = RunSimulation(FreeNetworkCase("pipeline", c));
      ASSERT_TRUE(r.ok()) << r.status().message();
      const int64_t step = static_cast<int64_t>(r->end.Ns());
      EXPECT_GE(step, expected);
      EXPECT_LE(step, expected + 1000 * hand_offs) << "expected " << expected;
      // And the bubble is what it is said to be: with equal stages, (pp − 1) / (m + pp − 1) of
      // the step; the last stage's LM head makes this one a little longer.
      const double ideal = static_cast<double>(m + stages - 1) * (fwd[0] + bwd[0]) + opt[0];
      EXPECT_NEAR(static_cast<double>(step) / ideal, 1.0, 0.01);
    }
  }
}

// Megatron-LM's interleaved 1F1B: with v model chunks per stage, virtual stage vs = j·pp + k
// runs on stage k; a forward pass of vs waits for vs − 1's of that micro-batch, a backward pass
// for vs + 1's. Each stage runs its passes in Megatron-LM's order (written out here from its
// schedules.py: pass i is micro-batch (i / (pp·v))·pp + i mod pp on chunk (i mod (pp·v)) / pp,
// reversed for backward; 2(pp − k − 1) + (v − 1)·pp warm-up passes, all when m = pp). The
// simulated step is what that rule gives, and the bubble is 1/v of plain 1F1B's: the step is
// (m + (pp − 1)/v)·(F + B) + the optimizer, F and B a stage's whole forward and backward.
TEST(GeneratedLlm, InterleavedPipelineStepIsWhatItsScheduleGives) {
  const int pp = 4;
  for (int64_t v : {2, 4}) {
    for (int64_t m : {4, 8}) {
      SCOPED_TRACE("v " + std::to_string(v) + ", m " + std::to_string(m));
      et::LlmConfig c;
      c.layers = 16;
      c.hidden = 2048;
      c.heads = 16;
      c.seq_length = 1024;
      c.vocab = 256;  // an LM head of 1% of a stage
      c.pp = pp;
      c.virtual_stages = v;
      c.micro_batches = m;
      c.peak_tflops = 100;
      ASSERT_TRUE(et::CheckLlmConfig(&c).ok());
      const int64_t per_chunk = c.layers / (pp * v);
      const int64_t virtual_stages = pp * v;
      // Pass times of each virtual stage: its layers, and the LM head on the last.
      std::vector<int64_t> fwd(virtual_stages), bwd(virtual_stages), opt(pp);
      for (int k = 0; k < pp; ++k) {
        const std::vector<Node> rank = et::BuildLlmRank(c, k);
        opt[k] = DurationNs(rank, "optimizer_step");
        for (int64_t j = 0; j < v; ++j) {
          const int64_t vs = j * pp + k;
          const std::string chunk = "_mb0_chunk" + std::to_string(j) + "_";
          fwd[vs] = DurationNs(rank, "fwd" + chunk);
          bwd[vs] = DurationNs(rank, "bwd" + chunk);
          for (int64_t l = vs * per_chunk; l < (vs + 1) * per_chunk; ++l) {
            fwd[vs] += DurationNs(rank, "fwd_mb0_layer" + std::to_string(l) + "_");
            bwd[vs] += DurationNs(rank, "bwd_mb0_layer" + std::to_string(l) + "_");
          }
          ASSERT_GT(fwd[vs], 0);
        }
      }
      std::vector<std::vector<HandPass>> order(pp);
      const int64_t total = m * v;
      for (int k = 0; k < pp; ++k) {
        auto pass = [&](int64_t i, bool forward) {
          const int64_t j = (i % (pp * v)) / pp;
          return HandPass{forward, (forward ? j : v - 1 - j) * pp + k,
                          (i / (pp * v)) * pp + i % pp};
        };
        const int64_t warmup = m == pp ? total : std::min(2 * (pp - k - 1) + (v - 1) * pp, total);
        for (int64_t i = 0; i < warmup; ++i) order[k].push_back(pass(i, true));
        for (int64_t i = 0; i < total - warmup; ++i) {
          order[k].push_back(pass(warmup + i, true));
          order[k].push_back(pass(i, false));
        }
        for (int64_t i = total - warmup; i < total; ++i) order[k].push_back(pass(i, false));
      }
      int hand_offs = 0;
      const std::vector<int64_t> free_at = RunByHand(order, fwd, bwd, m, &hand_offs);
      int64_t expected = 0;
      for (int k = 0; k < pp; ++k) expected = std::max(expected, free_at[k] + opt[k]);
      StatusOr<RunResult> r = RunSimulation(FreeNetworkCase("interleaved", c));
      ASSERT_TRUE(r.ok()) << r.status().message();
      const int64_t step = static_cast<int64_t>(r->end.Ns());
      EXPECT_GE(step, expected);
      EXPECT_LE(step, expected + 1000 * hand_offs) << "expected " << expected;
      // A stage's whole forward and backward, without the LM head: the first stage's chunks.
      int64_t stage_fwd = 0, stage_bwd = 0;
      for (int64_t j = 0; j < v; ++j) {
        stage_fwd += fwd[j * pp];
        stage_bwd += bwd[j * pp];
      }
      const double ideal =
          (static_cast<double>(m) + static_cast<double>(pp - 1) / static_cast<double>(v)) *
              static_cast<double>(stage_fwd + stage_bwd) +
          static_cast<double>(opt[0]);
      EXPECT_NEAR(static_cast<double>(step) / ideal, 1.0, 0.01);
      // Plain 1F1B on the same model is slower by the rest of its bubble.
      c.virtual_stages = 1;
      StatusOr<RunResult> plain = RunSimulation(FreeNetworkCase("plain", c));
      ASSERT_TRUE(plain.ok()) << plain.status().message();
      const double plain_ideal = static_cast<double>(m + pp - 1) * (stage_fwd + stage_bwd) + opt[0];
      EXPECT_NEAR(static_cast<double>(plain->end.Ns()) / plain_ideal, 1.0, 0.01);
    }
  }
}

// A column-parallel product's backward (Megatron-LM's
// LinearWithGradAccumulationAndAsyncCommunication): the input gradient's all-reduce runs beside
// the weight gradient, and the next node waits for both. One layer on 2 tensor-parallel NPUs, so
// every node waits for the one before: the step is every compute node's time, plus every
// forward all-reduce's, plus for each of the 3 column-parallel backward passes (qkv, fc1, the LM
// head) what its all-reduce takes beyond its weight gradient. Each all-reduce's time is measured
// alone on the same network.
TEST(GeneratedLlm, InputGradientAllReduceRunsBesideTheWeightGradient) {
  et::LlmConfig c;
  c.layers = 1;
  c.hidden = 1024;
  c.heads = 8;
  c.seq_length = 1024;
  c.vocab = 256;  // the LM head's weight gradient (27 µs) is shorter than its all-reduce
  c.tp = 2;
  c.micro_batches = 1;
  c.peak_tflops = 10;
  ASSERT_TRUE(et::CheckLlmConfig(&c).ok());
  const et::LlmShape shape = et::ShapeOf(c);
  auto alone = [](const std::string& name, int64_t bytes) {
    const Node ar = et::MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, bytes);
    StatusOr<RunResult> r =
        RunSimulation(WriteTestCase(name, {{ar}, {ar}}, kRingTestSystem, "Switch"));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->end.ps() : 0;
  };
  const int64_t activations = alone("ar_activations", shape.activation_bytes);
  const int64_t cross_entropy = alone("ar_cross_entropy", 1024 * 4);
  ASSERT_GT(activations, 0);
  const std::vector<Node> rank = et::BuildLlmRank(c, 0);
  int64_t expected = 0, sequential = 0, forward_all_reduces = 0, hidden = 0, exposed = 0;
  for (const Node& n : rank) {
    if (n.type() == ChakraProtoMsg::COMP_NODE) {
      const int64_t ps = std::max<int64_t>(n.duration_micros() * 1000000, 1000);
      expected += ps;
      sequential += ps;
      if (n.name().size() > 6 && n.name().compare(n.name().size() - 6, 6, "_wgrad") == 0) {
        expected += std::max<int64_t>(activations - ps, 0);
        sequential += activations;
        ++(activations > ps ? exposed : hidden);
      }
    }
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE && n.name().rfind("fwd_", 0) == 0) {
      ++forward_all_reduces;
      const int64_t ar =
          n.name().find("cross_entropy") != std::string::npos ? cross_entropy : activations;
      expected += ar;
      sequential += ar;
    }
  }
  EXPECT_EQ(forward_all_reduces, 1 + 2 + 3);  // the embedding's, the layer's, cross entropy's
  // qkv's and fc1's weight gradients outlast their all-reduces; the LM head's does not.
  EXPECT_EQ(hidden, 2);
  EXPECT_EQ(exposed, 1);
  // The network WriteTestCase gives the all-reduces timed alone.
  StatusOr<RunResult> r =
      RunSimulation(LlmCase("overlap", c, kRingTestSystem, OneSwitch(c, "50.0", "500.0")));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->end.ps(), expected);
  EXPECT_LT(expected, sequential);  // the three all-reduces after their weight gradients
}

// Data, tensor and pipeline parallelism together, with every option: the step finishes on every
// NPU (no collective waits for a member that took another path), every NPU's GPU compute is the
// sum of its trace's compute times, and the same inputs give the same step.
TEST(GeneratedLlm, ThreeDimensionalParallelismRunsToTheEnd) {
  struct Case {
    et::PipelineSchedule schedule;
    et::GradSync sync;
    bool recompute, zero;
    int streams;
    int64_t virtual_stages = 1;
    bool sequence_parallel = false;
    int64_t experts = 0, ep = 1;  // mixture of experts over ep replicas
  };
  for (const Case& k :
       {Case{et::PipelineSchedule::kOneFOneB, et::GradSync::kPerLayer, false, false, 1},
        Case{et::PipelineSchedule::kGpipe, et::GradSync::kEnd, true, true, 1},
        Case{et::PipelineSchedule::kOneFOneB, et::GradSync::kPerLayer, true, true, 1},
        Case{et::PipelineSchedule::kOneFOneB, et::GradSync::kPerLayer, false, true, 2},
        Case{et::PipelineSchedule::kGpipe, et::GradSync::kPerLayer, true, false, 2},
        Case{et::PipelineSchedule::kOneFOneB, et::GradSync::kPerLayer, true, true, 1, 2},
        Case{et::PipelineSchedule::kOneFOneB, et::GradSync::kPerLayer, false, false, 2, 2},
        Case{et::PipelineSchedule::kOneFOneB, et::GradSync::kPerLayer, false, true, 1, 1, true},
        Case{et::PipelineSchedule::kOneFOneB, et::GradSync::kPerLayer, false, true, 2, 2, true, 4,
             2},
        Case{et::PipelineSchedule::kGpipe, et::GradSync::kEnd, true, false, 1, 1, true, 4, 1}}) {
    et::LlmConfig c;
    c.layers = 4;
    c.hidden = 512;
    c.heads = 8;
    c.kv_heads = 2;
    c.mlp = et::Mlp::kSwiglu;
    c.seq_length = 256;
    c.vocab = 1000;
    c.dp = 2;
    c.tp = 2;
    c.pp = 2;
    c.micro_batches = k.virtual_stages > 1 ? 4 : 3;  // interleaving: a multiple of pp
    c.virtual_stages = k.virtual_stages;
    c.schedule = k.schedule;
    c.grad_sync = k.sync;
    c.recompute = k.recompute;
    c.distributed_optimizer = k.zero;
    c.comm_streams = k.streams;
    c.sequence_parallel = k.sequence_parallel;
    c.experts = k.experts;
    c.ep = k.ep;
    c.peak_tflops = 10;
    ASSERT_TRUE(et::CheckLlmConfig(&c).ok());
    std::string system = kRingTestSystem;
    // Two streams need two slots, and two chunks in flight to let them overlap.
    if (k.streams == 2) {
      system.replace(system.find("\"active-chunks-per-dimension\": 1"), 32,
                     "\"communication-slots\": 2, \"active-chunks-per-dimension\": 2");
    }
    // Two nodes of four NPUs: a stage's tensor- and data-parallel groups inside a node, the
    // pipeline across.
    const RunOptions o = LlmCase("three_d", c, system,
                                 "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\n"
                                 "bandwidth: [ 300.0, 50.0 ]\nlatency: [ 500.0, 2000.0 ]\n");
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->num_npus(), 8);
    for (int npu = 0; npu < 8; ++npu) {
      const int64_t compute = DurationNs(et::BuildLlmRank(c, npu), "");
      EXPECT_EQ(static_cast<int64_t>(r->breakdown[npu].compute.Ns()), compute) << npu;
      EXPECT_GT(r->breakdown[npu].communication.Ns(), 0) << npu;
      EXPECT_GE(r->breakdown[npu].total.Ns(), compute) << npu;
    }
    StatusOr<RunResult> again = RunSimulation(o);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->end.ps(), r->end.ps());
  }
}

}  // namespace
}  // namespace orrery
