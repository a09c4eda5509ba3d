// The collectives ASTRA-sim 2.0 lacks, custom (MSCCL-style) collectives and collectives that do
// not line up, through RunSimulation on generated workloads, on both analytical backends. Expected
// times are derived by hand from system/README.md ("Collectives beyond ASTRA-sim").
//
// Network: one Switch of 8 NPUs (6 where noted), 50 GiB/s = 53.687 B/ns, 500 ns per link;
// endpoint-delay e = 10 ns, local-mem-bw 1600 B/ns. A message of s bytes between two NPUs:
//   unaware: t = floor(2 * 500 + s / 53.687) (both links at once, truncated once);
//   aware: up-link then down-link, each floor(500 + s / 53.687) = A, so t = 2A; a link is busy
//   B = floor(s / 53.687) per message, so messages queued on one link leave B apart.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"
#include "runner/run.h"
#include "tests/test_case.h"
#include "workload/breakdown.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

constexpr int64_t kE = 10;
constexpr uint64_t kD = 1 << 20;
constexpr double kBytesPerNs = 50.0 * (1 << 30) / 1e9;

int64_t Serial(uint64_t s) { return static_cast<int64_t>(std::floor(s / kBytesPerNs)); }
int64_t Hop(uint64_t s) { return static_cast<int64_t>(std::floor(500 + s / kBytesPerNs)); }
int64_t T(Backend b, uint64_t s) {
  return b == Backend::kAnalyticalUnaware ? static_cast<int64_t>(std::floor(1000 + s / kBytesPerNs))
                                          : 2 * Hop(s);
}
int64_t R(uint64_t s) { return 3 * static_cast<int64_t>(s / 1600); }

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

const char* kSystem = R"({
  "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"], "collective-optimization": "baseline",
  "local-mem-bw": 1600 })";

RunOptions WriteCase(const std::string& name, const std::vector<std::vector<Node>>& ranks,
                     const std::string& system = kSystem) {
  return WriteTestCase(name, ranks, system, "Switch");
}

// Every rank runs one collective node (id 1) of this type and size; `root` goes to comm_src
// (broadcast, scatter) or comm_dst (reduce, gather) as Chakra's send/recv use them.
std::vector<std::vector<Node>> OneCollective(int n, ChakraProtoMsg::CollectiveCommType type,
                                             uint64_t size, int root = -1) {
  std::vector<std::vector<Node>> ranks(n);
  for (auto& r : ranks) {
    Node node = et::MakeCollNode(1, "coll", type, size);
    if (root >= 0) {
      const bool from_root = type == ChakraProtoMsg::BROADCAST || type == ChakraProtoMsg::SCATTER;
      et::SetIntAttr(&node, from_root ? "comm_src" : "comm_dst", root, et::IntEncoding::kInt32);
    }
    r = {node};
  }
  return ranks;
}

std::vector<int64_t> Finishes(const RunResult& r) {
  std::vector<int64_t> out;
  for (const NpuStats& s : r.npus) out.push_back(s.finish.WholeNs());
  return out;
}

const Backend kBackends[] = {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware};

int HighBit(int v) { return 31 - __builtin_clz(static_cast<unsigned>(v)); }

// Broadcast from NPU 3, binomial tree over relative ranks v = (npu - 3) mod 8: v receives from
// v - 2^h(v) at (h(v) + 1)(e + t) + (popcount(v) - 1) e, hands it off (e), then sends to v + 2^j
// (j > h(v), v + 2^j < 8), each e + t. Each NPU sends one message at a time and receives one in
// all, so no link carries two messages at once: aware = unaware with t = 2A.
TEST(CollectivesEndToEnd, BroadcastBinomialTreeOnBothBackends) {
  for (Backend b : kBackends) {
    RunOptions o = WriteCase("bcast", OneCollective(8, ChakraProtoMsg::BROADCAST, kD, 3));
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const int64_t step = kE + T(b, kD);
    for (int npu = 0; npu < 8; ++npu) {
      const int v = (npu - 3 + 8) % 8;
      int sends = 0;
      for (int j = v == 0 ? 0 : HighBit(v) + 1; v + (1 << j) < 8; ++j) ++sends;
      const int64_t begin = v == 0 ? 0 : (HighBit(v) + 1) * step + __builtin_popcount(v) * kE;
      EXPECT_EQ(r->npus[npu].finish.WholeNs(), begin + sends * step)
          << BackendName(b) << " NPU " << npu;
    }
    // The last member (v = 7) ends at 3 (2e + t).
    const std::vector<int64_t> f = Finishes(*r);
    EXPECT_EQ(*std::max_element(f.begin(), f.end()), 3 * (2 * kE + T(b, kD)));
    EXPECT_EQ(r->npus[3].collectives, 1u);
  }
}

// Reduce to NPU 5 (comm_dst), 8 NPUs: the root ends at 3 (2e + t + r) (README). Children reach a
// parent at distinct times, so links never carry two messages at once.
TEST(CollectivesEndToEnd, ReduceBinomialTreeOnBothBackends) {
  for (Backend b : kBackends) {
    RunOptions o = WriteCase("reduce", OneCollective(8, ChakraProtoMsg::REDUCE, kD, 5));
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->npus[5].finish.WholeNs(), 3 * (2 * kE + T(b, kD) + R(kD))) << BackendName(b);
    // Leaves (odd relative rank, npus 6, 0, 2, 4) end when their message arrives: e + t.
    for (int npu : {6, 0, 2, 4}) EXPECT_EQ(r->npus[npu].finish.WholeNs(), kE + T(b, kD));
  }
}

// Gather to NPU 0 of 64 KiB from each NPU: everybody sends at e.
//   unaware: others end at e + t, the root at 2e + t;
//   aware: the 7 messages reach the switch at e + A and queue on the root's down-link: the k-th
//   (k = 0..6) arrives at e + 2A + kB; the root ends at 2e + 2A + 6B.
TEST(CollectivesEndToEnd, GatherDirectToRootOnBothBackends) {
  const uint64_t s = 64 << 10;
  for (Backend b : kBackends) {
    RunOptions o = WriteCase("gather", OneCollective(8, ChakraProtoMsg::GATHER, s, 0));
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::vector<int64_t> others = Finishes(*r);
    others.erase(others.begin());
    std::sort(others.begin(), others.end());
    std::vector<int64_t> expected;
    for (int k = 0; k < 7; ++k) {
      expected.push_back(b == Backend::kAnalyticalUnaware ? kE + T(b, s)
                                                          : kE + 2 * Hop(s) + k * Serial(s));
    }
    EXPECT_EQ(others, expected) << BackendName(b);
    EXPECT_EQ(r->npus[0].finish.WholeNs(), b == Backend::kAnalyticalUnaware
                                               ? 2 * kE + T(b, s)
                                               : 2 * kE + 2 * Hop(s) + 6 * Serial(s));
  }
}

// Scatter of 64 KiB pieces from NPU 2 (comm_src): the root hands off the 7 pieces and sends them
// at e to relative ranks 1..7 in order.
//   unaware: the root ends at e + t, the others at 2e + t;
//   aware: they queue on the root's up-link: piece k (k = 0..6, NPU 2 + k + 1 mod 8) arrives at
//   e + 2A + kB, its receiver ends e later; the root ends at e + 2A + 6B.
TEST(CollectivesEndToEnd, ScatterDirectFromRootOnBothBackends) {
  const uint64_t s = 64 << 10;
  for (Backend b : kBackends) {
    RunOptions o = WriteCase("scatter", OneCollective(8, ChakraProtoMsg::SCATTER, s, 2));
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const bool unaware = b == Backend::kAnalyticalUnaware;
    for (int k = 0; k < 7; ++k) {
      const int npu = (2 + k + 1) % 8;
      EXPECT_EQ(r->npus[npu].finish.WholeNs(),
                unaware ? 2 * kE + T(b, s) : 2 * kE + 2 * Hop(s) + k * Serial(s))
          << BackendName(b) << " NPU " << npu;
    }
    EXPECT_EQ(r->npus[2].finish.WholeNs(),
              unaware ? kE + T(b, s) : kE + 2 * Hop(s) + 6 * Serial(s));
  }
}

// Barrier (dissemination), 8 and 6 NPUs: ceil(log2 n) = 3 rounds of e + t(1) + e, where
// t(1) = floor(1000 + 1/53.687) = 1000 unaware and 2 floor(500 + 1/53.687) = 1000 aware. In a round
// every NPU sends one byte and receives one: no contention. 3 * 1020 = 3060 ns. The barrier's
// comm_size is ignored (here absent).
TEST(CollectivesEndToEnd, BarrierDisseminationOnBothBackends) {
  for (int n : {8, 6}) {
    std::vector<std::vector<Node>> ranks(n);
    for (auto& r : ranks) {
      Node node = et::MakeNode(1, "barrier", ChakraProtoMsg::COMM_COLL_NODE);
      et::SetIntAttr(&node, "comm_type", ChakraProtoMsg::BARRIER);
      r = {node};
    }
    for (Backend b : kBackends) {
      RunOptions o = WriteCase("barrier" + std::to_string(n), ranks);
      o.backend = b;
      StatusOr<RunResult> r = RunSimulation(o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(T(b, 1), 1000);
      for (int64_t f : Finishes(*r)) EXPECT_EQ(f, 3 * (2 * kE + T(b, 1))) << BackendName(b);
    }
  }
}

// 8 NPUs broadcasting D in two communicator groups: "1" = {0..3} from NPU 2, "2" = {4..7}
// from NPU 5.
std::vector<std::vector<Node>> GroupBroadcastRanks() {
  std::vector<std::vector<Node>> ranks(8);
  for (int npu = 0; npu < 8; ++npu) {
    Node node = et::MakeCollNode(1, "bcast", ChakraProtoMsg::BROADCAST, kD);
    et::SetStringAttr(&node, "pg_name", npu < 4 ? "1" : "2");
    et::SetIntAttr(&node, "comm_src", npu < 4 ? 2 : 5, et::IntEncoding::kInt32);
    ranks[npu] = {node};
  }
  return ranks;
}

// Two communicator groups broadcast at once: {0,1,2,3} from NPU 2 and {4,5,6,7} from NPU 5,
// with the groups' local hand-off of 10 ns (endpoint-delay is 40 here, unused by groups).
// Relative ranks in group 1: 2 -> 0, 3 -> 1, 0 -> 2, 1 -> 3; the last (v = 3, NPU 1) ends at
// 2 (10 + t) + 2 * 10; the root at 2 (10 + t); v = 1 sends to v = 3 after its receive.
TEST(CollectivesEndToEnd, BroadcastInCommunicatorGroups) {
  const std::vector<std::vector<Node>> ranks = GroupBroadcastRanks();
  std::string system = kSystem;
  system.replace(system.find("\"endpoint-delay\": 10"), 20, "\"endpoint-delay\": 40");
  for (Backend b : kBackends) {
    RunOptions o = WriteCase("bcast_groups", ranks, system);
    std::ofstream(o.workload + ".groups.json") << R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]})";
    o.comm_group_config = o.workload + ".groups.json";
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const int64_t t = T(b, kD);
    // Group 1: root 2, v(3) = 1, v(0) = 2, v(1) = 3. Group 2: root 5, v(6) = 1, v(7) = 2, v(4) = 3.
    EXPECT_EQ(r->npus[2].finish.WholeNs(), 2 * (10 + t));
    EXPECT_EQ(r->npus[5].finish.WholeNs(), 2 * (10 + t));
    EXPECT_EQ(r->npus[3].finish.WholeNs(), (10 + t) + 10 + (10 + t));  // receives, forwards
    EXPECT_EQ(r->npus[0].finish.WholeNs(), 2 * (10 + t) + 10);
    EXPECT_EQ(r->npus[1].finish.WholeNs(), 2 * (10 + t) + 2 * 10);
    EXPECT_EQ(r->npus[4].finish.WholeNs(), 2 * (10 + t) + 2 * 10);
  }
}

// ASTRA-sim ignores any comm-group path containing "empty"; Orrery reads such a file when it
// exists (a group file under a directory called "emptyset" is not silently dropped) and takes a
// missing one as none, with a warning either way.
TEST(CollectivesEndToEnd, CommGroupPathContainingEmpty) {
  const std::vector<std::vector<Node>> ranks = GroupBroadcastRanks();
  RunOptions o = WriteCase("empty_groups", ranks, kSystem);
  const std::string dir = ::testing::TempDir() + "/emptyset";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/groups.json") << R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]})";
  o.comm_group_config = dir + "/groups.json";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("is read, though ASTRA-sim would ignore it"), std::string::npos)
      << r->warnings[0];
  // Missing: no groups, so pg_name "1" names an unknown group, an error; with the warning.
  o.comm_group_config = dir + "/missing.json";
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("pg_name"), std::string::npos) << r.status().message();
  o.comm_group_config = "empty";
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
}

// Overlapping groups from both sources, on 6 NPUs: group 1 = {0, 1, 2, 3} from the
// comm-group file, group 2 = {2, 3, 4, 5} from a PyTorch process_group:init METADATA node that
// every rank's trace starts with. NPUs 0-3 all-reduce D in group 1; NPUs 2 and 3 then (data
// dependency) in group 2, which NPUs 4 and 5 start at once. Unaware backend (no contention):
// msg D/4, t = T(D/4), r = R(D/4), hand-off e. Group 1 is a plain ring: S = 7e + 6t + 3r.
// Group 2's ring 2 -> 3 -> 4 -> 5 -> 2 waits for NPUs 2 and 3 (start S); as derived in
// system/group_collectives_test.cc, OverlappingGroupsRunInDependencyOrder, its last hand-off
// ends at S + 7e + 4t + 3r on NPU 2, S + 7e + 5t + 3r on NPU 3 and 2S on NPUs 4 and 5.
// Flat (default): e = 10 ns, the groups' local hand-off, whatever endpoint-delay says (40 here).
// group-collectives hierarchical: both groups are sub-grids of the one dimension (coordinate
// sets), so each runs that dimension's ring over its members with endpoint-delay: e = 40.
TEST(CollectivesEndToEnd, OverlappingGroupsFromFileAndMetadataNodes) {
  std::vector<std::vector<Node>> ranks(6);
  for (int npu = 0; npu < 6; ++npu) {
    ranks[npu].push_back(et::MakeMetadataNode(0, "process_group:init",
                                              R"([[{"pg_name": "2", "ranks": [2, 3, 4, 5]}]])"));
    if (npu < 4) {
      Node g1 = et::MakeCollNode(1, "ar_g1", ChakraProtoMsg::ALL_REDUCE, kD, {0});
      et::SetStringAttr(&g1, "pg_name", "1");
      ranks[npu].push_back(g1);
    }
    if (npu >= 2) {
      Node g2 =
          et::MakeCollNode(2, "ar_g2", ChakraProtoMsg::ALL_REDUCE, kD, {npu < 4 ? 1ull : 0ull});
      et::SetStringAttr(&g2, "pg_name", "2");
      ranks[npu].push_back(g2);
    }
  }
  const int64_t t = T(Backend::kAnalyticalUnaware, kD / 4), r = R(kD / 4);
  for (const char* mode : {"flat", "hierarchical"}) {
    std::string system = kSystem;
    system.replace(system.find("\"endpoint-delay\": 10"), 20,
                   std::string("\"endpoint-delay\": 40, \"group-collectives\": \"") + mode + "\"");
    RunOptions o = WriteCase(std::string("overlap_") + mode, ranks, system);
    std::ofstream(o.workload + ".groups.json") << R"({"1": [0, 1, 2, 3]})";
    o.comm_group_config = o.workload + ".groups.json";
    o.backend = Backend::kAnalyticalUnaware;
    StatusOr<RunResult> res = RunSimulation(o);
    ASSERT_TRUE(res.ok()) << res.status().message();
    const int64_t e = std::string(mode) == "flat" ? 10 : 40;
    const int64_t s = 7 * e + 6 * t + 3 * r;
    EXPECT_EQ(Finishes(*res), (std::vector<int64_t>{s, s, s + 7 * e + 4 * t + 3 * r,
                                                    s + 7 * e + 5 * t + 3 * r, 2 * s, 2 * s}))
        << mode;
  }
}

// A group only another rank's METADATA defines is not this rank's, whenever that node runs (as
// in ASTRA-sim, which keeps groups per rank): NPU 0 defines group 1 after 1 us of compute, NPU 1
// never does and all-reduces on it at once, or after 2 us. The trace had failed in the first case
// and run in the second; both are errors naming NPU 1's node.
TEST(CollectivesEndToEnd, AGroupOnlyAnotherRankDefinesIsAnErrorWheneverItRuns) {
  for (uint64_t wait_us : {0, 2}) {
    std::vector<std::vector<Node>> ranks(2);
    ranks[0] = {
        et::MakeCompNode(1, "fwd", 1),
        et::MakeMetadataNode(2, "process_group:init", R"([[{"pg_name": "1", "ranks": [0, 1]}]])")};
    et::AddDataDeps(&ranks[0][1], {1});
    Node ar0 = et::MakeCollNode(3, "ar", ChakraProtoMsg::ALL_REDUCE, kD, {2});
    et::SetStringAttr(&ar0, "pg_name", "1");
    ranks[0].push_back(ar0);
    Node ar1 = et::MakeCollNode(3, "ar", ChakraProtoMsg::ALL_REDUCE, kD);
    et::SetStringAttr(&ar1, "pg_name", "1");
    if (wait_us > 0) {
      ranks[1].push_back(et::MakeCompNode(1, "fwd", wait_us));
      et::AddDataDeps(&ar1, {1});
    }
    ranks[1].push_back(ar1);
    RunOptions o = WriteCase("other_rank_group_" + std::to_string(wait_us), ranks, kSystem);
    StatusOr<RunResult> res = RunSimulation(o);
    ASSERT_FALSE(res.ok()) << wait_us;
    const std::string m = res.status().message();
    EXPECT_NE(m.find(".1.et"), std::string::npos) << m;
    EXPECT_NE(m.find("pg_name '1' names a communicator group that is defined neither in "
                     "--comm-group-configuration nor by a METADATA node of this NPU's trace "
                     "before it"),
              std::string::npos)
        << m;
    // Once NPU 0's METADATA has run, the message says who defines it.
    EXPECT_EQ(m.find("(another rank's METADATA defines it: each rank's trace defines the groups it "
                     "uses, as in ASTRA-sim)") != std::string::npos,
              wait_us > 0)
        << m;
  }
}

// communication-slots: how many collectives an NPU runs at once. NPUs 0 and 1 all-reduce D in
// two groups of the same two members, with no dependency between the two, and the system layer
// may run two chunks at once on the dimension. On the unaware
// backend (no contention) one collective alone takes S; with one slot (ASTRA-sim's) the second
// waits for the first, 2S; with two slots they run side by side, S. On the congestion-aware
// backend they share the links: between S and 2S.
TEST(CollectivesEndToEnd, CommunicationSlotsLetCollectivesOfDifferentGroupsOverlap) {
  auto ranks = [](bool both) {
    std::vector<std::vector<Node>> out(2);
    for (auto& rank : out) {
      rank.push_back(et::MakeMetadataNode(
          0, "process_group:init",
          R"([[{"pg_name": "1", "ranks": [0, 1]}, {"pg_name": "2", "ranks": [0, 1]}]])"));
      for (int g = 1; g <= (both ? 2 : 1); ++g) {
        Node n = et::MakeCollNode(g, "ar_g" + std::to_string(g), ChakraProtoMsg::ALL_REDUCE, kD);
        et::SetStringAttr(&n, "pg_name", std::to_string(g));
        rank.push_back(n);
      }
    }
    return out;
  };
  for (Backend b : kBackends) {
    auto run = [&](bool both, int slots) {
      std::string system = kSystem;
      system.insert(system.find('{') + 1,
                    " \"communication-slots\": " + std::to_string(slots) + ",");
      // Two chunks in flight per dimension, so the system layer can serve both at once.
      system.replace(system.find("\"active-chunks-per-dimension\": 1"), 32,
                     "\"active-chunks-per-dimension\": 2");
      RunOptions o = WriteCase("slots", ranks(both), system);
      o.backend = b;
      StatusOr<RunResult> r = RunSimulation(o);
      EXPECT_TRUE(r.ok()) << r.status().message();
      return r.ok() ? r->end.WholeNs() : int64_t{-1};
    };
    const int64_t alone = run(false, 1);
    ASSERT_GT(alone, 0);
    EXPECT_EQ(run(false, 2), alone);
    EXPECT_EQ(run(true, 1), 2 * alone);
    if (b == Backend::kAnalyticalUnaware) {
      EXPECT_EQ(run(true, 2), alone);
    } else {
      EXPECT_GT(run(true, 2), alone);
      EXPECT_LT(run(true, 2), 2 * alone);
    }
  }
}

TEST(CollectivesEndToEnd, RootOutsideTheMachineIsAnErrorNamingTheNode) {
  RunOptions o = WriteCase("bad_root", OneCollective(4, ChakraProtoMsg::GATHER, kD, 9));
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("node 1 'coll'"), std::string::npos) << m;
  EXPECT_NE(m.find("9"), std::string::npos) << m;
  EXPECT_NE(m.find("comm_dst"), std::string::npos) << m;
  EXPECT_NE(m.find(".et"), std::string::npos) << m;
}

// Ranks whose collectives do not line up: NPU 1's second collective is an all-gather where the
// others have an all-reduce. The run stops with an error naming both NPUs and both nodes.
TEST(CollectivesEndToEnd, MismatchedCollectivesAreAnErrorNamingRanksAndNodes) {
  std::vector<std::vector<Node>> ranks(4);
  for (int npu = 0; npu < 4; ++npu) {
    ranks[npu] = {et::MakeCollNode(1, "first", ChakraProtoMsg::ALL_REDUCE, kD),
                  npu == 1 ? et::MakeCollNode(2, "odd_one", ChakraProtoMsg::ALL_GATHER, kD, {1})
                           : et::MakeCollNode(2, "second", ChakraProtoMsg::ALL_REDUCE, kD, {1})};
  }
  for (Backend b : kBackends) {
    RunOptions o = WriteCase("mismatch", ranks);
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_FALSE(r.ok());
    const std::string m = r.status().message();
    for (const char* part : {"do not line up", "NPU 1", "node 2 'odd_one'", "all-gather",
                             "node 2 'second'", "all-reduce", "collective #2"}) {
      EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
    }
  }
  // Same type, different size, in a communicator group.
  for (int npu = 0; npu < 4; ++npu) {
    ranks[npu] = {et::MakeCollNode(1, "bcast", ChakraProtoMsg::BROADCAST, npu == 3 ? kD / 2 : kD)};
    et::SetStringAttr(&ranks[npu][0], "pg_name", "7");
  }
  RunOptions o = WriteCase("mismatch_size", ranks);
  std::ofstream(o.workload + ".groups.json") << R"({"7": [0, 1, 2, 3]})";
  o.comm_group_config = o.workload + ".groups.json";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  for (const char* part : {"communicator group 7", "NPU 3", "524288 B", "1048576 B"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
}

// NPU 2 never issues the second all-reduce (its trace has one collective): the others wait for
// it forever. The run stops with the stuck NPUs and names the collective NPU 2 never issued.
TEST(CollectivesEndToEnd, MissingCollectiveIsNamedInTheStuckReport) {
  std::vector<std::vector<Node>> ranks(4);
  for (int npu = 0; npu < 4; ++npu) {
    ranks[npu] = {et::MakeCollNode(1, "first", ChakraProtoMsg::ALL_REDUCE, kD)};
    if (npu != 2) {
      ranks[npu].push_back(et::MakeCollNode(2, "second", ChakraProtoMsg::ALL_REDUCE, kD, {1}));
    }
  }
  RunOptions o = WriteCase("missing", ranks);
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  for (const char* part : {"cannot finish", "collective #2 among all NPUs", "node 2 'second'",
                           "never issued by NPU 2"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
}

// A different group at the same position: NPU 3 runs its all-gather on all NPUs (no pg_name)
// while NPUs 0-2 run theirs in group 1 = {0, 1, 2, 3}. Each group's sequence then misses one
// member; the stuck report names both collectives and the NPUs that never issued them.
TEST(CollectivesEndToEnd, DifferentGroupAtTheSamePositionIsNamedInTheStuckReport) {
  std::vector<std::vector<Node>> ranks(4);
  for (int npu = 0; npu < 4; ++npu) {
    ranks[npu] = {
        et::MakeCollNode(1, npu == 3 ? "ag_world" : "ag_group", ChakraProtoMsg::ALL_GATHER, kD)};
    if (npu != 3) et::SetStringAttr(&ranks[npu][0], "pg_name", "1");
  }
  RunOptions o = WriteCase("group_mismatch", ranks);
  std::ofstream(o.workload + ".groups.json") << R"({"1": [0, 1, 2, 3]})";
  o.comm_group_config = o.workload + ".groups.json";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  for (const char* part :
       {"collective #1 among all NPUs", "node 1 'ag_world' on NPU 3", "never issued by NPU 0, 1, 2",
        "collective #1 among communicator group 1", "never issued by NPU 3"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
}

// ---------------------------------------------------------------------------------------------
// Custom (MSCCL-style) collectives

// ASTRA-sim's own example: the 8-NPU, 1 MiB all-reduce workload with
// custom_collectives/custom_collective.json on Ring_8npus.yml gives 90174 cycles on both
// backends (compat/astra-sim/REFERENCE.md). Each rank's ET is a chain of 14 send/receive pairs
// of 131072 B to/from its ring neighbours (one hop: floor(500 + 2441.41) = 2941 ns, both
// backends, no contention) and 7 reductions of 7 us: 14 * 2941 + 7 * 7000 = 90174. The JSON
// names the ETs relative to ASTRA-sim's root, so the run starts from there (as ASTRA-sim's).
TEST(CustomCollectives, AstraSimExampleGives90174CyclesOnBothBackends) {
  const std::string compat = SharedDir("compat");
  ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
  const std::string root = compat + "/astra-sim";
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(root.c_str()), 0) << root;
  for (Backend b : kBackends) {
    RunOptions o;
    o.workload = "examples/workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce";
    o.system_config = "examples/system/custom_collectives/custom_collective.json";
    o.network_config = "examples/network/analytical/Ring_8npus.yml";
    o.memory_config = "examples/remote_memory/analytical/no_memory_expansion.json";
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->num_npus(), 8);
    EXPECT_EQ(14 * Hop(131072) + 7 * 7000, 90174);
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(r->npus[i].finish.WholeNs(), 90174) << BackendName(b) << " NPU " << i;
    }
  }
  ASSERT_EQ(chdir(cwd), 0);
}

// A 4-rank algorithm: every rank sends 64 KiB to the next rank (tag 5), receives from the
// previous one, then computes `us` microseconds.
std::string WriteShiftAlgorithm(const std::string& name, int us) {
  std::vector<std::vector<Node>> ranks(4);
  for (int r = 0; r < 4; ++r) {
    ranks[r] = {et::MakeSendNode(1, (r + 1) % 4, 64 << 10, 5),
                et::MakeRecvNode(2, (r + 3) % 4, 64 << 10, 5),
                et::MakeCompNode(3, "reduce", us, {2})};
  }
  const std::string prefix = Tmp(name);
  EXPECT_TRUE(et::WriteRankFiles(prefix, ranks).ok());
  return prefix;
}

// Two all-reduces in a row. all-reduce-implementation-custom picks algorithm A (3 us of
// compute) for every all-reduce, but per-node-custom-implementation picks B (7 us) for node 2.
// Each takes t(64 KiB) + compute: unaware t = floor(1000 + 1220.70) = 2220; aware 2 * 1720 = 3440.
TEST(CustomCollectives, PerTypeAndPerNodeSelectionOnBothBackends) {
  const std::string a = WriteShiftAlgorithm("algo_a", 3);
  const std::string b2 = WriteShiftAlgorithm("algo_b", 7);
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) {
    r = {et::MakeCollNode(1, "ar1", ChakraProtoMsg::ALL_REDUCE, kD),
         et::MakeCollNode(2, "ar2", ChakraProtoMsg::ALL_REDUCE, kD, {1})};
  }
  std::ofstream(Tmp("per_node.yml")) << "2: " << b2 << "\n";
  const std::string system = std::string(R"({
    "scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "local-mem-bw": 50,
    "all-reduce-implementation-custom": [")") +
                             a + R"("], "per-node-custom-implementation": ")" +
                             Tmp("per_node.yml") + R"(" })";
  for (Backend b : kBackends) {
    RunOptions o = WriteCase("custom_sel", ranks, system);
    o.backend = b;
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const int64_t t = T(b, 64 << 10);
    EXPECT_EQ(t, b == Backend::kAnalyticalUnaware ? 2220 : 3440);
    for (int64_t f : Finishes(*r)) EXPECT_EQ(f, (t + 3000) + (t + 7000)) << BackendName(b);
  }
}

TEST(CustomCollectives, BadAlgorithmsAreErrorsNamingFileNodeAndValue) {
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) r = {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, kD)};
  auto run =
      [&](const std::string& prefix) {
        RunOptions o = WriteCase("custom_bad", ranks, std::string(R"({"scheduling-policy": "FIFO",
      "preferred-dataset-splits": 1, "local-mem-bw": 50,
      "all-reduce-implementation-custom": [")") + prefix + R"("] })");
        return RunSimulation(o);
      };
  // Missing files.
  StatusOr<RunResult> r = run(Tmp("no_such_algorithm"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no_such_algorithm.0.et"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("all-reduce-implementation-custom"), std::string::npos);
  // A peer outside the algorithm's ranks, and a node type that has no place there.
  std::vector<std::vector<Node>> algo(4);
  for (int k = 0; k < 4; ++k) algo[k] = {et::MakeSendNode(1, (k + 1) % 4, 8, 0)};
  algo[2][0] = et::MakeSendNode(1, 6, 8, 0);
  algo[3].push_back(et::MakeCollNode(2, "nested", ChakraProtoMsg::ALL_REDUCE, 8));
  ASSERT_TRUE(et::WriteRankFiles(Tmp("bad_algo"), algo).ok());
  r = run(Tmp("bad_algo"));
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  for (const char* part :
       {"bad_algo.2.et: node 1", "'comm_dst' is 6", "[0, 3]", "bad_algo.3.et: node 2 'nested'",
        "COMM_COLL_NODE", "valid: COMM_SEND_NODE, COMM_RECV_NODE, COMP_NODE"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
  // Every node of a 4-rank algorithm wrong (40 problems): 20 are named, the rest counted.
  std::vector<std::vector<Node>> wrong(4);
  for (int k = 0; k < 4; ++k) {
    for (int i = 1; i <= 10; ++i) wrong[k].push_back(et::MakeSendNode(i, k, 8, 0));  // to itself
  }
  ASSERT_TRUE(et::WriteRankFiles(Tmp("wrong_algo"), wrong).ok());
  r = run(Tmp("wrong_algo"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().problems().size(), 21u) << r.status().message();
  EXPECT_NE(r.status().message().find("... and 20 more problems in the ETs of custom collective "
                                      "algorithm '" +
                                      Tmp("wrong_algo") + "'"),
            std::string::npos)
      << r.status().message();
  // Ranks that do not match the group: a 2-rank algorithm for a 4-NPU all-reduce.
  std::vector<std::vector<Node>> two = {{et::MakeSendNode(1, 1, 8, 0)},
                                        {et::MakeRecvNode(1, 0, 8, 0)}};
  ASSERT_TRUE(et::WriteRankFiles(Tmp("two_ranks"), two).ok());
  r = run(Tmp("two_ranks"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("has 2 ranks"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("runs on 4 NPUs"), std::string::npos);
  // per-node-custom-implementation: a key that is not a node id (a name; -1, which strtoull
  // had read as 2^64 - 1; 2^64, which it had saturated), and a file that is not there.
  std::ofstream(Tmp("bad_per_node.yml")) << "grad_sync: " << Tmp("two_ranks") << "\n";
  std::ofstream(Tmp("bad_per_node_neg.yml")) << "-1: " << Tmp("two_ranks") << "\n";
  std::ofstream(Tmp("bad_per_node_big.yml"))
      << "18446744073709551616: " << Tmp("two_ranks") << "\n";
  // And one node given twice ('7' and '007': the second had replaced the first).
  std::ofstream(Tmp("bad_per_node_twice.yml"))
      << "7: " << Tmp("two_ranks") << "\n007: " << Tmp("two_ranks") << "\n";
  for (const std::string& yml :
       {Tmp("bad_per_node.yml"), Tmp("bad_per_node_neg.yml"), Tmp("bad_per_node_big.yml"),
        Tmp("bad_per_node_twice.yml"), Tmp("no_such.yml")}) {
    RunOptions o = WriteCase("custom_bad_node", ranks,
                             std::string(R"({"scheduling-policy": "FIFO",
      "preferred-dataset-splits": 1, "per-node-custom-implementation": ")") +
                                 yml + R"(" })");
    r = RunSimulation(o);
    ASSERT_FALSE(r.ok());
    const std::string msg = r.status().message();
    EXPECT_NE(msg.find("'per-node-custom-implementation' " + yml), std::string::npos) << msg;
    const std::string want = yml == Tmp("no_such.yml")            ? "cannot read it"
                             : yml == Tmp("bad_per_node_neg.yml") ? "entry '-1'"
                             : yml == Tmp("bad_per_node_big.yml") ? "entry '18446744073709551616'"
                             : yml == Tmp("bad_per_node_twice.yml")
                                 ? "node 7 is listed twice ('7' and '007')"
                                 : "entry 'grad_sync'";
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  }
}

// A custom algorithm with a rank's ET missing: one problem naming the missing rank and file,
// whether a higher rank's file shows the gap or only the peers of the remaining ranks do.
TEST(CustomCollectives, MissingRankIsOneProblemNamingIt) {
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) r = {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, kD)};
  auto run =
      [&](const std::string& prefix) {
        RunOptions o = WriteCase("custom_gap", ranks, std::string(R"({"scheduling-policy": "FIFO",
      "preferred-dataset-splits": 1, "local-mem-bw": 50,
      "all-reduce-implementation-custom": [")") + prefix + R"("] })");
        return RunSimulation(o);
      };
  const std::string gap = WriteShiftAlgorithm("gap_shift", 3);
  ASSERT_EQ(std::remove(et::RankTracePath(gap, 2).c_str()), 0);
  StatusOr<RunResult> r = run(gap);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.status().problems().size(), 1u) << r.status().message();
  EXPECT_EQ(r.status().message(),
            Tmp("custom_gap.system.json") +
                ": 'all-reduce-implementation-custom': custom collective algorithm '" + gap +
                "': rank 2 is missing (no file " + et::RankTracePath(gap, 2) + "), but " +
                et::RankTracePath(gap, 3) +
                " exists and 2 nodes name ranks 2 to 3 as peers (e.g. " +
                et::RankTracePath(gap, 0) +
                ": node 2 'recv' has comm_src 3); expected one ET for each rank 0 .. 3 "
                "(<prefix>.<rank>.et)");

  const std::string last = WriteShiftAlgorithm("last_shift", 3);
  ASSERT_EQ(std::remove(et::RankTracePath(last, 3).c_str()), 0);
  r = run(last);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.status().problems().size(), 1u) << r.status().message();
  const std::string m = r.status().message();
  for (const std::string& part :
       {"rank 3 is missing (no file " + et::RankTracePath(last, 3) + ")",
        std::string("2 nodes name rank 3 as peers"), std::string("or peers in [0, 2]")}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
}

// A custom algorithm whose rank 0 waits for a message rank 1 never sends: the run stops and the
// report names the custom collective, its ET and what it waits for.
TEST(CustomCollectives, StuckAlgorithmIsReported) {
  std::vector<std::vector<Node>> algo(4);
  algo[0] = {et::MakeRecvNode(1, 1, 4096, 0)};
  for (int r = 1; r < 4; ++r) algo[r] = {et::MakeCompNode(1, "idle", 1)};
  ASSERT_TRUE(et::WriteRankFiles(Tmp("stuck_algo"), algo).ok());
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) r = {et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, kD)};
  RunOptions o = WriteCase("custom_stuck", ranks,
                           std::string(R"({"scheduling-policy": "FIFO",
      "preferred-dataset-splits": 1, "all-reduce-implementation-custom": [")") +
                               Tmp("stuck_algo") + R"("] })");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  for (const char* part : {"1 of 4 NPUs are stuck", "custom collective node 1 'ar'",
                           "stuck_algo.0.et", "0 of 1 nodes done", "waits to receive from NPU 1"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
}

// A run of the trace files at `prefix` on a 4-NPU switch (50 GB/s, 500 ns) with kSystem.
RunOptions OnFourNpus(const std::string& prefix) {
  std::ofstream(prefix + ".system.json") << kSystem;
  std::ofstream(prefix + ".net.yml")
      << "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  RunOptions o;
  o.workload = prefix;
  o.system_config = prefix + ".system.json";
  o.network_config = prefix + ".net.yml";
  return o;
}

// ---------------------------------------------------------------------------------------------
// The real Chakra trace (compat/chakra/pytorch_model.0.et, on 4 NPUs): its NCCL broadcast
// kernels are now simulated as binomial-tree broadcasts from NPU 0 (no comm_src: the first
// member), not replayed from their recorded durations. On the unaware Switch network, the first
// broadcast (all ranks issue it at the same moment: the traces are identical up to it) takes
// 2 (e + t(S)) on the root and 2 (e + t(S)) + 2e on NPU 3 (v = 3), S its comm_size.
TEST(ChakraTrace, BroadcastsAreSimulated) {
  const std::string compat = SharedDir("compat");
  ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
  const std::string src = compat + "/chakra/pytorch_model.0.et";
  StatusOr<et::Trace> trace = et::Trace::Load(src);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  uint64_t kernels = 0, broadcasts = 0;
  for (uint32_t i = 0; i < trace->size(); ++i) {
    if (trace->type(i) != et::NodeType::kCommColl || !trace->comm_type(i) || !trace->comm_size(i)) {
      continue;
    }
    ++kernels;
    broadcasts += *trace->comm_type(i) == et::CollectiveType::kBroadcast;
  }
  ASSERT_GT(broadcasts, 0u);
  const std::string prefix = Tmp("pytorch");
  {
    std::ifstream in(src, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (int r = 0; r < 4; ++r) std::ofstream(et::RankTracePath(prefix, r)) << bytes;
  }
  RunOptions o = OnFourNpus(prefix);
  o.backend = Backend::kAnalyticalUnaware;
  o.record = true;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const NpuStats& s : r->npus) EXPECT_EQ(s.collectives, kernels);  // broadcasts included
  auto first_broadcast = [&](int npu) {
    const NodeRecord* first = nullptr;
    for (const NodeRecord& n : r->activity[npu]) {
      if (n.collective == et::CollectiveType::kBroadcast && (!first || n.start < first->start)) {
        first = &n;
      }
    }
    return first;
  };
  const NodeRecord* root = first_broadcast(0);
  const NodeRecord* last = first_broadcast(3);
  ASSERT_NE(root, nullptr);
  ASSERT_NE(last, nullptr);
  ASSERT_EQ(root->id, last->id);
  EXPECT_EQ(root->start, last->start);
  const int64_t t = T(Backend::kAnalyticalUnaware, root->bytes);
  EXPECT_EQ((root->end - root->start).WholeNs(), 2 * (kE + t)) << root->bytes << " B";
  EXPECT_EQ((last->end - last->start).WholeNs(), 2 * (kE + t) + 2 * kE);
  // The aware backend runs it too.
  o.backend = Backend::kAnalyticalAware;
  o.record = false;
  r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const NpuStats& s : r->npus) EXPECT_EQ(s.collectives, kernels);
}

// The breakdown is kept as the run goes, without a record of every node: a run that records
// (timelines, reports) and one that does not give the same breakdown, to the picosecond, and it
// is the one computed afterwards from the recorded nodes' intervals (workload/breakdown.h).
TEST(ChakraTrace, TheBreakdownNeedsNoRecordOfEveryNode) {
  const std::string compat = SharedDir("compat");
  ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
  const std::string prefix = Tmp("pytorch_breakdown");
  std::ofstream(prefix + ".0.et", std::ios::binary)
      << std::ifstream(compat + "/chakra/pytorch_model.0.et", std::ios::binary).rdbuf();
  RunOptions o = OnFourNpus(prefix);
  o.replicate_trace = true;
  StatusOr<RunResult> plain = RunSimulation(o);
  o.record = true;
  StatusOr<RunResult> recorded = RunSimulation(o);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_TRUE(recorded.ok()) << recorded.status().message();
  EXPECT_TRUE(plain->activity.empty());
  ASSERT_EQ(recorded->activity.size(), 4u);
  ASSERT_EQ(plain->breakdown.size(), 4u);
  for (int npu = 0; npu < 4; ++npu) {
    std::vector<Activity> intervals;
    for (const NodeRecord& n : recorded->activity[npu]) {
      intervals.push_back({0, n.track, n.start, n.end});
    }
    const NpuBreakdown after = BreakdownOf(intervals, recorded->npus[npu].finish);
    for (const NpuBreakdown* b : {&plain->breakdown[npu], &recorded->breakdown[npu]}) {
      EXPECT_EQ(b->total, after.total) << "NPU " << npu;
      EXPECT_EQ(b->compute, after.compute) << "NPU " << npu;
      EXPECT_EQ(b->cpu, after.cpu) << "NPU " << npu;
      EXPECT_EQ(b->communication, after.communication) << "NPU " << npu;
      EXPECT_EQ(b->overlapped, after.overlapped) << "NPU " << npu;
      EXPECT_EQ(b->memory, after.memory) << "NPU " << npu;
      EXPECT_EQ(b->idle, after.idle) << "NPU " << npu;
    }
    EXPECT_GT(after.overlapped, Time::Zero()) << "NPU " << npu;  // a case where unions matter
  }
}

// Group ids are any positive int: 5000 (past 2147, where group x 10^6 overflowed an int as a
// stream id) and 67108865 (whose stream ids wrapped onto group 1's) run exactly as 1 and 2, with
// the built-in ring and with a custom algorithm, two collectives per group.
TEST(CollectivesEndToEnd, LargeGroupIdsRunAsSmallOnes) {
  const std::string custom = WriteShiftAlgorithm("algo_big_ids", 3);
  const std::string custom_system = std::string(R"({
    "scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "local-mem-bw": 50,
    "all-reduce-implementation-custom": [")") +
                                    custom + R"("] })";
  const char* ids[2][2] = {{"1", "2"}, {"5000", "67108865"}};
  for (const std::string& system : {std::string(kSystem), custom_system}) {
    std::vector<int64_t> finishes[2];
    for (int v = 0; v < 2; ++v) {
      std::vector<std::vector<Node>> ranks(8);
      for (int r = 0; r < 8; ++r) {
        Node a = et::MakeCollNode(1, "ar", ChakraProtoMsg::ALL_REDUCE, kD);
        Node b = et::MakeCollNode(2, "ar2", ChakraProtoMsg::ALL_REDUCE, kD / 2, {1});
        et::SetStringAttr(&a, "pg_name", ids[v][r / 4]);
        et::SetStringAttr(&b, "pg_name", ids[v][r / 4]);
        ranks[r] = {a, b};
      }
      RunOptions o = WriteCase("big_ids", ranks, system);
      std::ofstream(o.workload + ".groups.json")
          << "{\"" << ids[v][0] << "\": [0, 1, 2, 3], \"" << ids[v][1] << "\": [4, 5, 6, 7]}";
      o.comm_group_config = o.workload + ".groups.json";
      StatusOr<RunResult> r = RunSimulation(o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      finishes[v] = Finishes(*r);
      EXPECT_GT(finishes[v][0], 0);
    }
    EXPECT_EQ(finishes[0], finishes[1]);
  }
}

}  // namespace
}  // namespace orrery
