#include "network/network_config.h"

#include "config/test_files.h"
#include "gtest/gtest.h"
#include "network/graph.h"

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
                ": the lists topology, npus_count, bandwidth, latency (and lanes) must have "
                "the same length (one entry per dimension), but topology has 2, npus_count has "
                "1, bandwidth has 2, latency has 2");
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
                      "FullyConnected, Switch, Mesh (did you mean 'Ring'?)");
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

// A network file with more problems than kMaxProblemsPerFile (20): the first 20 (in file
// order) and a count of the rest, required-key problems included.
TEST(NetworkConfigTest, ManyProblemsAreCappedWithACount) {
  std::string text = "topology: [Ring]\n";
  for (int i = 0; i < 30; ++i) text += "latncy" + std::to_string(i) + ": [5]\n";
  const std::string path = WriteTestFile("net_many_bad.yml", text);
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  const std::vector<std::string>& p = t.status().problems();
  ASSERT_EQ(p.size(), 21u) << t.status().message();
  EXPECT_EQ(p[0].rfind(path + ":2: unknown key 'latncy0'", 0), 0u) << p[0];
  EXPECT_EQ(p[19].rfind(path + ":21: unknown key 'latncy19'", 0), 0u) << p[19];
  // 30 unknown keys and 3 required keys missing: 13 past the first 20.
  EXPECT_EQ(p[20], "... and 13 more problems in " + path);
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

TEST(NetworkConfigTest, TorusAndMeshMachines) {
  StatusOr<Topology> t = LoadNetworkConfig(WriteTestFile(
      "torus.yml", "machine: torus\nshape: [8, 8]\nlink-bandwidth: 62\nlink-latency: 500\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->dims.size(), 2u);
  EXPECT_EQ(t->num_npus(), 64);
  EXPECT_EQ(t->dims[1].type, BlockType::kRing);
  EXPECT_EQ(t->graph, nullptr);
  StatusOr<Topology> m = LoadNetworkConfig(WriteTestFile(
      "mesh.yml", "machine: mesh\nshape: [4, 4, 4]\nlink-bandwidth: 62\nlink-latency: 500\n"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->dims[2].type, BlockType::kMesh);
  EXPECT_EQ(m->num_npus(), 64);
}

TEST(NetworkConfigTest, KeysOfAnotherMachineAndMissingKeysAreErrors) {
  const std::string path = WriteTestFile(
      "torus_bad.yml", "machine: torus\nshape: [8, 1]\nlink-bandwidth: 62\nnodes: 4\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), path + ":2: key 'shape'")) << t.status().message();
  EXPECT_TRUE(Contains(t.status(), path + ":4: key 'nodes' is not used with machine: torus"))
      << t.status().message();
  EXPECT_TRUE(Contains(t.status(), "required key 'link-latency' is missing"))
      << t.status().message();
  StatusOr<Topology> bad = LoadNetworkConfig(WriteTestFile("machine_bad.yml", "machine: tours\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status(), "did you mean 'torus'")) << bad.status().message();
}

const char kDgx[] =
    "machine: dgx\ngpus-per-node: 8\nnodes: 8\nnvswitch-bandwidth: 450\nnvswitch-latency: 100\n"
    "nic-bandwidth: 400\nfabric-latency: 500\nleaf-radix: 32\nspines: 2\noversubscription: 2\n";

TEST(NetworkConfigTest, DgxMachine) {
  StatusOr<Topology> t = LoadNetworkConfig(WriteTestFile("dgx.yml", kDgx));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_NE(t->graph, nullptr);
  EXPECT_EQ(t->num_npus(), 64);
  EXPECT_EQ(t->dims[0].npus, 8);
  EXPECT_EQ(t->dims[1].npus, 8);
  // 64 GPUs + 8 NVSwitches + 2 leaves + 2 spines.
  EXPECT_EQ(t->graph->devices.size(), 76u);
  // 400 Gb/s = 50e9 B/s per NIC; a leaf's 32 NICs over 2 spines at oversubscription 2:
  // 32 * 50e9 / (2 * 2) = 400e9 B/s per leaf -> spine link.
  for (const PhysicalGraph::Link& l : t->graph->links) {
    if (t->graph->devices[l.src].name == "leaf0" && t->graph->devices[l.dst].name == "spine1") {
      EXPECT_DOUBLE_EQ(l.bandwidth.bytes_per_sec(), 400e9);
    }
  }
}

TEST(NetworkConfigTest, DgxImpossibleValues) {
  const std::string path =
      WriteTestFile("dgx_bad.yml", std::string(kDgx) + "pods: 2\nnics-per-node: 2\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "key 'nics-per-node' is only used with nic-per-gpu: 0"))
      << t.status().message();
  EXPECT_TRUE(Contains(t.status(), "key 'cores' is missing")) << t.status().message();
  const std::string radix =
      WriteTestFile("dgx_radix.yml",
                    "machine: dgx\nnodes: 3\nnvswitch-bandwidth: 450\nnvswitch-latency: 100\n"
                    "nic-bandwidth: 400\nfabric-latency: 500\nleaf-radix: 16\nspines: 2\n");
  StatusOr<Topology> r = LoadNetworkConfig(radix);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(
      Contains(r.status(), radix + ":7: key 'leaf-radix' is 16 but the machine has 24 NICs"))
      << r.status().message();
}

// Values each in range that together make an impossible fabric: spines x pods past an int (it
// had aborted in std::length_error), or billions of spine-core links (it had run out of memory).
TEST(NetworkConfigTest, DgxTooManySwitchesOrLinks) {
  const std::string base =
      "machine: dgx\ngpus-per-node: 2\nnodes: 8\nnvswitch-bandwidth: 450\nnvswitch-latency: "
      "100\nnic-bandwidth: 400\nfabric-latency: 500\nleaf-radix: 1\n";
  const std::string overflow =
      WriteTestFile("dgx_overflow.yml", base + "spines: 65536\npods: 16\ncores: 1\n");
  StatusOr<Topology> t = LoadNetworkConfig(overflow);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), overflow + ":11: spines 65536, pods 16, cores 1 and leaf-radix "
                                              "1 make 1048601 switches and 2097184 links"))
      << t.status().message();
  EXPECT_TRUE(
      Contains(t.status(), "a dgx machine may have at most 65536 switches and 4194304 links"))
      << t.status().message();
  const std::string links =
      WriteTestFile("dgx_links.yml", base + "spines: 4096\npods: 8\ncores: 4096\n");
  t = LoadNetworkConfig(links);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "make 36888 switches and 134283296 links"))
      << t.status().message();
}

TEST(NetworkConfigTest, CustomTopologyFile) {
  // A diamond: npu0 reaches npu1 through sw0 or sw1 (equal cost), npu2 hangs off sw1.
  WriteTestFile("diamond.topo",
                "# two switches\n"
                "npus 4\n"
                "switch sw0 sw1\n"
                "link npu0 sw0 100 500\nlink npu0 sw1 100 500\n"
                "link npu1 sw0 100 500\nlink npu1 sw1 100 500\n"
                "link npu2 sw1 50 250.5   # slower\n"
                "link npu3 npu2 50 10\n"
                "dims 2 2\n");
  StatusOr<Topology> t = LoadNetworkConfig(
      WriteTestFile("custom.yml", "machine: custom\ncustom-file: diamond.topo\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->num_npus(), 4);
  ASSERT_EQ(t->dims.size(), 2u);
  EXPECT_EQ(t->graph->Route(0, 1).size(), 2u);
  EXPECT_EQ(t->graph->Route(0, 3).size(), 3u);  // npu0 -> sw1 -> npu2 -> npu3 (NPUs relay)
  EXPECT_EQ(t->graph->Route(0, 1), t->graph->Route(0, 1));
}

TEST(NetworkConfigTest, CustomTopologyErrorsNameTheLine) {
  const std::string dup =
      WriteTestFile("dup.topo",
                    "npus 2\nswitch sw0\nlink npu0 sw0 1 1\nlink npu1 sw0 1 1\nlink sw0 npu0 2 2\n"
                    "link npu1 sw9 1 1\nlink npu0 npu1 0 1\nlnk npu0 npu1 1 1\n");
  StatusOr<Topology> d = LoadCustomTopology(dup);
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(Contains(d.status(), dup + ":5: duplicate link sw0 <-> npu0 (already at line 3)"))
      << d.status().message();
  EXPECT_TRUE(Contains(d.status(), dup + ":6: link end 'sw9' is not a declared device"))
      << d.status().message();
  EXPECT_TRUE(Contains(d.status(), dup + ":7: link bandwidth is '0'; expected a number > 0"))
      << d.status().message();
  EXPECT_TRUE(Contains(d.status(), dup + ":8: unknown statement 'lnk' (did you mean 'link'?)"))
      << d.status().message();
  const std::string apart =
      WriteTestFile("apart.topo", "npus 4\nlink npu0 npu1 1 1\nlink npu2 npu3 1 1\n");
  StatusOr<Topology> a = LoadCustomTopology(apart);
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(Contains(a.status(), apart + ": the machine is disconnected: there is no path from "
                                           "npu0 to npu2"))
      << a.status().message();
  const std::string dims = WriteTestFile("dims.topo",
                                         "npus 4\nswitch s\nlink npu0 s 1 1\nlink npu1 s 1 1\n"
                                         "link npu2 s 1 1\nlink npu3 s 1 1\ndims 3 2\n");
  StatusOr<Topology> m = LoadCustomTopology(dims);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status(), dims + ":7: dims multiply to 6 but there are 4 NPUs"))
      << m.status().message();
  // A switch named like an NPU that is not there (npu7 of 2) would read as one in link names.
  const std::string npu_like = WriteTestFile(
      "npu_like.topo", "npus 2\nswitch npu7\nlink npu0 npu7 1 1\nlink npu1 npu7 1 1\n");
  StatusOr<Topology> nl = LoadCustomTopology(npu_like);
  ASSERT_FALSE(nl.ok());
  EXPECT_TRUE(Contains(nl.status(), npu_like + ":2: switch 'npu7' is named like an NPU"))
      << nl.status().message();
  // Or with what link names are made of: 'd1:sw' would be read as switch 'sw' of dimension 1.
  const std::string link_like = WriteTestFile(
      "link_like.topo", "npus 2\nswitch d1:sw a->b\nlink npu0 d1:sw 1 1\nlink npu1 d1:sw 1 1\n");
  StatusOr<Topology> ll = LoadCustomTopology(link_like);
  ASSERT_FALSE(ll.ok());
  EXPECT_TRUE(Contains(ll.status(), link_like + ":2: switch 'd1:sw' has '->', '#' or a 'd<k>:' "
                                                "prefix"))
      << ll.status().message();
  EXPECT_TRUE(Contains(ll.status(), link_like + ":2: switch 'a->b' has")) << ll.status().message();
  // Counts past any integer (1e200, -1e200) are out of range, checked before a conversion that
  // would be undefined for them; a fraction is not a count.
  for (const char* count : {"1e200", "-1e200", "2.5"}) {
    const std::string huge = WriteTestFile("huge.topo", std::string("npus ") + count + "\n");
    StatusOr<Topology> h = LoadCustomTopology(huge);
    ASSERT_FALSE(h.ok()) << count;
    EXPECT_TRUE(Contains(h.status(), huge + ":1: 'npus " + count + "' is not a valid NPU count"))
        << h.status().message();
  }
  // A directory (e.g. custom-file: .) is named as one, not read as an empty file.
  const std::string dir = ::testing::TempDir();
  StatusOr<Topology> dir_topo = LoadCustomTopology(dir);
  ASSERT_FALSE(dir_topo.ok());
  EXPECT_TRUE(Contains(dir_topo.status(),
                       dir + ": is a directory; expected a custom topology file ('npus N'"))
      << dir_topo.status().message();
}

TEST(NetworkConfigTest, KeysDeclared) {
  std::vector<std::string> names;
  for (const KeyDoc& k : NetworkConfigKeys()) {
    names.push_back(k.name);
    if (names.size() >= 2 && names.size() <= 5) {
      EXPECT_EQ(k.default_value, "required when machine is dimensions") << k.name;
    }
  }
  ASSERT_GE(names.size(), 5u);
  EXPECT_EQ(
      std::vector<std::string>(names.begin(), names.begin() + 5),
      (std::vector<std::string>{"machine", "topology", "npus_count", "bandwidth", "latency"}));
}

// The packet backend's keys: absent in ASTRA-sim's files (defaults), read when present, and
// checked with the key, the bad value and the valid values.
TEST(NetworkConfigTest, PacketKeysDefaultReadAndChecked) {
  NetworkParams p;
  p.mtu = 1;  // overwritten with the default
  StatusOr<Topology> t = LoadNetworkConfig(
      WriteTestFile("net_astra.yml",
                    "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n"),
      &p);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(p.mtu, 4096u);
  EXPECT_EQ(p.buffer_bytes, 0u);
  EXPECT_EQ(p.flow_control, NetworkParams::FlowControl::kCredit);
  EXPECT_EQ(p.routing, NetworkParams::Routing::kEcmp);
  EXPECT_EQ(p.aware_forwarding, NetworkParams::AwareForwarding::kStoreAndForward);

  t = LoadNetworkConfig(WriteTestFile("net_packet.yml",
                                      "machine: torus\nshape: [4, 4]\nlink-bandwidth: 50\n"
                                      "link-latency: 500\npacket-mtu: 2048\n"
                                      "packet-buffer-bytes: 1048576\n"
                                      "packet-flow-control: pfc\npacket-routing: adaptive\n"
                                      "packet-pfc-xoff-bytes: 600000\n"
                                      "packet-pfc-xon-bytes: 500000\n"
                                      "aware-forwarding: pipelined\n"),
                        &p);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(p.mtu, 2048u);
  EXPECT_EQ(p.buffer_bytes, 1048576u);
  EXPECT_EQ(p.flow_control, NetworkParams::FlowControl::kPfc);
  EXPECT_EQ(p.routing, NetworkParams::Routing::kAdaptive);
  EXPECT_EQ(p.pfc_xoff_bytes, 600000u);
  EXPECT_EQ(p.pfc_xon_bytes, 500000u);
  EXPECT_EQ(p.aware_forwarding, NetworkParams::AwareForwarding::kPipelined);

  const std::string bad = WriteTestFile("net_packet_bad.yml",
                                        "topology: [ Ring ]\nnpus_count: [ 8 ]\n"
                                        "bandwidth: [ 50 ]\nlatency: [ 500 ]\n"
                                        "packet-mtu: 10\npacket-flow-control: pcf\n"
                                        "packet-routing: random\n"
                                        "aware-forwarding: cut-through\n");
  t = LoadNetworkConfig(bad, &p);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(),
                       "key 'packet-mtu' is '10'; expected an integer in [64, 16777216] (bytes)"))
      << t.status().message();
  EXPECT_TRUE(
      Contains(t.status(), "key 'packet-flow-control' is 'pcf'; expected one of credit, pfc"))
      << t.status().message();
  EXPECT_TRUE(
      Contains(t.status(), "key 'packet-routing' is 'random'; expected one of ecmp, adaptive"))
      << t.status().message();
  EXPECT_TRUE(Contains(t.status(),
                       "key 'aware-forwarding' is 'cut-through'; expected one of "
                       "store-and-forward, pipelined"))
      << t.status().message();
}

TEST(NetworkConfig, SlowLinksOnEveryMachine) {
  const std::string ring =
      "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";
  const std::string path =
      WriteTestFile("net_slow.yml", ring +
                                        "slow-links: [\"npu3<->npu4\", \"npu0->npu1\"]\n"
                                        "slow-link-bandwidth-scale: 0.5\n");
  StatusOr<Topology> t = LoadNetworkConfig(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->slow_links.names, (std::vector<std::string>{"npu3<->npu4", "npu0->npu1"}));
  EXPECT_EQ(t->slow_links.bandwidth_scale, 0.5);
  EXPECT_EQ(t->slow_links.where, path + ":5");
  // A machine: keys, not dimension lists.
  t = LoadNetworkConfig(
      WriteTestFile("net_slow_torus.yml",
                    "machine: torus\nshape: [4, 4]\nlink-bandwidth: 50\nlink-latency: 500\n"
                    "slow-links: [\"npu0->npu1\"]\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->slow_links.bandwidth_scale, 1);  // the default: as the machine says
  // Without slow-links there is nothing to scale; a scale must be > 0.
  t = LoadNetworkConfig(
      WriteTestFile("net_slow_alone.yml", ring + "slow-link-bandwidth-scale: 0.5\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(),
                       "net_slow_alone.yml:5: key 'slow-link-bandwidth-scale' scales "
                       "the links of 'slow-links', which is missing"))
      << t.status().message();
  t = LoadNetworkConfig(WriteTestFile(
      "net_slow_zero.yml", ring + "slow-links: [\"npu0->npu1\"]\nslow-link-bandwidth-scale: 0\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "key 'slow-link-bandwidth-scale' is '0'; expected a number > 0"))
      << t.status().message();
  t = LoadNetworkConfig(WriteTestFile("net_slow_one.yml", ring + "slow-links: npu0->npu1\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "key 'slow-links'")) << t.status().message();
}

TEST(NetworkConfig, LanesPerDimension) {
  StatusOr<Topology> t = LoadNetworkConfig(
      WriteTestFile("net_lanes.yml",
                    "topology: [ Switch, Ring ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 400, 50 ]\n"
                    "latency: [ 700, 500 ]\nlanes: [ 16, 1 ]\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->dims[0].lanes, 16);
  EXPECT_EQ(t->dims[1].lanes, 1);
  t = LoadNetworkConfig(WriteTestFile(
      "net_no_lanes.yml",
      "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->dims[0].lanes, 1);  // ASTRA-sim's files: one lane

  t = LoadNetworkConfig(
      WriteTestFile("net_lanes_bad.yml",
                    "topology: [ Switch, Ring ]\nnpus_count: [ 8, 2 ]\n"
                    "bandwidth: [ 400, 50 ]\nlatency: [ 700, 500 ]\nlanes: [ 16 ]\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "lanes has 1")) << t.status().message();
  t = LoadNetworkConfig(
      WriteTestFile("net_lanes_zero.yml",
                    "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n"
                    "lanes: [ 0 ]\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "key 'lanes'")) << t.status().message();
}

// NetworkConfigWithDefaults: the file's keys as written, the others its machine uses with their
// defaults, none it would refuse; read back, the same machine, and a fixed point.
TEST(NetworkConfigTest, WithDefaultsFillsInWhatTheMachineUses) {
  auto effective = [](const std::string& name, const std::string& text) {
    StatusOr<ConfigFile> f = ConfigFile::Read(WriteTestFile(name, text));
    EXPECT_TRUE(f.ok()) << f.status().message();
    StatusOr<YAML::Node> e = NetworkConfigWithDefaults(*f);
    EXPECT_TRUE(e.ok()) << e.status().message();
    StatusOr<ConfigFile> again = ConfigFile::FromNode(*e, name);
    EXPECT_TRUE(again.ok()) << again.status().message();
    EXPECT_TRUE(LoadNetworkConfig(*again).ok()) << FlowYaml(*e);
    StatusOr<YAML::Node> twice = NetworkConfigWithDefaults(*again);
    EXPECT_TRUE(twice.ok());
    EXPECT_EQ(FlowYaml(*twice), FlowYaml(*e));
    return FlowYaml(*e);
  };
  const std::string packet =
      "packet-mtu: 4096, aware-forwarding: store-and-forward, packet-buffer-bytes: 0, "
      "packet-flow-control: credit, packet-routing: ecmp, packet-pfc-xoff-bytes: 0, "
      "packet-pfc-xon-bytes: 0";
  EXPECT_EQ(effective("d.yml",
                      "topology: [Ring, Switch]\nnpus_count: [4, 2]\n"
                      "bandwidth: [100.0, 25]\nlatency: [10, 500]\n"),
            "{machine: dimensions, topology: [Ring, Switch], npus_count: [4, 2], bandwidth: "
            "[100.0, 25], latency: [10, 500], lanes: [1, 1], " +
                packet + "}");
  // dgx: nics-per-node only with nic-per-gpu 0, cores only with pods > 1.
  const std::string dgx =
      "machine: dgx\nnodes: 2\nnvswitch-bandwidth: 450\nnvswitch-latency: 250\n"
      "nic-bandwidth: 400\nfabric-latency: 1000\nleaf-radix: 4\nspines: 2\n";
  EXPECT_EQ(effective("g.yml", dgx),
            "{machine: dgx, gpus-per-node: 8, nodes: 2, nvswitch-bandwidth: 450, "
            "nvswitch-latency: 250, nic-per-gpu: true, nic-bandwidth: 400, fabric-latency: 1000, "
            "leaf-radix: 4, spines: 2, oversubscription: 1, pods: 1, " +
                packet + "}");
  const std::string g0 = effective("g1.yml",
                                   "machine: dgx\nnodes: 2\nnvswitch-bandwidth: 450\n"
                                   "nvswitch-latency: 250\nnic-per-gpu: 0\n"
                                   "nic-bandwidth: 400\nfabric-latency: 1000\n"
                                   "leaf-radix: 2\nspines: 2\n");
  EXPECT_NE(g0.find("nic-per-gpu: 0, nics-per-node: 1, "), std::string::npos) << g0;
  // slow-link-bandwidth-scale only with slow-links.
  const std::string slow =
      effective("s.yml",
                "machine: torus\nshape: [4]\nlink-bandwidth: 50\nlink-latency: 500\n"
                "slow-links: [\"npu0->npu1\"]\n");
  EXPECT_NE(slow.find("slow-links: [npu0->npu1], slow-link-bandwidth-scale: 1"), std::string::npos)
      << slow;
  EXPECT_EQ(effective("t.yml",
                      "machine: torus\nshape: [4]\nlink-bandwidth: 50\n"
                      "link-latency: 500\n")
                .find("slow-link-bandwidth-scale"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery
