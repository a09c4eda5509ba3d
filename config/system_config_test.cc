#include "config/system_config.h"

#include "config/test_files.h"
#include "gtest/gtest.h"

namespace orrery {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(SystemConfigTest, DefaultsWhenKeysAreAbsent) {
  StatusOr<SystemConfig> c = LoadSystemConfig(WriteTestFile("sys_min.json", "{\"peak-perf\": 1}"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->scheduling_policy, "LIFO");
  EXPECT_EQ(c->collective_optimization, "baseline");
  EXPECT_EQ(c->active_chunks_per_dimension, 1);
  EXPECT_EQ(c->preferred_dataset_splits, 1);
  EXPECT_FALSE(c->endpoint_delay_ns.has_value());
  EXPECT_EQ(c->local_reduction_delay, 1);
  EXPECT_EQ(c->local_mem_bw_gbps, 0);  // 0 = reductions cost nothing
  EXPECT_EQ(c->local_mem_trace_filename, "local_mem_trace");
  EXPECT_TRUE(c->all_reduce_implementation.empty());
  EXPECT_EQ(c->intra_dimension_scheduling, "FIFO");
  EXPECT_EQ(c->inter_dimension_scheduling, "ascending");
  EXPECT_FALSE(c->boost_mode);
  EXPECT_EQ(c->path, ::testing::TempDir() + "/sys_min.json");
}

TEST(SystemConfigTest, EndpointDelayPresentIsKept) {
  StatusOr<SystemConfig> c =
      LoadSystemConfig(WriteTestFile("sys_ed.json", "{\"endpoint-delay\": 25}"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->endpoint_delay_ns.has_value());
  EXPECT_EQ(*c->endpoint_delay_ns, 25);
}

// ASTRA-sim reads endpoint-delay into an int, and the engine keeps whole ns: 10.5 ran as 10
// although the manual said fractions were kept. A fraction is now refused.
TEST(SystemConfigTest, EndpointDelayFractionIsRefused) {
  const std::string path = WriteTestFile("sys_ed_frac.json", "{\"endpoint-delay\": 10.5}");
  StatusOr<SystemConfig> c = LoadSystemConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            path +
                ":1: key 'endpoint-delay' is '10.5'; expected a whole number of ns in [0, "
                "1000000000000] (ASTRA-sim reads it as an int, so 10.5 would run as 10 there)");
  // With other problems, all are listed.
  c = LoadSystemConfig(
      WriteTestFile("sys_ed_frac2.json", "{\"endpoint-delay\": 0.25, \"boost-mode\": 3}"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().problems().size(), 2u) << c.status().message();
}

TEST(SystemConfigTest, ReadsEveryKey) {
  const std::string path = WriteTestFile("sys_all.json", R"({
    "scheduling-policy": "EXPLICIT", "collective-optimization": "localBWAware",
    "active-chunks-per-dimension": 3, "preferred-dataset-splits": 16, "endpoint-delay": 7,
    "local-reduction-delay": 2, "model-shared-bus": true, "L": 1, "o": 2, "g": 3, "G": 0.5,
    "peak-perf": 900, "local-mem-bw": 3350, "roofline-enabled": 1, "trace-enabled": 1,
    "replay-only": 0, "track-local-mem": 1, "local-mem-trace-filename": "mem",
    "all-reduce-implementation": ["ring", "direct<4>"],
    "reduce-scatter-implementation": ["halvingDoubling"],
    "all-gather-implementation": ["oneDirect<2>"],
    "all-to-all-implementation": ["direct"],
    "all-reduce-implementation-custom": ["algo/ar"],
    "reduce-scatter-implementation-custom": ["algo/rs"],
    "all-gather-implementation-custom": ["algo/ag"],
    "all-to-all-implementation-custom": ["algo/a2a"],
    "per-node-custom-implementation": "per_node.yml",
    "intra-dimension-scheduling": "smallestFirst", "inter-dimension-scheduling": "roundRobin",
    "boost-mode": 1})");
  StatusOr<SystemConfig> c = LoadSystemConfig(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->scheduling_policy, "EXPLICIT");
  EXPECT_EQ(c->collective_optimization, "localBWAware");
  EXPECT_EQ(c->active_chunks_per_dimension, 3);
  EXPECT_EQ(c->preferred_dataset_splits, 16);
  EXPECT_EQ(*c->endpoint_delay_ns, 7);
  EXPECT_EQ(c->local_reduction_delay, 2);
  EXPECT_TRUE(c->model_shared_bus);
  EXPECT_EQ(c->logp_L, 1);
  EXPECT_EQ(c->logp_o, 2);
  EXPECT_EQ(c->logp_g, 3);
  EXPECT_EQ(c->logp_G, 0.5);
  EXPECT_EQ(c->peak_perf_tflops, 900);
  EXPECT_EQ(c->local_mem_bw_gbps, 3350);
  EXPECT_TRUE(c->roofline_enabled);
  EXPECT_TRUE(c->trace_enabled);
  EXPECT_FALSE(c->replay_only);
  EXPECT_TRUE(c->track_local_mem);
  EXPECT_EQ(c->local_mem_trace_filename, "mem");
  EXPECT_EQ(c->all_reduce_implementation, (std::vector<std::string>{"ring", "direct<4>"}));
  EXPECT_EQ(c->reduce_scatter_implementation, (std::vector<std::string>{"halvingDoubling"}));
  EXPECT_EQ(c->all_gather_implementation, (std::vector<std::string>{"oneDirect<2>"}));
  EXPECT_EQ(c->all_to_all_implementation, (std::vector<std::string>{"direct"}));
  EXPECT_EQ(c->all_reduce_implementation_custom, (std::vector<std::string>{"algo/ar"}));
  EXPECT_EQ(c->reduce_scatter_implementation_custom, (std::vector<std::string>{"algo/rs"}));
  EXPECT_EQ(c->all_gather_implementation_custom, (std::vector<std::string>{"algo/ag"}));
  EXPECT_EQ(c->all_to_all_implementation_custom, (std::vector<std::string>{"algo/a2a"}));
  EXPECT_EQ(c->per_node_custom_implementation, "per_node.yml");
  EXPECT_EQ(c->intra_dimension_scheduling, "smallestFirst");
  EXPECT_EQ(c->inter_dimension_scheduling, "roundRobin");
  EXPECT_TRUE(c->boost_mode);
}

TEST(SystemConfigTest, MisspelledKeyIsRejectedWithSuggestion) {
  const std::string path = WriteTestFile("sys_typo.json", "{\n  \"endpoint-dealy\": 10\n}\n");
  StatusOr<SystemConfig> c = LoadSystemConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            path + ":2: unknown key 'endpoint-dealy' (did you mean 'endpoint-delay'?)");
}

TEST(SystemConfigTest, BadImplementationNameSuggestsRing) {
  const std::string path =
      WriteTestFile("sys_rign.json", "{\"all-reduce-implementation\": [\"rign\"]}");
  StatusOr<SystemConfig> c = LoadSystemConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(Contains(c.status(), path + ":1: key 'all-reduce-implementation', item 1, is "
                                          "'rign'; expected one of ring, oneRing"))
      << c.status().message();
  EXPECT_TRUE(Contains(c.status(), "(did you mean 'ring'?)")) << c.status().message();
}

TEST(SystemConfigTest, AlgorithmNames) {
  for (const char* ok :
       {"ring", "oneRing", "direct", "direct<1>", "direct<16>", "oneDirect", "oneDirect<8>",
        "direct4", "oneDirect2", "halvingDoubling", "oneHalvingDoubling", "doubleBinaryTree"}) {
    EXPECT_EQ(CheckCollectiveAlgorithmName(ok), "") << ok;
  }
  // ASTRA-sim spells a window "direct4"; both spellings give the same algorithm.
  std::string base;
  int window = 0;
  EXPECT_EQ(SplitCollectiveAlgorithm("direct4", &base, &window), "");
  EXPECT_EQ(base, "direct");
  EXPECT_EQ(window, 4);
  EXPECT_EQ(SplitCollectiveAlgorithm("oneDirect<8>", &base, &window), "");
  EXPECT_EQ(base, "oneDirect");
  EXPECT_EQ(window, 8);
  EXPECT_EQ(SplitCollectiveAlgorithm("ring", &base, &window), "");
  EXPECT_EQ(window, -1);
  for (const char* bad : {"Ring", "direct<0>", "direct<>", "direct<x>", "ring<2>", "direct<4",
                          "direct0", "directx", "halvingdoubling", ""}) {
    EXPECT_NE(CheckCollectiveAlgorithmName(bad), "") << bad;
  }
  EXPECT_NE(CheckCollectiveAlgorithmName("direct<0>").find("N >= 1"), std::string::npos);
  EXPECT_NE(CheckCollectiveAlgorithmName("ring<2>").find("only after direct"), std::string::npos);
}

TEST(SystemConfigTest, CustomListsNeedExactlyOneEntry) {
  StatusOr<SystemConfig> c = LoadSystemConfig(
      WriteTestFile("sys_custom2.json", "{\"all-gather-implementation-custom\": [\"a\", \"b\"]}"));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(Contains(c.status(),
                       "key 'all-gather-implementation-custom' is a list of 2 "
                       "entries; expected a list of strings with exactly 1 entry"))
      << c.status().message();
}

TEST(SystemConfigTest, EmptyNativeListIsRejected) {
  StatusOr<SystemConfig> c =
      LoadSystemConfig(WriteTestFile("sys_empty_list.json", "{\"all-reduce-implementation\": []}"));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(Contains(c.status(), "with at least 1 entry")) << c.status().message();
}

TEST(SystemConfigTest, ImpossibleValuesAreRejected) {
  const std::string path = WriteTestFile("sys_bad.json", R"({
  "scheduling-policy": "RANDOM",
  "preferred-dataset-splits": 0,
  "local-mem-bw": -5,
  "endpoint-delay": "ten",
  "boost-mode": 3,
  "all-reduce-implementation": "ring",
  "inter-dimension-scheduling": "themis",
  "schedulng-policy": "LIFO"
})");
  StatusOr<SystemConfig> c = LoadSystemConfig(path);
  ASSERT_FALSE(c.ok());
  const std::vector<std::string>& p = c.status().problems();
  ASSERT_EQ(p.size(), 8u) << c.status().message();
  EXPECT_EQ(p[0], path +
                      ":2: key 'scheduling-policy' is 'RANDOM'; expected one of LIFO, FIFO, "
                      "EXPLICIT");
  EXPECT_EQ(
      p[1],
      path + ":3: key 'preferred-dataset-splits' is '0'; expected an integer in [1, 1048576]");
  EXPECT_EQ(p[2], path +
                      ":4: key 'local-mem-bw' is '-5'; expected a number >= 0 (GB/s (1e9 "
                      "B/s))");
  EXPECT_EQ(p[3],
            path +
                ":5: key 'endpoint-delay' is 'ten'; expected a number in [0, 1000000000000] (ns), "
                "written without quotes");
  EXPECT_EQ(p[4], path + ":6: key 'boost-mode' is '3'; expected 0, 1, true or false");
  EXPECT_TRUE(p[5].find(path + ":7: key 'all-reduce-implementation' is 'ring'; expected a list") ==
              0)
      << p[5];
  EXPECT_EQ(p[6], path +
                      ":8: key 'inter-dimension-scheduling' is 'themis'; expected one of "
                      "ascending, offlineGreedy, roundRobin");
  EXPECT_EQ(p[7], path + ":9: unknown key 'schedulng-policy' (did you mean 'scheduling-policy'?)");
}

// Up to kMaxProblemsPerFile (20) problems are all listed; past that the rest are counted in one
// line, so a file of 100k bad keys gives 21 lines, not 100k. The valid keys are listed once.
TEST(SystemConfigTest, ManyProblemsAreCappedWithACount) {
  auto keys = [](int n) {
    std::string text = "{";
    for (int i = 0; i < n; ++i)
      text += (i ? ", " : "") + ("\"zzzzzzzzzzzz" + std::to_string(i) + "\": 1");
    return text + "}";
  };
  const std::string twenty = WriteTestFile("sys_twenty_bad.json", keys(20));
  StatusOr<SystemConfig> c = LoadSystemConfig(twenty);
  ASSERT_FALSE(c.ok());
  const std::vector<std::string>& all = c.status().problems();
  ASSERT_EQ(all.size(), 20u) << c.status().message();
  EXPECT_EQ(all[19], twenty + ":1: unknown key 'zzzzzzzzzzzz19'; valid keys as listed above");
  EXPECT_NE(all[0].find("; valid keys: scheduling-policy, "), std::string::npos) << all[0];
  EXPECT_EQ(c.status().message().find("... and"), std::string::npos);

  const std::string many = WriteTestFile("sys_many_bad.json", keys(100000));
  c = LoadSystemConfig(many);
  ASSERT_FALSE(c.ok());
  const std::vector<std::string>& p = c.status().problems();
  ASSERT_EQ(p.size(), 21u);
  EXPECT_EQ(p[0].rfind(many + ":1: unknown key 'zzzzzzzzzzzz0'; valid keys: ", 0), 0u) << p[0];
  EXPECT_EQ(p[19], many + ":1: unknown key 'zzzzzzzzzzzz19'; valid keys as listed above");
  EXPECT_EQ(p[20], "... and 99980 more problems in " + many);
  // One more than the cap: "problem", singular.
  const std::string one_more = WriteTestFile("sys_21_bad.json", keys(21));
  c = LoadSystemConfig(one_more);
  ASSERT_FALSE(c.ok());
  ASSERT_EQ(c.status().problems().size(), 21u);
  EXPECT_EQ(c.status().problems()[20], "... and 1 more problem in " + one_more);
}

TEST(SystemConfigTest, GroupCollectivesIsFlatOrHierarchical) {
  StatusOr<SystemConfig> absent = LoadSystemConfig(WriteTestFile("sys_groups_absent.json", "{}"));
  ASSERT_TRUE(absent.ok()) << absent.status().message();
  EXPECT_EQ(absent->group_collectives, "flat");
  StatusOr<SystemConfig> h = LoadSystemConfig(
      WriteTestFile("sys_groups_h.json", R"({"group-collectives": "hierarchical"})"));
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->group_collectives, "hierarchical");
  const std::string path = WriteTestFile("sys_groups_bad.json", R"({"group-collectives": "tree"})");
  StatusOr<SystemConfig> bad = LoadSystemConfig(path);
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.status().problems().size(), 1u) << bad.status().message();
  EXPECT_EQ(bad.status().problems()[0],
            path + ":1: key 'group-collectives' is 'tree'; expected one of flat, hierarchical");
}

TEST(SystemConfigTest, BroadcastReduceAlgorithm) {
  StatusOr<SystemConfig> absent = LoadSystemConfig(WriteTestFile("sys_rooted_absent.json", "{}"));
  ASSERT_TRUE(absent.ok()) << absent.status().message();
  EXPECT_EQ(absent->broadcast_reduce_algorithm, "binomialTree");
  StatusOr<SystemConfig> ring =
      LoadSystemConfig(WriteTestFile("sys_rooted_ring.yaml", "broadcast-reduce-algorithm: ring\n"));
  ASSERT_TRUE(ring.ok()) << ring.status().message();
  EXPECT_EQ(ring->broadcast_reduce_algorithm, "ring");
  const std::string path =
      WriteTestFile("sys_rooted_bad.yaml", "broadcast-reduce-algorithm: chain\n");
  StatusOr<SystemConfig> bad = LoadSystemConfig(path);
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.status().problems().size(), 1u) << bad.status().message();
  EXPECT_EQ(bad.status().problems()[0],
            path +
                ":1: key 'broadcast-reduce-algorithm' is 'chain'; expected one of "
                "binomialTree, ring");
}

TEST(SystemConfigTest, MissingFileIsNamed) {
  const std::string path = ::testing::TempDir() + "/no_such_system.json";
  StatusOr<SystemConfig> c = LoadSystemConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(Contains(c.status(), path + ": cannot open the file")) << c.status().message();
}

TEST(SystemConfigTest, UnparsableFileHasLine) {
  const std::string path = WriteTestFile("sys_broken.json", "{\n  \"L\": 1,\n  \"o\" 2\n}\n");
  StatusOr<SystemConfig> c = LoadSystemConfig(path);
  ASSERT_FALSE(c.ok());
  ASSERT_EQ(c.status().problems().size(), 1u);
  EXPECT_TRUE(Contains(c.status(), path + ":3:")) << c.status().message();
}

TEST(SystemConfigTest, KeysAreDeclaredOnceWithMeaning) {
  const std::vector<KeyDoc> keys = SystemConfigKeys();
  // One key per SystemConfig field (except `path`), spelled as ASTRA-sim spells it.
  std::vector<std::string> names;
  for (const KeyDoc& k : keys) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"scheduling-policy",
                                             "collective-optimization",
                                             "group-collectives",
                                             "broadcast-reduce-algorithm",
                                             "active-chunks-per-dimension",
                                             "preferred-dataset-splits",
                                             "endpoint-delay",
                                             "local-reduction-delay",
                                             "model-shared-bus",
                                             "L",
                                             "o",
                                             "g",
                                             "G",
                                             "peak-perf",
                                             "local-mem-bw",
                                             "roofline-enabled",
                                             "gpu-model",
                                             "collective-launch-latency",
                                             "protocol-efficiency",
                                             "nccl-model",
                                             "p2p-chunk-size",
                                             "communication-slots",
                                             "trace-enabled",
                                             "replay-only",
                                             "track-local-mem",
                                             "local-mem-trace-filename",
                                             "all-reduce-implementation",
                                             "reduce-scatter-implementation",
                                             "all-gather-implementation",
                                             "all-to-all-implementation",
                                             "all-reduce-implementation-custom",
                                             "reduce-scatter-implementation-custom",
                                             "all-gather-implementation-custom",
                                             "all-to-all-implementation-custom",
                                             "per-node-custom-implementation",
                                             "intra-dimension-scheduling",
                                             "inter-dimension-scheduling",
                                             "boost-mode"}));
  for (const KeyDoc& k : keys) {
    EXPECT_FALSE(k.meaning.empty()) << k.name;
    EXPECT_FALSE(k.type.empty()) << k.name;
    EXPECT_FALSE(k.default_value.empty()) << k.name;
  }
}

}  // namespace
}  // namespace orrery
