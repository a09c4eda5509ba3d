// The direct, halving-doubling, double-binary-tree and one* algorithms, derived by hand from
// system/README.md over a test network that delivers every message after exactly
// `latency + size / bandwidth` (whole ns, no contention).
//
// Common figures (e = endpoint-delay = 10 ns, local-mem-bw 1600 B/ns, D = 1 MiB unless noted):
// on a 50 GiB/s (53.687 B/ns), 500 ns dimension t(s) = floor(500 + s / 53.687):
//   t(D) = 20031, t(D/2) = 10265, t(D/4) = 5382, t(D/8) = 2941;
// on a 25 GiB/s (26.844 B/ns), 1000 ns dimension t1(D/8) = floor(1000 + 4882.81) = 5882;
// reductions r(s) = 3 * floor(s / 1600): r(D) = 1965, r(D/4) = 489, r(D/8) = 243.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "system/collective_engine.h"
#include "system/test_network.h"

namespace orrery {
namespace {

SystemParams Params(std::vector<AlgorithmSpec> algos, int splits = 1, bool local_bw_aware = false) {
  SystemParams p;
  p.preferred_dataset_splits = splits;
  p.active_chunks_per_dimension = 1;
  p.local_bw_aware = local_bw_aware;
  p.endpoint_delay_ns = 10;
  p.local_mem_bw_bytes_per_ns = 1600;
  for (auto& impl : p.impl) impl = algos;
  return p;
}

constexpr AlgorithmSpec kHd{AlgorithmKind::kHalvingDoubling};
constexpr AlgorithmSpec kDirect{AlgorithmKind::kDirect};
constexpr AlgorithmSpec kDbt{AlgorithmKind::kDoubleBinaryTree};
constexpr uint64_t kD = 1 << 20;

using Result = CollectiveRun;

Result RunAll(Topology topo, SystemParams params, CollectiveType type, uint64_t size) {
  StatusOr<CollectiveRun> r = RunOnEveryNpu(topo, params, type, size);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {};
  for (int64_t ns : r->ns) EXPECT_GE(ns, 0);
  return *r;
}

Status StartError(Topology topo, SystemParams params, CollectiveType type) {
  Simulation sim;
  FixedDelayNetwork net(sim, topo);
  SystemLayer sys(sim, net, params);
  Done d;
  CollectiveRequest req;
  req.type = type;
  req.size = kD;
  req.label = "node 3";
  return sys.npu(0).StartCollective(req, &d, 0);
}

std::vector<int> Dsts(const Result& r, int npu) {
  std::vector<int> out;
  for (const auto& m : r.sent[npu]) out.push_back(m.first);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Halving-doubling

TEST(HalvingDoublingTest, AllReduceFourNpus) {
  // Messages D/2 at distance 1, D/4 at 2, D/4 at 2, D/2 at 1. Hand-offs: 2 log n + 1 = 5; rounds
  // of log n = 2 hand-offs, the second of the first round reduced, sized as the message it
  // releases (D/4). T = 5e + 2 t(D/2) + 2 t(D/4) + r(D/4) = 50 + 20530 + 10764 + 489 = 31833.
  auto r = RunAll({{RingDimension(4, 50, 500)}}, Params({kHd}), CollectiveType::kAllReduce, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 31833);
  EXPECT_EQ(Dsts(r, 0), (std::vector<int>{1, 2, 2, 1}));
  EXPECT_EQ(Dsts(r, 3), (std::vector<int>{2, 1, 1, 2}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.Bytes(i), 2 * (kD / 2 + kD / 4));
}

TEST(HalvingDoublingTest, AllReduceEightNpus) {
  // D/2 @1, D/4 @2, D/8 @4, then D/8 @4, D/4 @2, D/2 @1 (pair = index XOR distance). Rounds of 3
  // hand-offs; the first round reduces D/4 and D/8.
  // T = 7e + 2 (t(D/2) + t(D/4) + t(D/8)) + r(D/4) + r(D/8) = 70 + 37176 + 489 + 243 = 37978.
  auto r = RunAll({{RingDimension(8, 50, 500)}}, Params({kHd}), CollectiveType::kAllReduce, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 37978);
  EXPECT_EQ(Dsts(r, 0), (std::vector<int>{1, 2, 4, 4, 2, 1}));
  EXPECT_EQ(Dsts(r, 5), (std::vector<int>{4, 7, 1, 1, 7, 4}));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.sent[i].size(), 6u);
    EXPECT_EQ(r.Bytes(i), 2 * (kD / 2 + kD / 4 + kD / 8));
  }
}

TEST(HalvingDoublingTest, AllReduceTwoNpusHasNoReduction) {
  // log n = 1: every round is a single injected hand-off, so nothing is reduced.
  // T = 3e + 2 t(D/2) = 30 + 20530 = 20560.
  auto r = RunAll({{RingDimension(2, 50, 500)}}, Params({kHd}), CollectiveType::kAllReduce, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 20560);
}

TEST(HalvingDoublingTest, OddSizesHalveWithTruncationAndDoubleBack) {
  // D = 1000 on 8 NPUs: 500, 250, 125, then 125/2 = 62 doubled back to 124, 248, 496.
  auto r = RunAll({{RingDimension(8, 50, 500)}}, Params({kHd}), CollectiveType::kAllReduce, 1000);
  std::vector<uint64_t> sizes;
  for (const auto& m : r.sent[0]) sizes.push_back(m.second);
  EXPECT_EQ(sizes, (std::vector<uint64_t>{500, 250, 125, 124, 248, 496}));
}

TEST(HalvingDoublingTest, ReduceScatterEightNpus) {
  // D/2 @1, D/4 @2, D/8 @4; hand-offs: injected, two reduced (D/4, D/8), injected.
  // T = 4e + t(D/2) + t(D/4) + t(D/8) + r(D/4) + r(D/8) = 40 + 18588 + 732 = 19360.
  auto r = RunAll({{RingDimension(8, 50, 500)}}, Params({kHd}), CollectiveType::kReduceScatter, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 19360);
  EXPECT_EQ(Dsts(r, 0), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(r.Bytes(6), kD / 2 + kD / 4 + kD / 8);
}

TEST(HalvingDoublingTest, AllGatherEightNpus) {
  // D = 128 KiB per NPU: D @4, 2D @2, 4D @1, nothing reduced.
  // T = 4e + t(128 KiB) + t(256 KiB) + t(512 KiB) = 40 + 2941 + 5382 + 10265 = 18628.
  auto r = RunAll({{RingDimension(8, 50, 500)}}, Params({kHd}), CollectiveType::kAllGather, kD / 8);
  for (int64_t x : r.ns) EXPECT_EQ(x, 18628);
  EXPECT_EQ(Dsts(r, 0), (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(r.Bytes(3), 7 * kD / 8);
}

TEST(HalvingDoublingTest, AllToAllIsAClearError) {
  Status s = StartError({{RingDimension(8, 50, 500)}}, Params({kHd}), CollectiveType::kAllToAll);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'halvingDoubling' for all-to-all is not supported"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("supported for all-to-all: ring"), std::string::npos);
}

TEST(HalvingDoublingTest, NonPowerOfTwoIsAClearError) {
  Status s = StartError({{RingDimension(6, 50, 500)}}, Params({kHd}), CollectiveType::kAllReduce);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs a power-of-two number of NPUs, got 6"), std::string::npos)
      << s.message();
}

// ---------------------------------------------------------------------------------------------
// Direct

TEST(DirectTest, AllToAllFullWindow) {
  // n = 4, window 3: three D/4 messages to NPUs +1, +2, +3 at once.
  // T = e (hand-off) + t(D/4) + e (hand-off back) = 20 + 5382 = 5402.
  auto r = RunAll({{RingDimension(4, 50, 500)}}, Params({kDirect}), CollectiveType::kAllToAll, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 5402);
  EXPECT_EQ(Dsts(r, 0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(Dsts(r, 2), (std::vector<int>{3, 0, 1}));
  EXPECT_EQ(r.Bytes(1), 3 * kD / 4);
}

TEST(DirectTest, AllToAllNonPowerOfTwo) {
  // n = 6, D = 768 KiB: five 128 KiB messages at once. T = 2e + t(128 KiB) = 20 + 2941 = 2961.
  auto r = RunAll({{RingDimension(6, 50, 500)}}, Params({kDirect}), CollectiveType::kAllToAll,
                  6 * kD / 8);
  for (int64_t x : r.ns) EXPECT_EQ(x, 2961);
  EXPECT_EQ(Dsts(r, 4), (std::vector<int>{5, 0, 1, 2, 3}));
}

TEST(DirectTest, AllToAllWindowOfTwo) {
  // direct<2>, n = 8: seven D/8 messages, two in flight: ceil(7/2) = 4 waves.
  // T = 5e + 4 t(D/8) = 50 + 11764 = 11814.
  SystemParams p = Params({AlgorithmSpec{AlgorithmKind::kDirect, 2}});
  auto r = RunAll({{RingDimension(8, 50, 500)}}, p, CollectiveType::kAllToAll, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 11814);
  EXPECT_EQ(Dsts(r, 0), (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(DirectTest, AllReduceFullWindow) {
  // n = 4: three D/4 sends (hand-off e), three arrive and are reduced (e + r), the second three
  // go once all three have arrived, and their arrivals are handed back (e).
  // T = 3e + 2 t(D/4) + r(D/4) = 30 + 10764 + 489 = 11283; 6 messages of D/4 per NPU.
  auto r = RunAll({{RingDimension(4, 50, 500)}}, Params({kDirect}), CollectiveType::kAllReduce, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 11283);
  EXPECT_EQ(Dsts(r, 1), (std::vector<int>{2, 3, 0, 2, 3, 0}));
  EXPECT_EQ(r.Bytes(1), 6 * kD / 4);
}

TEST(DirectTest, AllReduceWindowOfTwo) {
  // direct<2>, n = 4 (rounds: 2 injected + 2 from the network, the first round's reduced):
  //   e: send #1, #2;  e+t: both arrive, reduced -> 2e+t+r: send #3; the 4th send waits for
  //   3 arrivals;  2e+2t+r: #3 arrives (injected hand-off) -> 3e+2t+r: send #4, #5;
  //   3e+3t+r: both arrive -> 4e+3t+r: send #6;  4e+4t+r: #6 arrives -> 5e+4t+r done.
  // T = 5e + 4 t(D/4) + r(D/4) = 50 + 21528 + 489 = 22067.
  SystemParams p = Params({AlgorithmSpec{AlgorithmKind::kDirect, 2}});
  auto r = RunAll({{RingDimension(4, 50, 500)}}, p, CollectiveType::kAllReduce, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 22067);
  EXPECT_EQ(r.sent[0].size(), 6u);
}

TEST(DirectTest, AllReduceNonPowerOfTwo) {
  // n = 6, D = 768 KiB, msg 128 KiB: T = 3e + 2 t(128 KiB) + r(128 KiB) = 30 + 5882 + 243.
  auto r = RunAll({{RingDimension(6, 50, 500)}}, Params({kDirect}), CollectiveType::kAllReduce,
                  6 * kD / 8);
  for (int64_t x : r.ns) EXPECT_EQ(x, 6155);
  EXPECT_EQ(r.Bytes(5), 10 * kD / 8);
}

TEST(DirectTest, ReduceScatterAndAllGather) {
  // RS n = 4: T = 2e + t(D/4) + r(D/4) = 20 + 5382 + 489 = 5891.
  auto rs =
      RunAll({{RingDimension(4, 50, 500)}}, Params({kDirect}), CollectiveType::kReduceScatter, kD);
  for (int64_t x : rs.ns) EXPECT_EQ(x, 5891);
  EXPECT_EQ(rs.Bytes(0), 3 * kD / 4);
  // AG n = 4 of 256 KiB: three 256 KiB messages. T = 2e + t(256 KiB) = 5402.
  auto ag =
      RunAll({{RingDimension(4, 50, 500)}}, Params({kDirect}), CollectiveType::kAllGather, kD / 4);
  for (int64_t x : ag.ns) EXPECT_EQ(x, 5402);
  EXPECT_EQ(ag.Bytes(0), 3 * kD / 4);
}

// ---------------------------------------------------------------------------------------------
// Double binary tree

TEST(DoubleBinaryTreeTest, AllReduceFourNpus) {
  // First chunk: tree with the root at index 3; in-order nodes 0 (leaf), 1 (inner), 2 (leaf).
  // Leaves send D at e; node 1 reduces both (e + r) and sends up at 2e+t+r; the root reduces
  // and sends back at 3e+2t+2r (done); node 1 reduces it and sends to both leaves at
  // 4e+3t+3r (done); the leaves hand it back at 5e+4t+3r.
  auto r = RunAll({{RingDimension(4, 50, 500)}}, Params({kDbt}), CollectiveType::kAllReduce, kD);
  const int64_t e = 10, t = 20031, red = 1965;
  EXPECT_EQ(r.ns, (std::vector<int64_t>{5 * e + 4 * t + 3 * red, 4 * e + 3 * t + 3 * red,
                                        5 * e + 4 * t + 3 * red, 3 * e + 2 * t + 2 * red}));
  EXPECT_EQ(Dsts(r, 0), (std::vector<int>{1}));
  EXPECT_EQ(Dsts(r, 1), (std::vector<int>{3, 0, 2}));
  EXPECT_EQ(Dsts(r, 3), (std::vector<int>{1}));
  EXPECT_EQ(r.Bytes(1), 3 * kD);
}

TEST(DoubleBinaryTreeTest, AllReduceEightNpus) {
  // Root 7 over the in-order tree 3 (top), 1 and 5, leaves 0, 2, 4, 6.
  // Leaves 7e+6t+5r, nodes 1/5 6e+5t+5r, node 3 5e+4t+4r, root 4e+3t+3r.
  auto r = RunAll({{RingDimension(8, 50, 500)}}, Params({kDbt}), CollectiveType::kAllReduce, kD);
  const int64_t e = 10, t = 20031, red = 1965;
  const int64_t leaf = 7 * e + 6 * t + 5 * red, mid = 6 * e + 5 * t + 5 * red;
  EXPECT_EQ(r.ns, (std::vector<int64_t>{leaf, mid, leaf, 5 * e + 4 * t + 4 * red, leaf, mid, leaf,
                                        4 * e + 3 * t + 3 * red}));
  EXPECT_EQ(leaf, 130081);
  EXPECT_EQ(Dsts(r, 5), (std::vector<int>{3, 4, 6}));
}

TEST(DoubleBinaryTreeTest, ChunksAlternateTrees) {
  // n = 2, 2 MiB in two 1 MiB chunks. Chunk 1: root 1, leaf 0. Chunk 2: root 0, leaf 1.
  // Chunk 1: NPU 1 (root) done 2e+t+r, NPU 0 (leaf) done 3e+2t+r.
  // Chunk 2: NPU 1 (leaf) starts at 2e+t+r, sends at 3e+t+r, arriving at 3e+2t+r when NPU 0
  // (root) starts; it reduces and sends back at 4e+2t+2r (done); NPU 1 done at 5e+3t+2r.
  auto r =
      RunAll({{RingDimension(2, 50, 500)}}, Params({kDbt}, 2), CollectiveType::kAllReduce, 2 * kD);
  const int64_t e = 10, t = 20031, red = 1965;
  EXPECT_EQ(r.ns, (std::vector<int64_t>{4 * e + 2 * t + 2 * red, 5 * e + 3 * t + 2 * red}));
}

TEST(DoubleBinaryTreeTest, OtherCollectivesAndSizesAreClearErrors) {
  Status s =
      StartError({{RingDimension(4, 50, 500)}}, Params({kDbt}), CollectiveType::kReduceScatter);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'doubleBinaryTree' implements all-reduce only"), std::string::npos)
      << s.message();
  s = StartError({{RingDimension(6, 50, 500)}}, Params({kDbt}), CollectiveType::kAllReduce);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("power-of-two"), std::string::npos) << s.message();
  // localBWAware gives dimension 0 a reduce-scatter and an all-gather.
  s = StartError({{RingDimension(4, 50, 500), RingDimension(2, 50, 500)}},
                 Params({kDbt, kDbt}, 1, true), CollectiveType::kAllReduce);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("localBWAware"), std::string::npos) << s.message();
  // ... but on the last dimension it runs.
  auto r = RunAll({{RingDimension(4, 50, 500), RingDimension(2, 50, 500)}},
                  Params({AlgorithmSpec{AlgorithmKind::kRing}, kDbt}, 1, true),
                  CollectiveType::kAllReduce, kD);
  EXPECT_EQ(r.ns.size(), 8u);
  // Unless roundRobin or offlineGreedy may order a chunk's dimensions with it first: then it
  // would run a reduce-scatter phase as an all-reduce (it had, silently, 2.6 x as slow).
  for (InterDimensionPolicy policy :
       {InterDimensionPolicy::kRoundRobin, InterDimensionPolicy::kOfflineGreedy}) {
    SystemParams p = Params({AlgorithmSpec{AlgorithmKind::kRing}, kDbt}, 1, true);
    p.inter_dimension = policy;
    s = StartError({{RingDimension(4, 50, 500), RingDimension(2, 50, 500)}}, p,
                   CollectiveType::kAllReduce);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(
                  "may put this one before another; set inter-dimension-scheduling: ascending"),
              std::string::npos)
        << s.message();
  }
}

// ---------------------------------------------------------------------------------------------
// one*: one ring over all NPUs in id order; a message crosses whichever network dimensions its
// two ends differ in (the test network charges the first differing one).

Topology FourByTwo() { return Topology{{RingDimension(4, 50, 500), RingDimension(2, 25, 1000)}}; }

TEST(OneAlgorithmsTest, OneRingIsAnEightNpuRing) {
  // Ring neighbours i -> i+1 always differ in dimension 0, so this is the 8-NPU ring of
  // CollectiveEngineTest.RingAllReduceOneChunk: 14 (e + 2941) + 7 * 243 + e = 43025. The second
  // list entry is never reached.
  SystemParams p = Params({AlgorithmSpec{AlgorithmKind::kOneRing}, kHd});
  auto r = RunAll(FourByTwo(), p, CollectiveType::kAllReduce, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 43025);
  EXPECT_EQ(Dsts(r, 3), std::vector<int>(14, 4));
}

TEST(OneAlgorithmsTest, OneDirectAllToAll) {
  // Seven D/8 messages at once; the one to NPU i+4 differs only in dimension 1:
  // T = 2e + t1(D/8) = 20 + 5882 = 5902.
  SystemParams p = Params({AlgorithmSpec{AlgorithmKind::kOneDirect}});
  auto r = RunAll(FourByTwo(), p, CollectiveType::kAllToAll, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 5902);
  EXPECT_EQ(Dsts(r, 6), (std::vector<int>{7, 0, 1, 2, 3, 4, 5}));
}

TEST(OneAlgorithmsTest, OneHalvingDoublingAllReduce) {
  // Pairs at XOR 1 and 2 differ in dimension 0, at XOR 4 only in dimension 1:
  // T = 7e + 2 (t(D/2) + t(D/4) + t1(D/8)) + r(D/4) + r(D/8) = 70 + 43058 + 732 = 43860.
  SystemParams p = Params({AlgorithmSpec{AlgorithmKind::kOneHalvingDoubling}});
  auto r = RunAll(FourByTwo(), p, CollectiveType::kAllReduce, kD);
  for (int64_t x : r.ns) EXPECT_EQ(x, 43860);
  EXPECT_EQ(Dsts(r, 2), (std::vector<int>{3, 0, 6, 6, 0, 3}));
}

TEST(OneAlgorithmsTest, CommunicatorGroupAlwaysRunsARing) {
  // A 4-member group of an 8-NPU machine runs a local ring (10 ns hand-offs) whatever the list
  // says: members 0, 2, 4, 6; neighbours differ in dimension 0: t(D/4) = 5382, r = 489.
  // T = 6 (10 + 5382) + 3 * 489 + 10 = 33829.
  Simulation sim;
  FixedDelayNetwork net(sim, {{RingDimension(8, 50, 500)}});
  SystemLayer sys(sim, net, Params({kHd}));
  ASSERT_TRUE(sys.AddGroup(1, {6, 0, 4, 2}).ok());
  std::vector<Done> done(4);
  for (int i = 0; i < 4; ++i) {
    done[i].sim = &sim;
    CollectiveRequest req;
    req.size = kD;
    req.group = 1;
    ASSERT_TRUE(sys.npu(2 * i).StartCollective(req, &done[i], 0).ok());
  }
  sim.Run();
  for (auto& d : done) {
    ASSERT_EQ(d.at.size(), 1u);
    EXPECT_EQ(d.at[0].WholeNs(), 33829);
  }
  const std::vector<std::pair<int, uint64_t>> expected(6, {4, kD / 4});
  EXPECT_EQ(net.sent[2], expected);
}

}  // namespace
}  // namespace orrery
