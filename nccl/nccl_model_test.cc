#include "nccl/nccl_model.h"

#include <gtest/gtest.h>

#include <fstream>

namespace orrery {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(NcclModel, ChoicesCombineAlgorithmAndProtocol) {
  auto m = LoadNcclModel(Write(
      "ok.yaml",
      "algorithms:\n  nvls: {latency-us: 5, efficiency: 0.5, protocols: [Simple]}\n"
      "  ring: {latency-us: 0, efficiency: 1}\nprotocols:\n"
      "  LL: {latency-us: 6, efficiency: 0.01}\n  Simple: {latency-us: 30, efficiency: 0.8}\n"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto all = Choices(*m, "");
  ASSERT_TRUE(all.ok());
  // nvls runs Simple only; ring runs both: 3 choices.
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].algorithm, "nvls");
  EXPECT_EQ((*all)[0].protocol, "Simple");
  EXPECT_DOUBLE_EQ((*all)[0].latency_us, 35);     // 5 + 30
  EXPECT_DOUBLE_EQ((*all)[0].efficiency(), 0.4);  // 0.5 * 0.8
  auto ring = Choices(*m, "ring");
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->size(), 2u);
  auto tree = Choices(*m, "tree");
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("its algorithms: nvls, ring"), std::string::npos);
  // NCCL_ALGO's and NCCL_PROTO's syntax: lists, ^ for all but, names without case.
  auto not_nvls = Choices(*m, "^NVLS");
  ASSERT_TRUE(not_nvls.ok()) << not_nvls.status().message();
  EXPECT_EQ(not_nvls->size(), 2u);
  EXPECT_EQ((*not_nvls)[0].algorithm, "ring");
  auto both = Choices(*m, "Ring,nvls");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->size(), 3u);
  auto simple = Choices(*m, "", "Simple");
  ASSERT_TRUE(simple.ok());
  ASSERT_EQ(simple->size(), 2u);  // nvls/Simple, ring/Simple
  EXPECT_EQ((*simple)[1].protocol, "Simple");
  auto not_ll = Choices(*m, "ring", "^ll");
  ASSERT_TRUE(not_ll.ok());
  ASSERT_EQ(not_ll->size(), 1u);
  EXPECT_EQ((*not_ll)[0].protocol, "Simple");
  // Excluding NCCL's CollNet, which is not modelled, excludes nothing; asking for it is an error.
  auto no_collnet = Choices(*m, "^collnetdirect");
  ASSERT_TRUE(no_collnet.ok());
  EXPECT_EQ(no_collnet->size(), 3u);
  auto collnet = Choices(*m, "ring,collnetdirect");
  ASSERT_FALSE(collnet.ok());
  EXPECT_NE(collnet.status().message().find("'collnetdirect' is one of NCCL's that Orrery does "
                                            "not model"),
            std::string::npos)
      << collnet.status().message();
  auto typo = Choices(*m, "", "Simpel");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("NCCL_PROTO 'Simpel': 'Simpel' is unknown (did you mean "
                                         "'Simple'?)"),
            std::string::npos)
      << typo.status().message();
  // A limit that leaves no choice: nvls runs Simple only.
  auto none = Choices(*m, "nvls", "LL");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("runs a protocol of NCCL_PROTO 'LL'"), std::string::npos)
      << none.status().message();
  // Written back and read again: the same model.
  auto again = LoadNcclModel(Write("again.yaml", FormatNcclModel(*m, "# test\n")));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->algorithms[0].protocols, std::vector<std::string>{"Simple"});
  EXPECT_DOUBLE_EQ(again->protocols[1].efficiency, 0.8);
  // A comment whose last line has no line end still ends before the model.
  auto unended = LoadNcclModel(Write("unended.yaml", FormatNcclModel(*m, "# one\n# two")));
  ASSERT_TRUE(unended.ok()) << unended.status().message();
  EXPECT_EQ(unended->algorithms.size(), m->algorithms.size());
}

// A second document (here one tuning 'ring' again) was dropped without a word.
TEST(NcclModel, ASecondDocumentIsAnError) {
  auto m = LoadNcclModel(Write("twodoc.yaml",
                               "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\nprotocols:\n"
                               "  Simple: {latency-us: 30, efficiency: 0.8}\n---\n"
                               "algorithms:\n  ring: {latency-us: 9, efficiency: 1}\n"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("twodoc.yaml:6: a second YAML document (a map) starts here; "
                                      "expected one document per file"),
            std::string::npos)
      << m.status().message();
}

// A YAML merge key is named as such (it had been an unknown key '<<').
TEST(NcclModel, AMergeKeyIsNamed) {
  auto m = LoadNcclModel(Write("merge.yaml",
                               "algorithms:\n  ring: {<<: {latency-us: 0}, efficiency: 1}\n"
                               "protocols:\n  Simple: {latency-us: 30, efficiency: 0.8}\n"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("merge.yaml:2: algorithm ring: '<<' is a YAML merge key, "
                                      "which is not supported"),
            std::string::npos)
      << m.status().message();
}

// Infinite or quoted numbers are refused with their line, as in the other config files
// (latency-us .inf had loaded and stopped a forced run with no file named; "0" had loaded).
TEST(NcclModel, InfiniteAndQuotedNumbersAreRefused) {
  auto m = LoadNcclModel(Write("inf.yaml",
                               "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\nprotocols:\n"
                               "  LL: {latency-us: .inf, efficiency: 0.5}\n"
                               "  Simple: {latency-us: \"3\", efficiency: 0.8}\n"));
  ASSERT_FALSE(m.ok());
  const std::string msg = m.status().message();
  EXPECT_NE(msg.find("inf.yaml:4: protocol LL: key 'latency-us' is '.inf'; expected a number in "
                     "[0, 1000000000) (us)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("inf.yaml:5: protocol Simple: key 'latency-us' is '3'; expected a number in "
                     "[0, 1000000000) (us), written without quotes"),
            std::string::npos)
      << msg;
}

TEST(NcclModel, EveryProblemIsNamedWithItsLine) {
  auto m = LoadNcclModel(Write("bad.yaml",
                               "algorithms:\n  ring: {latency-us: -1, efficency: 1}\n"
                               "  collnet: {latency-us: 1}\nprotocols:\n"
                               "  Simple: {latency-us: 3, efficiency: 1.5}\nchannels: 4\n"));
  ASSERT_FALSE(m.ok());
  const std::string msg = m.status().message();
  EXPECT_NE(msg.find("bad.yaml:2: algorithm ring: key 'latency-us' is '-1'; expected a number in "
                     "[0, 1000000000) (us)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("bad.yaml:2: algorithm ring: unknown key 'efficency' (did you mean "
                     "'efficiency'?)"),
            std::string::npos)
      << msg;
  EXPECT_NE(
      msg.find("bad.yaml:3: algorithm 'collnet' is unknown; valid: ring, tree, nvls, nvlstree"),
      std::string::npos)
      << msg;
  EXPECT_NE(
      msg.find("bad.yaml:5: protocol Simple: key 'efficiency' is '1.5'; expected a number > 0 "
               "and <= 1"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("bad.yaml:6: key 'channels' is unknown; valid: algorithms, protocols"),
            std::string::npos)
      << msg;
}

// Keys YAML allows but a name cannot be (lists, maps), and keys given twice, are errors (a list
// key used to abort in yaml-cpp's conversion).
TEST(NcclModel, OddKeysAreNamed) {
  auto m =
      LoadNcclModel(Write("keys.yaml",
                          "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\n"
                          "  ? [nvls]\n  : {latency-us: 1, efficiency: 1}\n"
                          "  ring: {latency-us: 2, efficiency: 1}\n"
                          "protocols:\n  Simple: {latency-us: 1, efficiency: 1, ? {q: 1} : 3}\n"
                          "? [x]\n: 1\n"));
  ASSERT_FALSE(m.ok());
  const std::string msg = m.status().message();
  EXPECT_NE(msg.find("keys.yaml:3: a key is a list; expected a name"), std::string::npos) << msg;
  EXPECT_NE(msg.find("keys.yaml:5: key 'ring' appears more than once"), std::string::npos) << msg;
  EXPECT_NE(msg.find("keys.yaml:7: protocol Simple: a key is a map; expected a key name"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("keys.yaml:8: a key is a list; expected a name"), std::string::npos) << msg;
}

// The keys on the schema: names close to a valid one get a suggestion, a protocol list is checked
// item by item, the ranges' ends are where they were (latency-us below 1e9, channels 1 to 64).
TEST(NcclModel, SchemaSuggestsAndChecksEveryItem) {
  auto m = LoadNcclModel(Write("typos.yaml",
                               "algoritms:\n  ring: {latency-us: 0, efficiency: 1}\n"
                               "algorithms:\n  ring: {latency-us: 1e9, protocols: [LL, LL129]}\n"
                               "  tree: {latency-us: 1, protocols: Simple}\n"
                               "protocols:\n  Simpel: {latency-us: 1, efficiency: 1}\n"
                               "  LL: {latency-us: 1, efficiency: 1, chunk-overhead-kib: 4}\n"));
  ASSERT_FALSE(m.ok());
  const std::string msg = m.status().message();
  for (const char* want :
       {"typos.yaml:1: key 'algoritms' is unknown (did you mean 'algorithms'?); valid: "
        "algorithms, protocols",
        "typos.yaml:4: algorithm ring: key 'latency-us' is '1e9'; expected a number in "
        "[0, 1000000000) (us)",
        "typos.yaml:4: algorithm ring: key 'protocols', item 2, is 'LL129'; expected one of LL, "
        "LL128, Simple (did you mean 'LL128'?)",
        "typos.yaml:5: algorithm tree: key 'protocols' is 'Simple'; expected a list of each one "
        "of LL, LL128, Simple",
        "typos.yaml:7: protocol 'Simpel' is unknown (did you mean 'Simple'?); valid: LL, LL128, "
        "Simple",
        "typos.yaml:8: protocol LL: key 'chunk-overhead-kib' is an algorithm's key, not a "
        "protocol's; valid here: latency-us, efficiency, step-latency-us, "
        "network-step-latency-us"}) {
    EXPECT_NE(msg.find(want), std::string::npos) << want << "\nin:\n" << msg;
  }
  // Just inside the ends; absent keys take their defaults (latency 0, efficiency 1, all
  // protocols); channels without chunk-overhead-kib is kept but models no chunking.
  auto ok = LoadNcclModel(Write("ends.yaml",
                                "algorithms:\n  ring: {latency-us: 999999999}\n"
                                "  nvls: {channels: 64}\nprotocols:\n"
                                "  LL: {efficiency: 1, step-latency-us: 0}\n"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_DOUBLE_EQ(ok->algorithms[0].latency_us, 999999999);
  EXPECT_DOUBLE_EQ(ok->algorithms[0].efficiency, 1);
  EXPECT_TRUE(ok->algorithms[0].protocols.empty());
  EXPECT_EQ(ok->algorithms[1].chunking.channels, 64);
  EXPECT_FALSE(ok->algorithms[1].chunking.modelled);
  EXPECT_DOUBLE_EQ(ok->protocols[0].latency_us, 0);
}

NcclCall AllReduce(uint64_t bytes, int heads, int nodes) {
  NcclCall call;
  call.bytes = bytes;
  call.heads = heads;
  call.nodes = nodes;
  return call;
}

NcclCall Split(uint64_t bytes, int heads, int nodes) {
  NcclCall call = AllReduce(bytes, heads, nodes);
  call.kind = NcclKind::kSplit;
  return call;
}

TEST(NcclModel, NvlsChunksFollowNcclsSchedule) {
  constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  // One node of 8 GPUs, 16 channels: 128 concurrent chunks. 128 KiB from 64 x 128 x 128 KiB =
  // 1 GiB; 64 KiB from 8 x 128 x 64 KiB = 64 MiB; 32 KiB from 2 x 128 x 32 KiB = 8 MiB.
  EXPECT_EQ(NvlsChunkBytes(8 * kGiB, 16, 8, 1), 128 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(1 * kGiB, 16, 8, 1), 128 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(1 * kGiB - 1, 16, 8, 1), 64 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(64 * kMiB, 16, 8, 1), 64 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(64 * kMiB - 1, 16, 8, 1), 32 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(8 * kMiB, 16, 8, 1), 32 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(8 * kMiB - 1, 16, 8, 1), 16 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(1024, 16, 8, 1), 16 * kKiB);
  // Five GPUs: 80 chunks at once, so 128 KiB already from 640 MiB.
  EXPECT_EQ(NvlsChunkBytes(640 * kMiB, 16, 5, 1), 128 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(640 * kMiB - 1, 16, 5, 1), 64 * kKiB);
  // Across nodes (NVLS-tree): 64 KiB below 4 x 128 x 128 KiB = 64 MiB, 32 KiB below 128 x 64 KiB
  // = 8 MiB; from 4 nodes at most 64 KiB.
  EXPECT_EQ(NvlsChunkBytes(64 * kMiB, 16, 8, 2), 128 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(64 * kMiB - 1, 16, 8, 2), 64 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(8 * kMiB - 1, 16, 8, 2), 32 * kKiB);
  EXPECT_EQ(NvlsChunkBytes(8 * kGiB, 16, 8, 4), 64 * kKiB);

  auto m = LoadNcclModel(
      Write("chunks.yaml",
            "algorithms:\n  nvls: {latency-us: 5, efficiency: 0.9, protocols: [Simple], "
            "chunk-overhead-kib: 16, channels: 16}\n  ring: {latency-us: 0, efficiency: 1}\n"
            "protocols:\n  Simple: {latency-us: 30, efficiency: 0.8}\n"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto c = Choices(*m, "");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 2u);
  // chunk / (chunk + 16 KiB): 128/144 at 1 GiB, 16/32 at 1 MiB; ring has no chunk model.
  EXPECT_DOUBLE_EQ(EfficiencyAt((*c)[0], AllReduce(kGiB, 8, 1)), 0.72 * 128 / 144);
  EXPECT_DOUBLE_EQ(EfficiencyAt((*c)[0], AllReduce(kMiB, 8, 1)), 0.72 * 0.5);
  EXPECT_DOUBLE_EQ(EfficiencyAt((*c)[1], AllReduce(kMiB, 8, 1)), 0.8);
  // Written back and read again: the same chunking.
  auto again = LoadNcclModel(Write("chunks2.yaml", FormatNcclModel(*m, "")));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(again->algorithms[0].chunking.modelled);
  EXPECT_DOUBLE_EQ(again->algorithms[0].chunking.overhead_kib, 16);
  EXPECT_EQ(again->algorithms[0].chunking.channels, 16);
  EXPECT_FALSE(again->algorithms[1].chunking.modelled);

  auto bad = LoadNcclModel(
      Write("badchunks.yaml",
            "algorithms:\n  nvls: {latency-us: 5, efficiency: 0.9, chunk-overhead-kib: -1, "
            "channels: 2.5}\n  ring: {latency-us: 0, efficiency: 1, channels: 4}\n"
            "protocols:\n  Simple: {latency-us: 30, efficiency: 0.8}\n"));
  ASSERT_FALSE(bad.ok());
  const std::string msg = bad.status().message();
  EXPECT_NE(
      msg.find("badchunks.yaml:2: algorithm nvls: key 'chunk-overhead-kib' is '-1'; expected a "
               "number in [0, 1000000) (KiB)"),
      std::string::npos)
      << msg;
  EXPECT_NE(
      msg.find("badchunks.yaml:2: algorithm nvls: key 'channels' is '2.5'; expected an integer "
               "in [1, 64]"),
      std::string::npos)
      << msg;
  EXPECT_NE(
      msg.find("badchunks.yaml:3: algorithm ring: key 'channels' is a key of nvls and nvlstree "
               "only; valid here: latency-us, efficiency, protocols"),
      std::string::npos)
      << msg;
}

TEST(NcclModel, AlgorithmsMapToImplementationsPerDimension) {
  auto one = NcclImplementations("nvls", 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->at("all-reduce-implementation"), std::vector<std::string>{"nvls"});
  auto tree = NcclImplementations("tree", 2);
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree->at("all-reduce-implementation"),
            (std::vector<std::string>{"ring", "doubleBinaryTree"}));
  EXPECT_EQ(tree->at("reduce-scatter-implementation"), (std::vector<std::string>{"ring", "ring"}));
  // NVLS-tree is NCCL's own algorithm across nodes; nvls on two dimensions is NVLS inside a node
  // (a group within one node: the other dimension takes no part).
  auto nvls_tree = NcclImplementations("nvlstree", 2);
  ASSERT_TRUE(nvls_tree.ok());
  EXPECT_EQ(nvls_tree->at("all-reduce-implementation"),
            (std::vector<std::string>{"nvls", "doubleBinaryTree"}));
  auto nvls_in_node = NcclImplementations("nvls", 2);
  ASSERT_TRUE(nvls_in_node.ok());
  EXPECT_EQ(nvls_in_node->at("all-reduce-implementation"),
            (std::vector<std::string>{"nvls", "ring"}));
  auto single_nvls_tree = NcclImplementations("nvlstree", 1);
  ASSERT_FALSE(single_nvls_tree.ok());
  EXPECT_NE(single_nvls_tree.status().message().find("needs a node dimension"), std::string::npos);
  auto ring = NcclImplementations("ring", 2);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->at("all-reduce-implementation"), std::vector<std::string>{"channelRing"});
  // All-to-all is NCCL's point-to-point sends to every peer at once: direct on each dimension,
  // so across nodes each GPU sends through its own NIC, and inside a node no message is
  // forwarded by another GPU (a ring would carry each piece over up to n - 1 hops).
  EXPECT_EQ(ring->at("all-to-all-implementation"), (std::vector<std::string>{"direct", "direct"}));
  EXPECT_EQ(one->at("all-to-all-implementation"), std::vector<std::string>{"direct"});
  auto single_tree = NcclImplementations("tree", 1);
  ASSERT_FALSE(single_tree.ok());
  EXPECT_NE(single_tree.status().message().find("needs a node dimension"), std::string::npos);
  EXPECT_FALSE(NcclImplementations("collnet", 2).ok());
}

// What NCCL offers where (NcclDoesNotRun): NVLS within one node, NVLS-tree and tree across nodes
// for all-reduce only, ring everywhere.
TEST(NcclModel, EachAlgorithmRunsWhereNcclRunsIt) {
  auto call = [](int nodes, NcclKind kind) {
    NcclCall c;
    c.nodes = nodes;
    c.heads = 8;
    c.kind = kind;
    return c;
  };
  for (NcclKind kind : {NcclKind::kAllReduce, NcclKind::kSplit, NcclKind::kOther}) {
    for (int nodes : {1, 2}) EXPECT_EQ(NcclDoesNotRun("ring", call(nodes, kind)), "");
  }
  EXPECT_EQ(NcclDoesNotRun("nvls", call(1, NcclKind::kAllReduce)), "");
  EXPECT_EQ(NcclDoesNotRun("nvls", call(1, NcclKind::kSplit)), "");
  EXPECT_NE(NcclDoesNotRun("nvls", call(1, NcclKind::kOther)), "");
  EXPECT_NE(NcclDoesNotRun("nvls", call(2, NcclKind::kAllReduce)).find("nvlstree"),
            std::string::npos);
  EXPECT_EQ(NcclDoesNotRun("nvlstree", call(2, NcclKind::kAllReduce)), "");
  EXPECT_NE(NcclDoesNotRun("nvlstree", call(1, NcclKind::kAllReduce)), "");
  EXPECT_NE(NcclDoesNotRun("nvlstree", call(2, NcclKind::kSplit)), "");
  EXPECT_EQ(NcclDoesNotRun("tree", call(2, NcclKind::kAllReduce)), "");
  EXPECT_NE(NcclDoesNotRun("tree", call(1, NcclKind::kAllReduce)).find("chain"), std::string::npos);
  EXPECT_NE(NcclDoesNotRun("tree", call(2, NcclKind::kSplit)), "");
}

// NVLS's own efficiency bounds the two directions of a port together (nccl/nccl_model.h,
// EfficiencyAt). An all-reduce loads both alike and gets it; a lone reduce-scatter or all-gather
// on one node loads one direction with D and the other with D/n, so it runs at the protocol's
// rate while 2·d·n/(n + 1) >= 1, and below it in proportion.
TEST(NcclModel, LoneNvlsReduceScatterRunsAtTheProtocolsRate) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  auto m = LoadNcclModel(
      Write("oneway.yaml",
            "algorithms:\n  nvls: {latency-us: 5, efficiency: 0.9, protocols: [Simple], "
            "chunk-overhead-kib: 16, channels: 16}\n  ring: {latency-us: 0, efficiency: 0.5}\n"
            "protocols:\n  Simple: {latency-us: 30, efficiency: 0.8}\n"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto c = Choices(*m, "");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 2u);
  const NcclChoice& nvls = (*c)[0];
  const NcclChoice& ring = (*c)[1];
  EXPECT_DOUBLE_EQ(nvls.protocol_efficiency, 0.8);
  // d = 0.9 x 128/144 = 0.8 at 1 GiB: 2 x 0.8 x 8/9 > 1.
  EXPECT_DOUBLE_EQ(EfficiencyAt(nvls, AllReduce(kGiB, 8, 1)), 0.8 * 0.8);
  EXPECT_DOUBLE_EQ(EfficiencyAt(nvls, Split(kGiB, 8, 1)), 0.8);
  // 1 KiB: 16 KiB chunks, d = 0.9 x 16/32 = 0.45: 2 x 0.45 x 8/9 = 0.8 of Simple's rate.
  EXPECT_DOUBLE_EQ(EfficiencyAt(nvls, Split(1024, 8, 1)), 0.8 * (2 * 0.45 * 8 / 9));
  // Across nodes (NVLS-tree's chunks) and on other algorithms: the plain efficiency.
  EXPECT_DOUBLE_EQ(EfficiencyAt(nvls, Split(kGiB, 8, 2)),
                   EfficiencyAt(nvls, AllReduce(kGiB, 8, 2)));
  EXPECT_DOUBLE_EQ(EfficiencyAt(ring, Split(kGiB, 8, 1)), 0.4);
}

TEST(NcclModel, RingStepsInsideANodePayTheProtocolsStepLatency) {
  auto m =
      LoadNcclModel(Write("steps.yaml",
                          "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\n"
                          "  tree: {latency-us: 10, efficiency: 1}\nprotocols:\n"
                          "  LL: {latency-us: 5, efficiency: 0.1}\n"
                          "  Simple: {latency-us: 30, efficiency: 0.8, step-latency-us: 3}\n"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto c = Choices(*m, "");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 4u);  // ring/LL, ring/Simple, tree/LL, tree/Simple
  const NcclChoice& ring_ll = (*c)[0];
  const NcclChoice& ring_simple = (*c)[1];
  const NcclChoice& tree_simple = (*c)[3];
  ASSERT_EQ(ring_simple.protocol, "Simple");
  // One node of 8: an all-reduce's ring has 2 x 7 steps, a reduce-scatter's 7.
  EXPECT_EQ(RingStepsInNode(AllReduce(1 << 20, 8, 1)), 14);
  EXPECT_EQ(RingStepsInNode(Split(1 << 20, 8, 1)), 7);
  // Two nodes of 8 (NCCL: nsteps - nInterSteps = 30 - 2 and 15 - 1).
  EXPECT_EQ(RingStepsInNode(AllReduce(1 << 20, 8, 2)), 28);
  EXPECT_EQ(RingStepsInNode(Split(1 << 20, 8, 2)), 14);
  // One GPU per node: every step crosses the network.
  EXPECT_EQ(RingStepsInNode(AllReduce(1 << 20, 1, 4)), 0);
  // Another collective (e.g. all-to-all): none.
  NcclCall other = AllReduce(1 << 20, 8, 1);
  other.kind = NcclKind::kOther;
  EXPECT_EQ(RingStepsInNode(other), 0);
  EXPECT_DOUBLE_EQ(LatencyAt(ring_simple, AllReduce(1 << 20, 8, 1)), 30 + 14 * 3);
  EXPECT_DOUBLE_EQ(LatencyAt(ring_simple, Split(1 << 20, 8, 1)), 30 + 7 * 3);
  EXPECT_DOUBLE_EQ(LatencyAt(ring_ll, AllReduce(1 << 20, 8, 1)), 5);  // no step latency given
  // Only a ring pays it: a tree's steps inside the node are simulated as they are.
  EXPECT_DOUBLE_EQ(LatencyAt(tree_simple, AllReduce(1 << 20, 8, 2)), 40);
  // Written back and read again; an algorithm has no step latency.
  auto again = LoadNcclModel(Write("steps2.yaml", FormatNcclModel(*m, "")));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_DOUBLE_EQ(again->protocols[1].step_latency_us, 3);
  EXPECT_DOUBLE_EQ(again->protocols[0].step_latency_us, 0);
  auto bad = LoadNcclModel(
      Write("steps3.yaml",
            "algorithms:\n  ring: {latency-us: 0, efficiency: 1, step-latency-us: 2}\nprotocols:\n"
            "  Simple: {latency-us: 30, efficiency: 0.8, step-latency-us: -3}\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "steps3.yaml:2: algorithm ring: key 'step-latency-us' is a protocol's key, not an "
                "algorithm's; valid here: latency-us, efficiency, protocols"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("steps3.yaml:4: protocol Simple: key 'step-latency-us' "
                                        "is '-3'; expected a number in [0, 1000000) (us)"),
            std::string::npos)
      << bad.status().message();
}

// Steps across the network pay the protocol's network step latency once each (NCCL's cost model,
// tuning.cc): a ring's nInterSteps (an all-reduce 2 x (nodes - 1), a reduce-scatter or
// all-gather nodes - 1), a tree's or NVLS-tree's 2 x log2(nodes) rounded down (all-reduce only).
TEST(NcclModel, StepsAcrossTheNetworkPayTheNetworkStepLatency) {
  auto m = LoadNcclModel(
      Write("net_steps.yaml",
            "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\n"
            "  tree: {latency-us: 10, efficiency: 1}\n"
            "  nvlstree: {latency-us: 20, efficiency: 1, protocols: [Simple]}\nprotocols:\n"
            "  Simple: {latency-us: 30, efficiency: 0.8, step-latency-us: 3, "
            "network-step-latency-us: 50}\n"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto c = Choices(*m, "");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 3u);  // ring, tree, nvlstree; Simple each
  const NcclChoice &ring = (*c)[0], &tree = (*c)[1], &nvlstree = (*c)[2];
  EXPECT_DOUBLE_EQ(ring.network_step_latency_us, 50);
  EXPECT_EQ(StepsAcrossNodes("ring", AllReduce(1 << 20, 8, 1)), 0);
  EXPECT_EQ(StepsAcrossNodes("ring", AllReduce(1 << 20, 8, 4)), 6);
  EXPECT_EQ(StepsAcrossNodes("ring", Split(1 << 20, 8, 4)), 3);
  EXPECT_EQ(StepsAcrossNodes("tree", AllReduce(1 << 20, 8, 2)), 2);
  EXPECT_EQ(StepsAcrossNodes("tree", AllReduce(1 << 20, 8, 5)), 4);  // log2i(5) = 2
  EXPECT_EQ(StepsAcrossNodes("nvlstree", AllReduce(1 << 20, 8, 32)), 10);
  EXPECT_EQ(StepsAcrossNodes("tree", Split(1 << 20, 8, 4)), 0);
  EXPECT_EQ(StepsAcrossNodes("nvls", AllReduce(1 << 20, 8, 1)), 0);
  NcclCall other = AllReduce(1 << 20, 8, 4);
  other.kind = NcclKind::kOther;  // all-to-all: NCCL's sends, not a ring
  EXPECT_EQ(StepsAcrossNodes("ring", other), 0);
  // 4 nodes of 8: a ring all-gather has 4 x 7 steps inside nodes and 3 across the network.
  EXPECT_DOUBLE_EQ(LatencyAt(ring, Split(1 << 20, 8, 4)), 30 + 28 * 3 + 3 * 50);
  // A ring all-reduce: 2 x 28 inside and 2 x 3 across.
  EXPECT_DOUBLE_EQ(LatencyAt(ring, AllReduce(1 << 20, 8, 4)), 30 + 56 * 3 + 6 * 50);
  // Trees pay their 2 x log2(4) network steps, not the ring's steps inside a node.
  EXPECT_DOUBLE_EQ(LatencyAt(tree, AllReduce(1 << 20, 8, 4)), 10 + 30 + 4 * 50);
  EXPECT_DOUBLE_EQ(LatencyAt(nvlstree, AllReduce(1 << 20, 8, 4)), 20 + 30 + 4 * 50);
  // One node: no network steps.
  EXPECT_DOUBLE_EQ(LatencyAt(ring, Split(1 << 20, 8, 1)), 30 + 7 * 3);
  // Written back and read again.
  auto again = LoadNcclModel(Write("net_steps2.yaml", FormatNcclModel(*m, "")));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_DOUBLE_EQ(again->protocols[0].network_step_latency_us, 50);
  EXPECT_DOUBLE_EQ(again->protocols[0].step_latency_us, 3);
  auto bad = LoadNcclModel(Write(
      "net_steps3.yaml",
      "algorithms:\n  ring: {latency-us: 0, efficiency: 1, network-step-latency-us: 2}\n"
      "protocols:\n  Simple: {latency-us: 30, efficiency: 0.8, network-step-latency-us: x}\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("net_steps3.yaml:2: algorithm ring: key "
                                        "'network-step-latency-us' is a protocol's key"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("net_steps3.yaml:4: protocol Simple: key "
                                        "'network-step-latency-us' is 'x'"),
            std::string::npos)
      << bad.status().message();
}

// NcclModelWithDefaults: every entry's keys as written, the others with their defaults (channels
// only where chunks are modelled), names in the file's order; the same model read back.
TEST(NcclModel, WithDefaultsFillsInEveryEntry) {
  const YAML::Node root = YAML::Load(
      "protocols:\n  Simple: {efficiency: 0.8, latency-us: 30}\n  LL: {latency-us: 6}\n"
      "algorithms:\n  ring: {latency-us: 0}\n  nvls: {latency-us: 5, chunk-overhead-kib: 16, "
      "protocols: [Simple]}\n  nvlstree: {channels: 8}\n");
  StatusOr<YAML::Node> e = NcclModelWithDefaults(root, "m.yaml");
  ASSERT_TRUE(e.ok()) << e.status().message();
  YAML::Emitter out;
  out << YAML::Flow << *e;
  EXPECT_EQ(std::string(out.c_str()),
            "{algorithms: {ring: {latency-us: 0, efficiency: 1}, nvls: {latency-us: 5, "
            "efficiency: 1, protocols: [Simple], chunk-overhead-kib: 16, channels: 16}, "
            "nvlstree: {latency-us: 0, efficiency: 1, channels: 8}}, protocols: {Simple: "
            "{latency-us: 30, efficiency: 0.8, step-latency-us: 0, network-step-latency-us: 0}, "
            "LL: {latency-us: 6, efficiency: 1, step-latency-us: 0, network-step-latency-us: 0}}}");
  StatusOr<NcclModel> a = LoadNcclModel(root, "m.yaml"), b = LoadNcclModel(*e, "m.yaml");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FormatNcclModel(*b, ""), FormatNcclModel(*a, ""));
  EXPECT_FALSE(NcclModelWithDefaults(YAML::Load("algorithms: {ring: {efficiency: 2}}"), "x").ok());
}

}  // namespace
}  // namespace orrery
