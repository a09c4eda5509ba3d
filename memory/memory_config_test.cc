#include "memory/memory_config.h"

#include "config/test_files.h"
#include "gtest/gtest.h"

namespace orrery {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(MemoryConfigTest, DefaultIsNoMemoryExpansion) {
  StatusOr<MemoryConfig> m = LoadMemoryConfig(WriteTestFile("mem_empty_map.json", "{}"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->type, MemoryType::kNoMemoryExpansion);
  EXPECT_EQ(m->remote_mem_latency_ns, 0u);
  EXPECT_EQ(m->remote_mem_bw_bytes_per_ns, 0);
}

TEST(MemoryConfigTest, ReadsEveryKey) {
  StatusOr<MemoryConfig> m = LoadMemoryConfig(WriteTestFile("mem_node.json", R"({
    "memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-latency": 1500,
    "remote-mem-bw": 64, "num-nodes": 2, "num-npus-per-node": 4})"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->type, MemoryType::kPerNodeMemoryExpansion);
  EXPECT_EQ(m->remote_mem_latency_ns, 1500u);
  EXPECT_EQ(m->remote_mem_bw_bytes_per_ns, 64);
  EXPECT_EQ(m->num_nodes, 2);
  EXPECT_EQ(m->num_npus_per_node, 4);
  EXPECT_EQ(m->path, ::testing::TempDir() + "/mem_node.json");
}

// remote-mem-latency is a uint64_t, read exactly: UINT64_MAX loads (a run with it stops on the
// time overflow, named), 2^64 does not. (Read through a double, both had been 2^64, which became
// 0 ns when converted.)
TEST(MemoryConfigTest, LatencyPastTwoToThe64IsRefused) {
  for (const char* bad : {"18446744073709551616", "18446744073709551617"}) {
    const std::string path = WriteTestFile(
        "mem_2p64.json", std::string("{\"memory-type\": \"MEMORY_POOL\", "
                                     "\"remote-mem-bw\": 1, \"remote-mem-latency\": ") +
                             bad + "}");
    StatusOr<MemoryConfig> m = LoadMemoryConfig(path);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().message(), path + ":1: key 'remote-mem-latency' is '" + bad +
                                        "'; expected an integer >= 0 (at most "
                                        "18446744073709551615)");
  }
  StatusOr<MemoryConfig> m = LoadMemoryConfig(
      WriteTestFile("mem_2p64_ok.json", "{\"remote-mem-latency\": 18446744073709551615}"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->remote_mem_latency_ns, UINT64_MAX);
}

TEST(MemoryConfigTest, TypeNames) {
  EXPECT_STREQ(MemoryTypeName(MemoryType::kNoMemoryExpansion), "NO_MEMORY_EXPANSION");
  EXPECT_STREQ(MemoryTypeName(MemoryType::kPerNpuMemoryExpansion), "PER_NPU_MEMORY_EXPANSION");
  EXPECT_STREQ(MemoryTypeName(MemoryType::kPerNodeMemoryExpansion), "PER_NODE_MEMORY_EXPANSION");
  EXPECT_STREQ(MemoryTypeName(MemoryType::kMemoryPool), "MEMORY_POOL");
  for (const char* name : {"NO_MEMORY_EXPANSION", "PER_NPU_MEMORY_EXPANSION", "MEMORY_POOL"}) {
    StatusOr<MemoryConfig> m = LoadMemoryConfig(WriteTestFile(
        "mem_type.json", std::string("{\"memory-type\": \"") + name + "\", \"remote-mem-bw\": 1}"));
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_STREQ(MemoryTypeName(m->type), name);
  }
}

TEST(MemoryConfigTest, BadTypeListsValidOnes) {
  const std::string path =
      WriteTestFile("mem_bad_type.json", "{\n  \"memory-type\": \"MEMORY_POLL\"\n}\n");
  StatusOr<MemoryConfig> m = LoadMemoryConfig(path);
  ASSERT_FALSE(m.ok());
  // Only the type is reported: the checks that depend on it are skipped.
  ASSERT_EQ(m.status().problems().size(), 1u) << m.status().message();
  EXPECT_EQ(m.status().message(),
            path +
                ":2: key 'memory-type' is 'MEMORY_POLL'; expected one of NO_MEMORY_EXPANSION, "
                "PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION, MEMORY_POOL (did you "
                "mean 'MEMORY_POOL'?)");
}

TEST(MemoryConfigTest, BandwidthRequiredWithRemoteMemory) {
  const std::string missing = WriteTestFile("mem_no_bw.json", R"({"memory-type": "MEMORY_POOL"})");
  StatusOr<MemoryConfig> m = LoadMemoryConfig(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), missing +
                                      ": required key 'remote-mem-bw' is missing; expected "
                                      "a number > 0 (bytes/ns) when memory-type is "
                                      "MEMORY_POOL");
  const std::string zero = WriteTestFile(
      "mem_zero_bw.json", "{\"memory-type\": \"PER_NPU_MEMORY_EXPANSION\",\n\"remote-mem-bw\": 0}");
  m = LoadMemoryConfig(zero);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), zero +
                                      ":2: key 'remote-mem-bw' is '0'; expected a number > 0 "
                                      "(bytes/ns) when memory-type is PER_NPU_MEMORY_EXPANSION");
  // A negative bandwidth is reported once, by the key's own check.
  const std::string negative =
      WriteTestFile("mem_neg_bw.json", "{\"memory-type\": \"MEMORY_POOL\", \"remote-mem-bw\": -4}");
  m = LoadMemoryConfig(negative);
  ASSERT_FALSE(m.ok());
  ASSERT_EQ(m.status().problems().size(), 1u) << m.status().message();
  EXPECT_TRUE(Contains(m.status(), "key 'remote-mem-bw' is '-4'; expected a number >= 0"));
}

TEST(MemoryConfigTest, PerNodeNeedsNodeShape) {
  const std::string path =
      WriteTestFile("mem_node_missing.json",
                    R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-bw": 10})");
  StatusOr<MemoryConfig> m = LoadMemoryConfig(path);
  ASSERT_FALSE(m.ok());
  ASSERT_EQ(m.status().problems().size(), 2u) << m.status().message();
  EXPECT_TRUE(Contains(m.status(), path + ": required key 'num-nodes' is missing"));
  EXPECT_TRUE(Contains(m.status(), path + ": required key 'num-npus-per-node' is missing"));
}

TEST(MemoryConfigTest, AllProblemsTogether) {
  const std::string path = WriteTestFile("mem_many.json", R"({
  "memory-type": "PER_NODE_MEMORY_EXPANSION",
  "remote-mem-latency": -1,
  "remote-mem-bw": 10,
  "num-nodes": 0,
  "num-npus-per-nod": 4
})");
  StatusOr<MemoryConfig> m = LoadMemoryConfig(path);
  ASSERT_FALSE(m.ok());
  const std::vector<std::string>& p = m.status().problems();
  ASSERT_EQ(p.size(), 4u) << m.status().message();
  EXPECT_EQ(p[0], path + ":3: key 'remote-mem-latency' is '-1'; expected an integer >= 0 (ns)");
  EXPECT_EQ(p[1], path + ":5: key 'num-nodes' is '0'; expected an integer >= 1");
  EXPECT_EQ(p[2], path +
                      ":6: unknown key 'num-npus-per-nod' (did you mean "
                      "'num-npus-per-node'?)");
  EXPECT_EQ(p[3], path +
                      ": required key 'num-npus-per-node' is missing; expected an integer >= "
                      "1 when memory-type is PER_NODE_MEMORY_EXPANSION");
}

// PER_NODE_MEMORY_EXPANSION: num-nodes * num-npus-per-node must be the network's NPU count;
// the other types fit any network.
TEST(MemoryConfigTest, PerNodeShapeMustMatchTheNetwork) {
  const std::string path = WriteTestFile("mem_node_shape.json", R"({
    "memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-bw": 10, "num-nodes": 2,
    "num-npus-per-node": 4})");
  StatusOr<MemoryConfig> m = LoadMemoryConfig(path);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(CheckMemoryFitsNetwork(*m, 8, "net.yml").ok());
  const Status more = CheckMemoryFitsNetwork(*m, 16, "net.yml");
  ASSERT_EQ(more.problems().size(), 1u) << more.message();
  EXPECT_EQ(more.message(), path +
                                ": keys 'num-nodes' 2 * 'num-npus-per-node' 4 = 8 NPUs, but the "
                                "network (net.yml) has 16 NPUs; expected num-nodes * "
                                "num-npus-per-node = 16 when memory-type is "
                                "PER_NODE_MEMORY_EXPANSION (e.g. num-nodes 4 with "
                                "num-npus-per-node 4)");
  // Fewer NPUs than the nodes hold is as wrong; 6 is not a multiple of 4: no example.
  const Status fewer = CheckMemoryFitsNetwork(*m, 6, "net.yml");
  ASSERT_FALSE(fewer.ok());
  EXPECT_TRUE(Contains(fewer, "= 8 NPUs, but the network (net.yml) has 6 NPUs")) << fewer.message();
  EXPECT_FALSE(Contains(fewer, "e.g.")) << fewer.message();
  MemoryConfig pool;
  pool.type = MemoryType::kMemoryPool;
  pool.num_nodes = 3;
  EXPECT_TRUE(CheckMemoryFitsNetwork(pool, 16, "net.yml").ok());
  EXPECT_TRUE(CheckMemoryFitsNetwork(MemoryConfig(), 16, "net.yml").ok());
}

TEST(MemoryConfigTest, ManyUnknownKeysAreCapped) {
  std::string text = "{\"memory-type\": \"MEMORY_POOL\", \"remote-mem-bw\": 1";
  for (int i = 0; i < 25; ++i) text += ", \"remote-mem-bw" + std::to_string(i) + "\": 1";
  const std::string path = WriteTestFile("mem_many_bad.json", text + "}");
  StatusOr<MemoryConfig> m = LoadMemoryConfig(path);
  ASSERT_FALSE(m.ok());
  ASSERT_EQ(m.status().problems().size(), 21u) << m.status().message();
  EXPECT_EQ(m.status().problems()[0],
            path + ":1: unknown key 'remote-mem-bw0' (did you mean 'remote-mem-bw'?)");
  EXPECT_EQ(m.status().problems()[20], "... and 5 more problems in " + path);
}

TEST(MemoryConfigTest, MissingFile) {
  const std::string path = ::testing::TempDir() + "/no_such_memory.json";
  StatusOr<MemoryConfig> m = LoadMemoryConfig(path);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status(), path + ": cannot open the file"));
}

TEST(MemoryConfigTest, KeysDeclared) {
  std::vector<std::string> names;
  for (const KeyDoc& k : MemoryConfigKeys()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"memory-type", "remote-mem-latency", "remote-mem-bw",
                                             "num-nodes", "num-npus-per-node"}));
  EXPECT_EQ(MemoryConfigKeys()[0].default_value, "NO_MEMORY_EXPANSION");
}

// MemoryConfigWithDefaults: the file's keys as written, latency and bandwidth filled in, the
// node keys only for PER_NODE_MEMORY_EXPANSION (where they are required).
TEST(MemoryConfigTest, WithDefaultsFillsInTheOtherKeys) {
  auto effective = [](const std::string& name, const std::string& text) {
    StatusOr<ConfigFile> f = ConfigFile::Read(WriteTestFile(name, text));
    EXPECT_TRUE(f.ok()) << f.status().message();
    StatusOr<YAML::Node> e = MemoryConfigWithDefaults(*f);
    EXPECT_TRUE(e.ok()) << e.status().message();
    StatusOr<ConfigFile> again = ConfigFile::FromNode(*e, name);
    EXPECT_TRUE(again.ok() && LoadMemoryConfig(*again).ok()) << FlowYaml(*e);
    return FlowYaml(*e);
  };
  EXPECT_EQ(effective("w_empty.json", "{}"),
            "{memory-type: NO_MEMORY_EXPANSION, remote-mem-latency: 0, remote-mem-bw: 0}");
  EXPECT_EQ(effective("w_npu.json", R"({"memory-type": "PER_NPU_MEMORY_EXPANSION",
                                        "remote-mem-bw": 64.5})"),
            "{memory-type: PER_NPU_MEMORY_EXPANSION, remote-mem-latency: 0, remote-mem-bw: 64.5}");
  EXPECT_EQ(effective("w_node.json", R"({"memory-type": "PER_NODE_MEMORY_EXPANSION",
      "remote-mem-bw": 8, "num-npus-per-node": 4, "num-nodes": 2})"),
            "{memory-type: PER_NODE_MEMORY_EXPANSION, remote-mem-latency: 0, remote-mem-bw: 8, "
            "num-nodes: 2, num-npus-per-node: 4}");
  StatusOr<ConfigFile> bad =
      ConfigFile::Read(WriteTestFile("w_bad.json", R"({"remote-mem-bw": -1})"));
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(MemoryConfigWithDefaults(*bad).ok());
}

}  // namespace
}  // namespace orrery
