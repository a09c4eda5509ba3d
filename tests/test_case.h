// For end-to-end tests: writes a small case (per-rank ETs, a system JSON, a one-dimensional
// network of 50 GB/s and 500 ns links) into the test's temporary directory.
//
//   RunOptions o = WriteTestCase("p2p", ranks, system_json, "Ring");
//   StatusOr<RunResult> r = RunSimulation(o);
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "et_feeder/writer.h"
#include "runner/run.h"

namespace orrery {

// A system config of ring collectives, 4 chunks, one active chunk per dimension.
inline constexpr char kRingTestSystem[] = R"({
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
    "local-mem-bw": 1600 })";

inline std::string TestTmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// `topology`: the one dimension's block, Ring, Switch or FullyConnected, of ranks.size() NPUs.
inline RunOptions WriteTestCase(const std::string& name,
                                const std::vector<std::vector<ChakraProtoMsg::Node>>& ranks,
                                const std::string& system_json, const std::string& topology) {
  const std::string prefix = TestTmp(name);
  std::ofstream(prefix + ".system.json") << system_json;
  std::ofstream(prefix + ".net.yml")
      << "topology: [ " << topology << " ]\nnpus_count: [ " << ranks.size()
      << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  Status s = et::WriteRankFiles(prefix, ranks);
  EXPECT_TRUE(s.ok()) << s.message();
  RunOptions o;
  o.workload = prefix;
  o.system_config = prefix + ".system.json";
  o.network_config = prefix + ".net.yml";
  return o;
}

// Compute, a collective and a send/receive in one graph, on 4 NPUs. Every NPU: fwd (5 us) -> a
// 1 MiB all-reduce. NPU 0 also runs a 100 us kernel after fwd, overlapping the all-reduce, then
// sends 1 MiB to NPU 1 after the all-reduce; NPU 1 receives it.
inline std::vector<std::vector<ChakraProtoMsg::Node>> MixedGraphRanks() {
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks(4);
  for (auto& r : ranks) {
    r = {et::MakeCompNode(1, "fwd", 5),
         et::MakeCollNode(2, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1})};
  }
  ranks[0].push_back(et::MakeCompNode(3, "long_kernel", 100, {1}));
  ranks[0].push_back(et::MakeSendNode(4, /*peer=*/1, 1 << 20, /*tag=*/9, {2}));
  ranks[1].push_back(et::MakeRecvNode(4, /*peer=*/0, 1 << 20, /*tag=*/9, {2}));
  return ranks;
}

}  // namespace orrery
