#include "runner/estimate.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "runner/run.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

std::string System(int splits, const std::string& impl = R"(["ring"])") {
  return R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
    "active-chunks-per-dimension": 1, "preferred-dataset-splits": )" +
         std::to_string(splits) + R"(, "all-reduce-implementation": )" + impl +
         R"(, "all-gather-implementation": )" + impl +
         R"(, "collective-optimization": "localBWAware", "local-mem-bw": 1600})";
}

std::vector<std::vector<ChakraProtoMsg::Node>> OneCollective(int npus,
                                                             ChakraProtoMsg::CollectiveCommType t,
                                                             uint64_t bytes) {
  return std::vector<std::vector<ChakraProtoMsg::Node>>(static_cast<size_t>(npus),
                                                        {et::MakeCollNode(1, "coll", t, bytes)});
}

TEST(EstimateTest, ChunkCountFollowsTheSystemLayersRule) {
  using et::CollectiveType;
  // size / splits, whole: 1 MiB in 4 chunks of 256 KiB.
  EXPECT_EQ(ChunkCount(1 << 20, 4, false, 8, CollectiveType::kAllReduce), 4u);
  // A remainder is one more, shorter chunk: 10 B / 3 = chunks of 3 B: 3, 3, 3, 1.
  EXPECT_EQ(ChunkCount(10, 3, false, 2, CollectiveType::kAllReduce), 4u);
  // Chunks below the machine's NPU count grow to it, and the collective with them (ASTRA-sim):
  // 1 MiB / 2^20 = 1 B < 16 NPUs, so 2^20 chunks of 16 B.
  EXPECT_EQ(ChunkCount(1 << 20, 1 << 20, false, 16, CollectiveType::kAllReduce), 1u << 20);
  // An all-gather does not grow: 8 B in 16 splits is 8 chunks of 1 B.
  EXPECT_EQ(ChunkCount(8, 16, false, 4, CollectiveType::kAllGather), 8u);
  // Whole chunks (lanes): 10 B rounded up to 12 for 3 splits: 3 chunks of 4 B.
  EXPECT_EQ(ChunkCount(10, 3, true, 2, CollectiveType::kAllReduce), 3u);
  // Even 0 B grows to the NPU count per chunk (the system layer runs it so); an all-gather not.
  EXPECT_EQ(ChunkCount(0, 4, false, 2, CollectiveType::kAllReduce), 4u);
  EXPECT_EQ(ChunkCount(0, 4, false, 2, CollectiveType::kAllGather), 0u);
}

// The estimate's chunks are the chunk streams the run makes (counted from its recorded phases,
// not from the estimator's rule), and its events and memory are within a factor of two of the
// run's on a case none of the constants was measured on (a 2 x 4 all-gather and all-reduce).
TEST(EstimateTest, ChunksAreTheRunsAndEventsAreClose) {
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks(8);
  for (auto& r : ranks) {
    r = {et::MakeCollNode(1, "ag", ChakraProtoMsg::ALL_GATHER, 3 << 20),
         et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1})};
  }
  RunOptions o = WriteTestCase("estimate_2x4", ranks, System(512, R"(["ring", "ring"])"), "Ring");
  std::ofstream(o.network_config) << "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\n"
                                     "bandwidth: [ 50.0, 25.0 ]\nlatency: [ 500.0, 1000.0 ]\n";
  o.record = true;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->estimate.has_value());
  std::set<std::pair<uint64_t, int>> streams;  // per NPU: (node, stream)
  uint64_t ran_chunks = 0;
  for (const auto& npu : r->phases) {
    streams.clear();
    for (const ChunkPhaseRecord& p : npu) streams.insert({p.node_id, p.stream});
    ran_chunks += streams.size();
  }
  EXPECT_EQ(r->estimate->chunks, ran_chunks);
  EXPECT_EQ(r->estimate->chunks, 2u * 512 * 8);
  EXPECT_EQ(r->estimate->collectives, 16u);
  const double events = static_cast<double>(r->estimate->events);
  EXPECT_GT(events, 0.5 * static_cast<double>(r->events)) << r->events;
  EXPECT_LT(events, 2.0 * static_cast<double>(r->events)) << r->events;
}

// A collective on a group that a METADATA node defines (as PyTorch's traces and generate-llm's
// do) is estimated on that group's NPUs, as when a comm-group file defines it: the estimate
// reads the trace's process_group:init before the run defines anything.
TEST(EstimateTest, GroupsOfMetadataNodesAreEstimatedAsDefined) {
  constexpr int kNpus = 16;
  auto collective = [](uint64_t id, const std::string& pg, std::initializer_list<uint64_t> deps) {
    ChakraProtoMsg::Node n = et::MakeCollNode(id, "ar", ChakraProtoMsg::ALL_REDUCE, 4 << 20, deps);
    et::SetStringAttr(&n, "pg_name", pg);
    return n;
  };
  // Groups of four NPUs: from a comm-group file (groups 1..4), or each NPU's trace defining its
  // own four as group 1 (the ranks a process_group:init lists).
  std::vector<std::vector<ChakraProtoMsg::Node>> with_file(kNpus), with_metadata(kNpus);
  for (int r = 0; r < kNpus; ++r) {
    with_file[r] = {collective(1, std::to_string(r / 4 + 1), {})};
    std::string ranks;
    for (int k = r / 4 * 4; k < r / 4 * 4 + 4; ++k) {
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(k);
    }
    with_metadata[r] = {
        et::MakeMetadataNode(1, "process_group:init",
                             "[{'pg_name': '1', 'pg_desc': 'tp', 'ranks': [" + ranks + "]}]"),
        collective(2, "1", {1})};
  }
  RunOptions file = WriteTestCase("estimate_groups_file", with_file, System(4), "Ring");
  file.comm_group_config = file.workload + ".groups.json";
  std::ofstream(file.comm_group_config)
      << R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7], "3": [8, 9, 10, 11], "4": [12, 13, 14, 15]})";
  RunOptions metadata = WriteTestCase("estimate_groups_metadata", with_metadata, System(4), "Ring");
  file.estimate_only = metadata.estimate_only = true;
  file.exact = metadata.exact = true;  // every NPU counted (no symmetry shortcut)
  StatusOr<RunResult> a = RunSimulation(file);
  StatusOr<RunResult> b = RunSimulation(metadata);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_TRUE(a->estimate && b->estimate);
  // 4 chunks (4 MiB in 4 splits) of a 4-NPU ring all-reduce, 2 (4 - 1) messages each, on each
  // of the 16 NPUs; on the 16-NPU world it would be 2 (16 - 1) per chunk.
  EXPECT_EQ(a->estimate->chunks, b->estimate->chunks);
  EXPECT_EQ(a->estimate->messages, b->estimate->messages);
  EXPECT_EQ(b->estimate->messages, uint64_t{kNpus} * 4 * 2 * (4 - 1));
}

// The issue's case: 16 NPUs, preferred-dataset-splits 1048576, a 1 MiB all-reduce: 2^20 chunks
// of 16 B on each NPU, about 8 GB; refused before it starts, naming the node, the splits and
// the flag, and --dry-run (estimate_only) gives the estimate without running.
TEST(EstimateTest, ARunPastItsBudgetStopsBeforeItStarts) {
  RunOptions o =
      WriteTestCase("estimate_splits", OneCollective(16, ChakraProtoMsg::ALL_REDUCE, 1 << 20),
                    System(1 << 20), "Ring");
  o.budget.max_memory = uint64_t{4} << 30;
  // Every NPU runs the same file with a world all-reduce: the symmetry shortcut simulates one
  // of them (runner/symmetry.h), and the estimate counts that NPU alone, 1/16 of the chunks.
  StatusOr<RunResult> shortcut = RunSimulation([&] {
    RunOptions d = o;
    d.estimate_only = true;
    return d;
  }());
  ASSERT_TRUE(shortcut.ok()) << shortcut.status().message();
  EXPECT_EQ(shortcut->estimate->chunks, uint64_t{1} << 20);
  // Every NPU simulated: about 8 GB, refused.
  o.exact = true;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("this run would need about "), std::string::npos) << m;
  EXPECT_NE(m.find("of memory (the budget is 4.29 GB, --max-memory)"), std::string::npos) << m;
  EXPECT_NE(m.find("16777216 chunks"), std::string::npos) << m;
  EXPECT_NE(m.find("'coll' of "), std::string::npos) << m;
  EXPECT_NE(m.find("in 1048576 chunks (preferred-dataset-splits 1048576 in "), std::string::npos)
      << m;
  EXPECT_NE(m.find("Give --max-memory "), std::string::npos) << m;
  EXPECT_NE(m.find("G to run it anyway"), std::string::npos) << m;

  o.estimate_only = true;
  r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->estimate.has_value());
  EXPECT_TRUE(r->npus.empty());  // nothing ran
  EXPECT_EQ(r->estimate->chunks, uint64_t{16} << 20);
  // A ring all-reduce: 2 (16 - 1) messages per chunk per NPU.
  EXPECT_EQ(r->estimate->messages, (uint64_t{16} << 20) * 30);
  EXPECT_GT(r->estimate->memory_bytes, uint64_t{4} << 30);
  const std::string text = DescribeRunCost(*r->estimate);
  EXPECT_NE(text.find("estimate: 16 NPUs, 16 nodes, 16 collectives in 16777216 chunks"),
            std::string::npos)
      << text;
}

TEST(EstimateTest, TheWallTimeGuessStopsAPacketRunUnlessForced) {
  // 8 NPUs, a 64 MiB all-reduce times 1e6 in 4 chunks: messages of 2 TB, 5e8 packets each,
  // 2e11 packet hops in all (days); the run would not end in any test's time.
  RunOptions o =
      WriteTestCase("estimate_packets", OneCollective(8, ChakraProtoMsg::ALL_REDUCE, 64 << 20),
                    System(4), "Ring");
  o.backend = Backend::kPacket;
  o.comm_scale = 1e6;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("of wall time (more than 1 h)"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("Give --force to run it anyway"), std::string::npos)
      << r.status().message();
  // --force lifts the wall-time limit (checked on the estimate: the run would take hours).
  o.estimate_only = true;
  r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  RunBudget forced;
  forced.force = true;
  forced.max_memory = uint64_t{1} << 40;
  EXPECT_TRUE(CheckRunBudget(*r->estimate, forced).ok());
  EXPECT_FALSE(CheckRunBudget(*r->estimate, RunBudget{}).ok());
}

TEST(EstimateTest, ByteCounts) {
  EXPECT_EQ(ParseByteCount("4096"), 4096);
  EXPECT_EQ(ParseByteCount("16G"), int64_t{16} << 30);
  EXPECT_EQ(ParseByteCount("512MB"), int64_t{512} << 20);
  EXPECT_EQ(ParseByteCount("1.5k"), 1536);
  EXPECT_EQ(ParseByteCount("1e9"), 1000000000);
  for (const char* bad : {"", "G", "-1G", "0", "12Q", "1e30"})
    EXPECT_EQ(ParseByteCount(bad), -1) << bad;
  EXPECT_EQ(HumanBytes(8050000000), "8.05 GB");
  EXPECT_EQ(HumanSeconds(402), "6.7 min");
}

}  // namespace
}  // namespace orrery
