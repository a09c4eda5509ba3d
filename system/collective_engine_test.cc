// System-layer timing, derived by hand from the model in system/README.md, over a test network
// that delivers every message after exactly `latency + size / bandwidth` (whole ns): no
// contention, so each formula below is exact.
#include "system/collective_engine.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "system/test_network.h"

namespace orrery {
namespace {

SystemParams Params(int splits, int active, bool local_bw_aware, int dims) {
  SystemParams p;
  p.preferred_dataset_splits = splits;
  p.active_chunks_per_dimension = active;
  p.local_bw_aware = local_bw_aware;
  p.endpoint_delay_ns = 10;
  p.local_mem_bw_bytes_per_ns = 1600;
  for (auto& impl : p.impl) impl.assign(dims, AlgorithmSpec{AlgorithmKind::kRing});
  return p;
}

// Runs one collective on every NPU and returns each NPU's completion time in whole ns.
std::vector<int64_t> RunCollective(Topology topo, SystemParams params, CollectiveType type,
                                   uint64_t size, int* messages = nullptr) {
  StatusOr<CollectiveRun> r = RunOnEveryNpu(topo, params, type, size);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {};
  if (messages) {
    *messages = 0;
    for (const auto& from : r->sent) *messages += static_cast<int>(from.size());
  }
  for (int64_t ns : r->ns) EXPECT_GE(ns, 0);
  return r->ns;
}

TEST(CollectiveEngineTest, RingAllReduceOneChunk) {
  // n = 8, D = 1 MiB in one chunk: msg = D/8 = 131072 B.
  // t = floor(500 + 131072 / (50 * 2^30 / 1e9)) = floor(500 + 2441.41) = 2941 ns.
  // r = 3 * floor(131072 / 1600) = 3 * 81 = 243 ns; e = 10 ns.
  // T = 2(n-1)(e + t) + (n-1) r + e = 14 * 2951 + 7 * 243 + 10 = 43025 ns.
  Topology topo{{RingDimension(8, 50, 500)}};
  int messages = 0;
  auto t =
      RunCollective(topo, Params(1, 1, true, 1), CollectiveType::kAllReduce, 1 << 20, &messages);
  for (int64_t x : t) EXPECT_EQ(x, 43025);
  EXPECT_EQ(messages, 8 * 14);  // 2(n-1) messages per NPU
}

TEST(CollectiveEngineTest, ChunksRunOneAfterAnotherWithOneActiveChunk) {
  // Four chunks of D = 256 KiB, msg = 32768 B: t = floor(500 + 610.35) = 1110, r = 3 * 20 = 60.
  // One chunk: 14 * 1120 + 7 * 60 + 10 = 16110 ns; four in sequence: 64440 ns.
  Topology topo{{RingDimension(8, 50, 500)}};
  auto t = RunCollective(topo, Params(4, 1, true, 1), CollectiveType::kAllReduce, 1 << 20);
  for (int64_t x : t) EXPECT_EQ(x, 64440);
}

TEST(CollectiveEngineTest, TwoActiveChunksOverlapWithoutContention) {
  // The same four chunks, two at a time on a network without contention: two rounds.
  Topology topo{{RingDimension(8, 50, 500)}};
  auto t = RunCollective(topo, Params(4, 2, true, 1), CollectiveType::kAllReduce, 1 << 20);
  for (int64_t x : t) EXPECT_EQ(x, 2 * 16110);
}

TEST(CollectiveEngineTest, ReduceScatterReducesEveryMessage) {
  // n = 4, one chunk of 1 MiB: msg = 262144 B, t = floor(500 + 4882.81) = 5382,
  // r = 3 * floor(262144 / 1600) = 3 * 163 = 489. T = (n-1)(e + t + r) + e = 3 * 5881 + 10.
  Topology topo{{RingDimension(4, 50, 500)}};
  auto t = RunCollective(topo, Params(1, 1, false, 1), CollectiveType::kReduceScatter, 1 << 20);
  for (int64_t x : t) EXPECT_EQ(x, 3 * (10 + 5382 + 489) + 10);
}

TEST(CollectiveEngineTest, TwoDimensionalLocalBwAwareAllReduce) {
  // 4 x 2 rings: dim 0 at 100 GiB/s / 100 ns, dim 1 at 25 GiB/s / 1000 ns. One chunk D = 1 MiB.
  // RS on dim 0 (n=4): msg D/4 = 262144: t0 = floor(100 + 2441.41) = 2541, r = 3*163 = 489.
  //   3 * (10 + 2541 + 489) + 10 = 9130.
  // AR on dim 1 (n=2) of D/4: msg 131072: t1 = floor(1000 + 4882.81) = 5882, r = 3*81 = 243.
  //   2 * (10 + 5882) + 1 * 243 + 10 = 12037.
  // AG on dim 0 of D/4: msg 262144, no reduction: 3 * (10 + 2541) + 10 = 7663.
  Topology topo{{RingDimension(4, 100, 100), RingDimension(2, 25, 1000)}};
  auto t = RunCollective(topo, Params(1, 1, true, 2), CollectiveType::kAllReduce, 1 << 20);
  for (int64_t x : t) EXPECT_EQ(x, 9130 + 12037 + 7663);
}

TEST(CollectiveEngineTest, SmallCollectiveGrowsToOneByteChunkPerNpu) {
  // 8 NPUs, 4 splits, 16 bytes: chunk = 16/4 = 4 < 8 NPUs, so chunk = 8 B and size = 32 B.
  // msg = 8/8 = 1 B: t = floor(500 + 1/53.687) = 500, r = 3 * floor(1/1600) = 0.
  // One chunk: 14 * 510 + 10 = 7150; four chunks in sequence.
  Topology topo{{RingDimension(8, 50, 500)}};
  auto t = RunCollective(topo, Params(4, 1, true, 1), CollectiveType::kAllReduce, 16);
  for (int64_t x : t) EXPECT_EQ(x, 4 * 7150);
}

TEST(CollectiveEngineTest, AllGatherSmallerThanItsSplitsRunsOneByteChunks) {
  // An all-gather does not grow: 2 B in 4 splits would be chunks of 0 B (the chunking loop
  // never ended). Chunks are at least 1 B: two chunks of 1 B, as 2 B in 2 splits.
  // msg = 1 B: t = floor(500 + 1/53.687) = 500. One chunk: (n-1)(e + t) + e = 7 * 510 + 10 =
  // 3580; two in sequence.
  Topology topo{{RingDimension(8, 50, 500)}};
  auto t = RunCollective(topo, Params(4, 1, false, 1), CollectiveType::kAllGather, 2);
  ASSERT_EQ(t.size(), 8u);
  for (int64_t x : t) EXPECT_EQ(x, 2 * 3580);
  EXPECT_EQ(t, RunCollective(topo, Params(2, 1, false, 1), CollectiveType::kAllGather, 2));
}

TEST(CollectiveEngineTest, MissingLocalMemBandwidthIsAnError) {
  Simulation sim;
  Topology topo{{RingDimension(4, 50, 500)}};
  FixedDelayNetwork net(sim, topo);
  SystemParams p = Params(1, 1, true, 1);
  p.local_mem_bw_bytes_per_ns = 0;
  SystemLayer sys(sim, net, p);
  Done d;
  CollectiveRequest req;
  req.size = 1024;
  req.label = "node 7 'ar'";
  Status s = sys.npu(0).StartCollective(req, &d, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("local-mem-bw"), std::string::npos) << s.message();
}

struct Sink : MessageSink {
  Simulation* sim = nullptr;
  std::vector<std::pair<uint64_t, Time>> got;
  void OnMessage(uint64_t c) override { got.emplace_back(c, sim->now()); }
};

TEST(MessageMatcherTest, MatchesInOrderAndCompletesBothSidesAtArrival) {
  Simulation sim;
  Topology topo{{RingDimension(4, 50, 500)}};
  FixedDelayNetwork net(sim, topo);
  MessageMatcher m(sim, net);
  Sink sent, recv;
  sent.sim = recv.sim = &sim;
  // 4096 B to the neighbour: floor(500 + 76.29) = 576 ns.
  m.Recv({0, 1, TagSpace::kNative, 5, 4096}, &recv, 1);
  m.Send({0, 1, TagSpace::kNative, 5, 4096}, &sent, 10);
  m.Send({0, 1, TagSpace::kNative, 5, 4096}, &sent, 11);
  sim.Run();
  ASSERT_EQ(sent.got.size(), 2u);
  EXPECT_EQ(sent.got[0].second.WholeNs(), 576);
  ASSERT_EQ(recv.got.size(), 1u);
  EXPECT_EQ(recv.got[0], std::make_pair(uint64_t{1}, Time::FromNs(576)));
  EXPECT_EQ(m.unreceived_messages(), 1u);
  // A receive posted after its message arrived completes at once (at the current time).
  m.Recv({0, 1, TagSpace::kNative, 5, 4096}, &recv, 2);
  sim.Run();
  ASSERT_EQ(recv.got.size(), 2u);
  EXPECT_EQ(recv.got[1].first, 2u);
  EXPECT_EQ(m.unreceived_messages(), 0u);
  EXPECT_EQ(m.pending_receives(), 0u);
}

TEST(MessageMatcherTest, SizeOrTagMismatchIsReportedNotMatched) {
  Simulation sim;
  Topology topo{{RingDimension(4, 50, 500)}};
  FixedDelayNetwork net(sim, topo);
  MessageMatcher m(sim, net);
  Sink recv;
  recv.sim = &sim;
  m.Recv({2, 3, TagSpace::kNative, 1, 100}, &recv, 0);
  m.Send({2, 3, TagSpace::kNative, 1, 200}, nullptr, 0);
  sim.Run();
  EXPECT_TRUE(recv.got.empty());
  // The two are named together as a near miss: same NPUs and tag, another size.
  auto lines = m.DescribePending(10);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "NPU 3 waits to receive from NPU 2 (tag 1, 100 B), but NPU 2 sent it 200 B with that "
            "tag, which no one received: a send and its receive must agree on source, "
            "destination, tag and size");
  // Same size, another tag; and a receive with no near miss at all.
  m.Recv({0, 1, TagSpace::kNative, 7, 64}, &recv, 1);
  m.Send({0, 1, TagSpace::kNative, 8, 64}, nullptr, 0);
  m.Recv({1, 0, TagSpace::kNative, 7, 64}, &recv, 2);
  sim.Run();
  lines = m.DescribePending(10);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "NPU 1 waits to receive from NPU 0 (tag 7, 64 B), but NPU 0 sent it that size with "
            "tag 8, which no one received: a send and its receive must agree on source, "
            "destination, tag and size");
  EXPECT_EQ(lines[2], "NPU 0 waits to receive from NPU 1 (tag 7, 64 B), never sent");
  // A message sent but not yet delivered (a network that deadlocked holds it) is not "never
  // sent": 1 MiB from NPU 1 to NPU 0 takes about 20 us; at 1 us it is on its way.
  {
    Simulation s2;
    FixedDelayNetwork n2(s2, topo);
    MessageMatcher m2(s2, n2);
    Sink r2;
    r2.sim = &s2;
    m2.Recv({1, 0, TagSpace::kNative, 7, 1 << 20}, &r2, 0);
    m2.Recv({1, 0, TagSpace::kNative, 7, 1 << 20}, &r2, 1);
    m2.Send({1, 0, TagSpace::kNative, 7, 1 << 20}, nullptr, 0);
    s2.Run(Time::FromNs(1000));
    const std::vector<std::string> moving = m2.DescribePending(10);
    ASSERT_EQ(moving.size(), 2u);
    EXPECT_EQ(moving[0],
              "NPU 0 waits to receive from NPU 1 (tag 7, 1048576 B), sent and still in the "
              "network (not yet delivered)");
    // One message is on its way for two receives: the second is still never sent.
    EXPECT_EQ(moving[1], "NPU 0 waits to receive from NPU 1 (tag 7, 1048576 B), never sent");
  }
  // Same tag and size, from another NPU than the receive names (a wrong comm_src).
  m.Recv({3, 2, TagSpace::kNative, 4, 32}, &recv, 3);
  m.Send({1, 2, TagSpace::kNative, 4, 32}, nullptr, 0);
  sim.Run();
  lines = m.DescribePending(10);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1],
            "NPU 2 waits to receive from NPU 3 (tag 4, 32 B), but NPU 1 sent NPU 2 that message "
            "instead, which no one received: a send and its receive must agree on source, "
            "destination, tag and size");
  // Past max_items, the rest are counted.
  lines = m.DescribePending(1);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "... and 3 more waiting receive(s) or unreceived message(s)");
}

}  // namespace
}  // namespace orrery
