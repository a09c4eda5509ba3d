// The symmetry shortcut (runner/symmetry.h) against the full simulation (--exact), on runs with
// contention: pipeline sends sharing a switch with data-parallel reductions, several jobs on one
// machine, a slow link, a straggler NPU, and every collective algorithm. Where the shortcut
// runs, every NPU's finish must equal the full run's within 0.1% (it is exact by construction:
// these tests find them equal to the picosecond); where it must step aside, the run says why and
// simulates every NPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "config/test_files.h"
#include "et_feeder/llm_copies.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/writer.h"
#include "runner/run.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

struct Compared {
  RunResult shortcut;
  RunResult exact;
};

// Runs `o` with and without the shortcut; both must run and agree within 0.1% per NPU.
Compared RunBoth(RunOptions o, const std::string& what) {
  RunOptions exact = o;
  exact.exact = true;
  StatusOr<RunResult> a = RunSimulation(o);
  StatusOr<RunResult> b = RunSimulation(exact);
  EXPECT_TRUE(a.ok()) << what << ": " << a.status().message();
  EXPECT_TRUE(b.ok()) << what << ": " << b.status().message();
  if (!a.ok() || !b.ok()) return {};
  EXPECT_TRUE(b->shortcut.empty()) << what;
  EXPECT_EQ(a->num_npus(), b->num_npus()) << what;
  int equal = 0;
  for (int i = 0; i < a->num_npus() && i < b->num_npus(); ++i)
    equal += a->npus[i].finish == b->npus[i].finish;
  std::printf("%s: %d of %d NPUs finish at the same picosecond (%s)\n", what.c_str(), equal,
              b->num_npus(), a->shortcut.empty() ? "every NPU simulated" : a->shortcut.c_str());
  for (int i = 0; i < a->num_npus() && i < b->num_npus(); ++i) {
    const double fa = static_cast<double>(a->npus[i].finish.ps());
    const double fb = static_cast<double>(b->npus[i].finish.ps());
    EXPECT_LE(std::abs(fa - fb), 1e-3 * fb)
        << what << ": NPU " << i << " finishes at " << a->npus[i].finish.ToHuman()
        << " with the shortcut, " << b->npus[i].finish.ToHuman() << " without";
    EXPECT_EQ(a->npus[i].gpu_compute, b->npus[i].gpu_compute) << what << ": NPU " << i;
    EXPECT_EQ(a->npus[i].bytes_sent, b->npus[i].bytes_sent) << what << ": NPU " << i;
    EXPECT_EQ(a->npus[i].bytes_collective, b->npus[i].bytes_collective) << what << ": NPU " << i;
  }
  return {std::move(*a), std::move(*b)};
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = TestTmp(name);
  std::ofstream(path) << text;
  return path;
}

// A small GPT step generated as a manifest's copies: tp ranks per node, the nodes on a switch.
RunOptions LlmCase(const std::string& name, int64_t dp, int64_t tp, int64_t pp,
                   const std::string& system, et::LlmConfig c = {}) {
  c.layers = 4;
  c.hidden = 1024;
  c.heads = 8;
  c.seq_length = 512;
  c.vocab = 4096;
  c.dp = dp;
  c.tp = tp;
  c.pp = pp;
  c.micro_batches = 2 * pp;
  Status s = et::CheckLlmConfig(&c);
  EXPECT_TRUE(s.ok()) << s.message();
  const std::string prefix = TestTmp(name);
  s = et::WriteLlmCopies(c, prefix, nullptr, nullptr);
  EXPECT_TRUE(s.ok()) << s.message();
  RunOptions o;
  o.workload = prefix;
  o.system_config = Write(name + ".system.yaml", system);
  o.network_config =
      Write(name + ".net.yml", "topology: [ Switch, Switch ]\nnpus_count: [ " + std::to_string(tp) +
                                   ", " + std::to_string(dp * pp) +
                                   " ]\nbandwidth: [ 400.0, 25.0 ]\n"
                                   "latency: [ 700.0, 3000.0 ]\n");
  return o;
}

constexpr char kTwoDimSystem[] = R"({
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring", "ring"],
    "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
    "all-to-all-implementation": ["direct", "direct"], "collective-optimization": "localBWAware",
    "local-mem-bw": 1600, "group-collectives": "hierarchical", "p2p-chunk-size": 131072,
    "communication-slots": 2 })";

TEST(Shortcut, DataParallelCopiesShareTheSwitchWithPipelineSends) {
  // Pipeline hand-offs and the data-parallel reduction cross the same NICs and switch; with
  // --comm-streams 2 and per-layer reduction they overlap the tensor-parallel all-reduces too.
  et::LlmConfig overlapped;
  overlapped.comm_streams = 2;
  overlapped.grad_sync = et::GradSync::kPerLayer;
  for (const auto& [name, c] :
       {std::pair<std::string, et::LlmConfig>{"llm_end", {}}, {"llm_overlapped", overlapped}}) {
    for (Backend backend : {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware}) {
      RunOptions o = LlmCase(name, /*dp=*/8, /*tp=*/2, /*pp=*/2, kTwoDimSystem, c);
      o.backend = backend;
      const Compared r = RunBoth(o, name);
      EXPECT_NE(r.shortcut.shortcut.find("32 NPUs simulated as 4"), std::string::npos)
          << r.shortcut.shortcut;
      EXPECT_LT(r.shortcut.events * 4, r.exact.events) << name;
    }
  }
}

TEST(Shortcut, NcclModelMachineOnAThousandNpus) {
  // dgx-h100-ndr's system and NCCL model, widened: 128 copies of 8 ranks on 1024 NPUs.
  std::string system = ReadWholeFile(RunfilePath("configs/machines/dgx-h100-ndr/system.yaml"));
  const std::string model = "nccl-model: nccl.yaml";
  ASSERT_NE(system.find(model), std::string::npos);
  system.replace(system.find(model), model.size(),
                 "nccl-model: " + RunfilePath("configs/machines/dgx-h100-ndr/nccl.yaml"));
  RunOptions o = LlmCase("llm_1024", /*dp=*/128, /*tp=*/4, /*pp=*/2, system);
  const Compared r = RunBoth(o, "1024 NPUs");
  EXPECT_NE(r.shortcut.shortcut.find("1024 NPUs simulated as 8"), std::string::npos)
      << r.shortcut.shortcut;
  // The tuner probes a data-parallel group on its representatives too: the same choices and
  // predicted times.
  ASSERT_EQ(r.shortcut.nccl_choices.size(), r.exact.nccl_choices.size());
  std::multiset<std::string> a, b;
  for (const NcclTunedCollective& c : r.shortcut.nccl_choices) {
    a.insert(c.choice + " " + std::to_string(c.size) + " " + c.predicted.ToHuman());
  }
  for (const NcclTunedCollective& c : r.exact.nccl_choices) {
    b.insert(c.choice + " " + std::to_string(c.size) + " " + c.predicted.ToHuman());
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(r.exact.nccl_choices.back().group_size, 4);  // a data-parallel group was tuned
}

TEST(Shortcut, AStragglerNpuStepsAside) {
  RunOptions o = LlmCase("llm_straggler", 4, 2, 2, kTwoDimSystem);
  o.npu_compute_scale = "5:1.5";
  const Compared r = RunBoth(o, "straggler");
  EXPECT_TRUE(r.shortcut.shortcut.empty()) << r.shortcut.shortcut;
  ASSERT_FALSE(r.shortcut.shortcut_notes.empty());
  EXPECT_NE(r.shortcut.shortcut_notes[0].find("--npu-compute-scale gives NPU"), std::string::npos)
      << r.shortcut.shortcut_notes[0];
  // The same scale on every NPU keeps the symmetry.
  o.npu_compute_scale = "0-15:1.5";
  EXPECT_FALSE(RunBoth(o, "uniform scale").shortcut.shortcut.empty());
}

TEST(Shortcut, ASlowLinkStepsAsideUnlessEveryImageIsAsSlow) {
  RunOptions o = LlmCase("llm_slow", 4, 2, 2, kTwoDimSystem);
  std::ofstream(o.network_config, std::ios::app)
      << "slow-links: [ \"d1:npu1->sw1.1\" ]\nslow-link-bandwidth-scale: 0.5\n";
  const Compared r = RunBoth(o, "slow link");
  EXPECT_TRUE(r.shortcut.shortcut.empty()) << r.shortcut.shortcut;
}

TEST(Shortcut, SeveralJobsSimulateEveryNpu) {
  RunOptions a = LlmCase("llm_job_a", 2, 2, 2, kTwoDimSystem);
  RunOptions jobs;
  const std::string file =
      Write("two_jobs.yaml", "jobs:\n  - workload: " + a.workload +
                                 "_all\n    npus: 0-7\n  - workload: " + a.workload +
                                 "_all\n    npus: 8-15\n");
  et::LlmConfig c;
  c.layers = 4;
  c.hidden = 1024;
  c.heads = 8;
  c.seq_length = 512;
  c.vocab = 4096;
  c.dp = 2;
  c.tp = 2;
  c.pp = 2;
  ASSERT_TRUE(et::CheckLlmConfig(&c).ok());
  ASSERT_TRUE(et::WriteLlmAllRanks(c, a.workload + "_all", nullptr).ok());
  jobs.jobs = file;
  jobs.system_config = a.system_config;
  jobs.network_config = Write("two_jobs.net.yml",
                              "topology: [ Switch, Switch ]\nnpus_count: [ 2, 8 ]\n"
                              "bandwidth: [ 400.0, 25.0 ]\nlatency: [ 700.0, 3000.0 ]\n");
  const Compared r = RunBoth(jobs, "two jobs");
  EXPECT_TRUE(r.shortcut.shortcut.empty()) << r.shortcut.shortcut;
}

// One trace on every NPU with world collectives only: every dimension's rotation is a symmetry,
// but only the ring-like algorithms run alike under it; the others break their dimension's
// generator, and the run goes on without it.
TEST(Shortcut, EveryAlgorithmOnTwoDimensions) {
  struct Algo {
    const char* name;
    bool keeps;  // the rotation of its dimension holds
  };
  const Algo algos[] = {
      {"ring", true}, {"direct", true}, {"halvingDoubling", false}, {"doubleBinaryTree", false}};
  const char* topologies[] = {"Ring, Ring", "Switch, FullyConnected", "Ring, Switch"};
  for (int k = 0; k < 3; ++k) {
    const char* topology = topologies[k];
    for (const Algo& algo : algos) {
      const std::string a = algo.name;
      const bool tree = a == "doubleBinaryTree";
      const std::string system = std::string(R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
              "active-chunks-per-dimension": 2, "preferred-dataset-splits": 4,
              "collective-optimization": ")") +
                                 (tree ? "baseline" : "localBWAware") + R"(", "local-mem-bw": 1600,
              "all-reduce-implementation": [")" +
                                 a + "\", \"" + a + R"("],
              "all-gather-implementation": ["ring", "ring"],
              "reduce-scatter-implementation": ["ring", "ring"],
              "all-to-all-implementation": ["direct", "direct"]})";
      std::vector<std::vector<Node>> ranks(16);
      for (auto& r : ranks) {
        r = {et::MakeCompNode(1, "fwd", 3),
             et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1}),
             et::MakeCollNode(3, "ag", ChakraProtoMsg::ALL_GATHER, 1 << 16, {2}),
             et::MakeCollNode(4, "a2a", ChakraProtoMsg::ALL_TO_ALL, 1 << 18, {3}),
             et::MakeCollNode(5, "rs", ChakraProtoMsg::REDUCE_SCATTER, 1 << 18, {4})};
      }
      const std::string name = std::string("world_") + a + "_" + std::to_string(k);
      RunOptions o = WriteTestCase(name, ranks, system, "Ring");
      o.network_config =
          Write(name + ".2d.yml", std::string("topology: [ ") + topology +
                                      " ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 50.0, 25.0 ]\n"
                                      "latency: [ 500.0, 900.0 ]\n");
      for (Backend backend : {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware}) {
        o.backend = backend;
        const std::string what = name + " " + topology;
        const Compared r = RunBoth(o, what);
        if (algo.keeps) {
          EXPECT_NE(r.shortcut.shortcut.find("16 NPUs simulated as 1 "), std::string::npos)
              << what << ": " << r.shortcut.shortcut;
        } else {
          ASSERT_FALSE(r.shortcut.shortcut_notes.empty()) << what;
          EXPECT_NE(r.shortcut.shortcut_notes[0].find("does not hold"), std::string::npos)
              << r.shortcut.shortcut_notes[0];
        }
      }
    }
  }
}

TEST(Shortcut, ABroadcastFromOneRootBreaksTheRotation) {
  std::vector<std::vector<Node>> ranks(8);
  for (auto& r : ranks) {
    r = {et::MakeCollNode(1, "bcast", ChakraProtoMsg::BROADCAST, 1 << 20),
         et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1})};
  }
  const Compared r = RunBoth(WriteTestCase("world_bcast", ranks, kRingTestSystem, "Ring"), "bcast");
  EXPECT_TRUE(r.shortcut.shortcut.empty()) << r.shortcut.shortcut;
  ASSERT_FALSE(r.shortcut.shortcut_notes.empty());
  EXPECT_NE(r.shortcut.shortcut_notes[0].find("broadcast phase"), std::string::npos)
      << r.shortcut.shortcut_notes[0];
}

TEST(Shortcut, ReplicatedTraceWithSendsOnATorus) {
  // The bundled example's 8 ranks (sends, an all-reduce per layer, remote memory per NPU) as 2
  // copies on a 4 x 4 torus: the shift by 8 NPUs rotates the second dimension by 2.
  RunOptions o;
  o.workload = RunfilePath("examples/dp_step/dp_step");
  o.system_config = RunfilePath("examples/dp_step/system.json");
  o.network_config = RunfilePath("configs/network/torus_2d_4x4.yml");
  o.replicate_trace = true;
  for (Backend backend : {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware}) {
    o.backend = backend;
    const Compared r = RunBoth(o, "replicated dp_step");
    EXPECT_NE(r.shortcut.shortcut.find("16 NPUs simulated as 8"), std::string::npos)
        << r.shortcut.shortcut;
  }
  // The packet backend does not map its links: every NPU.
  o.backend = Backend::kPacket;
  EXPECT_TRUE(RunBoth(o, "packet").shortcut.shortcut.empty());
}

}  // namespace
}  // namespace orrery
