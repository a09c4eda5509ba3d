#include "config/network_config.h"

#include "config/test_files.h"
#include "gtest/gtest.h"

namespace orrery {
namespace {

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(NetworkConfigTest, LoadsMultiDimensionalTopology) {
  StatusOr<Topology> t =
      LoadNetworkConfig(WriteTestFile("net3.yml",
                                      "topology: [ Ring, FullyConnected, Switch ]\n"
                                      "npus_count: [ 2, 8, 4 ]\n"
                                      "bandwidth: [ 200.0, 100.0, 50.0 ]\n"
                                      "latency: [ 50.0, 500.0, 2000.0 ]\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->dims.size(), 3u);
  EXPECT_EQ(t->num_npus(), 64);  // 2 * 8 * 4
  EXPECT_EQ(t->dims[0].type, BlockType::kRing);
  EXPECT_EQ(t->dims[1].type, BlockType::kFullyConnected);
  EXPECT_EQ(t->dims[2].type, BlockType::kSwitch);
  EXPECT_EQ(t->dims[1].npus, 8);
  // GB/s with GB = 2^30 bytes: 200 * 1073741824 B/s.
  EXPECT_DOUBLE_EQ(t->dims[0].bandwidth.bytes_per_sec(), 200.0 * 1073741824.0);
  EXPECT_EQ(t->dims[2].latency, Time::FromNs(2000));
}

TEST(NetworkConfigTest, FractionalLatencyKeepsPicoseconds) {
  StatusOr<Topology> t = LoadNetworkConfig(
      WriteTestFile("net_frac.yml",
                    "topology: [Switch]\nnpus_count: [8]\nbandwidth: [400]\nlatency: [936.25]\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->dims[0].latency.ps(), 936250);  // 936.25 ns = 936250 ps
}

TEST(NetworkConfigTest, JsonSyntaxWorksToo) {
  StatusOr<Topology> t = LoadNetworkConfig(WriteTestFile(
      "net.json",
      R"({"topology": ["Ring"], "npus_count": [4], "bandwidth": [50], "latency": [0]})"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->num_npus(), 4);
  EXPECT_EQ(t->dims[0].latency, Time::Zero());
}

TEST(NetworkConfigTest, MismatchedLengthsSayWhich) {
  const std::string path = WriteTestFile(
      "net_len.yml",
      "topology: [Ring, Switch]\nnpus_count: [4]\nbandwidth: [50, 50]\nlatency: [1, 2]\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            path +
                ": the lists topology, npus_count, bandwidth and latency must have the same "
                "length (one entry per dimension), but topology has 2, npus_count has 1, "
                "bandwidth has 2, latency has 2");
}

TEST(NetworkConfigTest, NegativeBandwidthAndOtherBadValues) {
  const std::string path = WriteTestFile("net_bad.yml",
                                         "topology: [Rign, Switch]\n"
                                         "npus_count: [1, 2.5]\n"
                                         "bandwidth: [-50, 0]\n"
                                         "latency: [-1, 10]\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  const std::vector<std::string>& p = t.status().problems();
  ASSERT_EQ(p.size(), 6u) << t.status().message();
  EXPECT_EQ(p[0], path +
                      ":1: key 'topology', item 1, is 'Rign'; expected one of Ring, "
                      "FullyConnected, Switch (did you mean 'Ring'?)");
  EXPECT_EQ(p[1], path + ":2: key 'npus_count', item 1, is '1'; expected an integer > 1");
  EXPECT_EQ(p[2], path + ":2: key 'npus_count', item 2, is '2.5'; expected an integer > 1");
  EXPECT_EQ(p[3], path +
                      ":3: key 'bandwidth', item 1, is '-50'; expected a number > 0 (GB/s "
                      "(GB = 2^30 B))");
  EXPECT_EQ(p[4], path +
                      ":3: key 'bandwidth', item 2, is '0'; expected a number > 0 (GB/s "
                      "(GB = 2^30 B))");
  EXPECT_EQ(p[5], path +
                      ":4: key 'latency', item 1, is '-1'; expected a number in [0, "
                      "1000000000000] (ns)");
}

TEST(NetworkConfigTest, MissingKeysAndUnknownKeys) {
  const std::string path = WriteTestFile("net_missing.yml", "topology: [Ring]\nlatncy: [5]\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  const std::vector<std::string>& p = t.status().problems();
  ASSERT_EQ(p.size(), 4u) << t.status().message();
  EXPECT_EQ(p[0], path + ":2: unknown key 'latncy' (did you mean 'latency'?)");
  EXPECT_TRUE(Contains(t.status(), path + ": required key 'npus_count' is missing"));
  EXPECT_TRUE(Contains(t.status(), path + ": required key 'bandwidth' is missing"));
  EXPECT_TRUE(Contains(t.status(), path + ": required key 'latency' is missing"));
}

TEST(NetworkConfigTest, ScalarInsteadOfList) {
  const std::string path = WriteTestFile(
      "net_scalar.yml", "topology: Ring\nnpus_count: [4]\nbandwidth: [50]\nlatency: [5]\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), path + ":1: key 'topology' is 'Ring'; expected a list of each "
                                          "one of Ring, FullyConnected, Switch"))
      << t.status().message();
}

TEST(NetworkConfigTest, TooManyNpus) {
  // 4096 * 8192 = 2^25 > 2^24.
  const std::string path = WriteTestFile("net_huge.yml",
                                         "topology: [Ring, Ring]\nnpus_count: [4096, 8192]\n"
                                         "bandwidth: [1, 1]\nlatency: [1, 1]\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), path +
                                      ":2: key 'npus_count' describes 4096 x 8192 = 33554432 "
                                      "NPUs; expected at most 16777216");
  // 4096 * 4096 = 2^24 is allowed.
  StatusOr<Topology> ok = LoadNetworkConfig(WriteTestFile(
      "net_max.yml",
      "topology: [Ring, Ring]\nnpus_count: [4096, 4096]\nbandwidth: [1, 1]\nlatency: [1, 1]\n"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->num_npus(), 1 << 24);
}

TEST(NetworkConfigTest, MissingAndEmptyFiles) {
  const std::string missing = ::testing::TempDir() + "/no_such_net.yml";
  StatusOr<Topology> t = LoadNetworkConfig(missing);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), missing + ": cannot open the file"));
  StatusOr<Topology> e = LoadNetworkConfig(WriteTestFile("net_empty.yml", ""));
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(Contains(e.status(), "the file is empty"));
}

TEST(NetworkConfigTest, UnparsableYamlHasLine) {
  const std::string path =
      WriteTestFile("net_broken.yml", "topology: [Ring]\nnpus_count: [4\nbandwidth: [1]\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  ASSERT_EQ(t.status().problems().size(), 1u);
  EXPECT_TRUE(Contains(t.status(), "not valid YAML/JSON")) << t.status().message();
  EXPECT_EQ(t.status().message().rfind(path + ":", 0), 0u);
}

TEST(NetworkConfigTest, KeysDeclared) {
  std::vector<std::string> names;
  for (const KeyDoc& k : NetworkConfigKeys()) {
    names.push_back(k.name);
    EXPECT_EQ(k.default_value, "required") << k.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"topology", "npus_count", "bandwidth", "latency"}));
}

}  // namespace
}  // namespace orrery
