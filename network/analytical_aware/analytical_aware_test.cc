#include "network/analytical_aware/analytical_aware.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace orrery {
namespace {

// Records the arrival time of every token.
class Recorder : public DeliveryHandler {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void OnDelivered(uint64_t token) override {
    order.push_back(token);
    at[token] = sim_.now();
  }
  std::vector<uint64_t> order;
  std::map<uint64_t, Time> at;

 private:
  Simulation& sim_;
};

Dimension Dim(BlockType type, int npus, Bandwidth bw, Time latency) {
  Dimension d;
  d.type = type;
  d.npus = npus;
  d.bandwidth = bw;
  d.latency = latency;
  return d;
}

// 1 byte per ns exactly: a 1000-byte chunk is serialised in 1000 ns, so a hop with 100 ns of
// latency takes 100 + 1000 = 1100 ns.
const Bandwidth kOneBytePerNs = Bandwidth::FromBytesPerSec(1e9);

Topology OneDim(BlockType type, int npus) {
  return Topology{{Dim(type, npus, kOneBytePerNs, Time::FromNs(100))}};
}

std::map<std::string, LinkStats> LinksByName(const Network& net) {
  std::map<std::string, LinkStats> m;
  for (const LinkStats& l : net.Links()) m[l.name] = l;
  return m;
}

TEST(AnalyticalAware, SingleMessageSumsLatencyAndSerializationPerHop) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 8));
  Recorder r(sim);
  net.Send(0, 1, Bytes(1000), &r, 1);  // 1 hop:  1100
  net.Send(2, 5, Bytes(1000), &r, 2);  // 3 hops: 3 * 1100 = 3300
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(1100));
  EXPECT_EQ(r.at[2], Time::FromNs(3300));
  EXPECT_EQ(net.in_flight(), 0u);
}

TEST(AnalyticalAware, RoundsEachHopLikeAstraSim) {
  Simulation sim;
  // 50 GB/s (2^30 B) = 53.6870912 B/ns; 65536 B -> 1220.703125 ns serialization.
  AnalyticalAwareNetwork net(
      sim, Topology{{Dim(BlockType::kRing, 8, Bandwidth::FromGiBps(50), Time::FromNs(500))}});
  Recorder r(sim);
  net.Send(0, 2, Bytes(65536), &r, 1);
  net.Send(4, 5, Bytes(65536), &r, 2);
  net.Send(4, 5, Bytes(65536), &r, 3);
  sim.Run();
  // Per hop trunc(500 + 1220.703125) = 1720; two hops store-and-forward: 3440.
  EXPECT_EQ(r.at[1], Time::FromNs(3440));
  EXPECT_EQ(r.at[2], Time::FromNs(1720));
  // The link is busy trunc(1220.703125) = 1220 ns, so the second chunk starts at 1220 and
  // arrives at 1220 + 1720 = 2940.
  EXPECT_EQ(r.at[3], Time::FromNs(2940));
  EXPECT_EQ(LinksByName(net)["npu4->npu5"].busy, Time::FromNs(2 * 1220));
}

TEST(AnalyticalAware, MessagesOnOneLinkSerialise) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 4));
  Recorder r(sim);
  net.Send(0, 1, Bytes(1000), &r, 1);
  net.Send(0, 1, Bytes(1000), &r, 2);
  net.Send(0, 1, Bytes(500), &r, 3);
  sim.Run();
  // First: 1100. Second waits for the link (free at 1000): 1000 + 1100 = 2100.
  // Third starts at 2000 and takes 100 + 500: 2600.
  EXPECT_EQ(r.at[1], Time::FromNs(1100));
  EXPECT_EQ(r.at[2], Time::FromNs(2100));
  EXPECT_EQ(r.at[3], Time::FromNs(2600));
  EXPECT_EQ(r.order, (std::vector<uint64_t>{1, 2, 3}));
}

TEST(AnalyticalAware, MessagesOnDifferentLinksDoNotInterfere) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 4));
  Recorder r(sim);
  net.Send(0, 1, Bytes(1000), &r, 1);
  net.Send(1, 0, Bytes(1000), &r, 2);  // the opposite direction is its own link
  net.Send(1, 2, Bytes(1000), &r, 3);
  net.Send(2, 3, Bytes(1000), &r, 4);
  sim.Run();
  for (uint64_t k = 1; k <= 4; ++k) EXPECT_EQ(r.at[k], Time::FromNs(1100)) << k;
}

TEST(AnalyticalAware, SwitchContendsOnTheDownLink) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kSwitch, 4));
  Recorder r(sim);
  net.Send(0, 2, Bytes(1000), &r, 1);
  net.Send(1, 2, Bytes(1000), &r, 2);
  net.Send(3, 1, Bytes(1000), &r, 3);
  sim.Run();
  // Up links are separate: both reach sw0 at 1100. sw0->npu2 takes #1 first (its arrival ran
  // first): 1100 + 1100 = 2200; it is free again at 1100 + 1000 = 2100, so #2 arrives at
  // 2100 + 1100 = 3200. #3 uses other links: 2 * 1100 = 2200.
  EXPECT_EQ(r.at[1], Time::FromNs(2200));
  EXPECT_EQ(r.at[2], Time::FromNs(3200));
  EXPECT_EQ(r.at[3], Time::FromNs(2200));
  auto links = LinksByName(net);
  EXPECT_EQ(links.size(), 8u);  // 4 NPUs x (up, down)
  EXPECT_EQ(links["npu0->sw0"].bytes, 1000u);
  EXPECT_EQ(links["npu1->sw0"].bytes, 1000u);
  EXPECT_EQ(links["sw0->npu2"].bytes, 2000u);
  EXPECT_EQ(links["sw0->npu2"].busy, Time::FromNs(2000));
  EXPECT_EQ(links["sw0->npu1"].bytes, 1000u);
  EXPECT_EQ(links["sw0->npu0"].bytes, 0u);
}

TEST(AnalyticalAware, RingTiesGoClockwise) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 4));
  Recorder r(sim);
  net.Send(0, 2, Bytes(1000), &r, 1);  // cw 2 = anticlockwise 2: clockwise via npu1
  net.Send(0, 3, Bytes(1000), &r, 2);  // anticlockwise 1 < cw 3
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(2200));
  EXPECT_EQ(r.at[2], Time::FromNs(1100));
  auto links = LinksByName(net);
  EXPECT_EQ(links.size(), 8u);  // 4 NPUs x (clockwise, anticlockwise)
  EXPECT_EQ(links["npu0->npu1"].bytes, 1000u);
  EXPECT_EQ(links["npu1->npu2"].bytes, 1000u);
  EXPECT_EQ(links["npu0->npu3"].bytes, 1000u);
  EXPECT_EQ(links["npu3->npu2"].bytes, 0u);
}

TEST(AnalyticalAware, RingTakesTheShorterWayRound) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 5));
  Recorder r(sim);
  net.Send(0, 3, Bytes(1000), &r, 1);  // cw 3, anticlockwise 2: 0 -> 4 -> 3
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(2200));
  auto links = LinksByName(net);
  EXPECT_EQ(links["npu0->npu4"].bytes, 1000u);
  EXPECT_EQ(links["npu4->npu3"].bytes, 1000u);
  EXPECT_EQ(links["npu0->npu1"].bytes, 0u);
}

TEST(AnalyticalAware, TwoNpuRingHasOneLinkEachWay) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 2));
  Recorder r(sim);
  net.Send(0, 1, Bytes(1000), &r, 1);
  net.Send(1, 0, Bytes(1000), &r, 2);
  net.Send(0, 1, Bytes(1000), &r, 3);
  sim.Run();
  // Opposite directions in parallel (1100 each); the second 0 -> 1 waits: 1000 + 1100.
  EXPECT_EQ(r.at[1], Time::FromNs(1100));
  EXPECT_EQ(r.at[2], Time::FromNs(1100));
  EXPECT_EQ(r.at[3], Time::FromNs(2100));
  auto links = LinksByName(net);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links["npu0->npu1"].bytes, 2000u);
  EXPECT_EQ(links["npu1->npu0"].bytes, 1000u);
}

TEST(AnalyticalAware, FullyConnectedGoesDirect) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kFullyConnected, 4));
  Recorder r(sim);
  net.Send(0, 3, Bytes(1000), &r, 1);
  net.Send(1, 3, Bytes(1000), &r, 2);  // a different link into npu3
  net.Send(0, 3, Bytes(1000), &r, 3);  // same link as #1: 1000 + 1100
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(1100));
  EXPECT_EQ(r.at[2], Time::FromNs(1100));
  EXPECT_EQ(r.at[3], Time::FromNs(2100));
  EXPECT_EQ(net.num_links(), 12u);  // 4 * 3
  EXPECT_EQ(LinksByName(net)["npu0->npu3"].bytes, 2000u);
}

TEST(AnalyticalAware, LazyFullyConnectedMatchesDense) {
  AnalyticalAwareNetwork::Options lazy;
  lazy.dense_fully_connected_links = 0;
  std::vector<std::map<uint64_t, Time>> results;
  for (bool use_lazy : {false, true}) {
    Simulation sim;
    AnalyticalAwareNetwork net(sim, OneDim(BlockType::kFullyConnected, 6),
                               use_lazy ? lazy : AnalyticalAwareNetwork::Options());
    EXPECT_EQ(net.num_links(), use_lazy ? 0u : 30u);
    Recorder r(sim);
    uint64_t token = 0;
    for (int s = 0; s < 6; ++s) {
      for (int d = 0; d < 6; ++d) {
        if (s != d) net.Send(s, d, Bytes(100 * (d + 1)), &r, token++);
      }
    }
    net.Send(0, 5, Bytes(1000), &r, token++);  // queues behind the first 0 -> 5
    sim.Run();
    EXPECT_EQ(net.num_links(), 30u);  // lazily: every pair has now been used
    results.push_back(r.at);
  }
  EXPECT_EQ(results[0], results[1]);
  // 0 -> 5 first carried 600 B (100 + 600 = 700), free at 600; then 1000 B: 600 + 1100.
  EXPECT_EQ(results[0].at(4), Time::FromNs(700));
  EXPECT_EQ(results[0].at(30), Time::FromNs(1700));
}

TEST(AnalyticalAware, TwoDimensionsRouteDimensionOrdered) {
  Simulation sim;
  // dim 0: Ring of 4 (1 B/ns, 100 ns); dim 1: Switch of 2 (2 B/ns, 50 ns). id = a0 + 4 * a1.
  Topology t{{Dim(BlockType::kRing, 4, kOneBytePerNs, Time::FromNs(100)),
              Dim(BlockType::kSwitch, 2, Bandwidth::FromBytesPerSec(2e9), Time::FromNs(50))}};
  AnalyticalAwareNetwork net(sim, t);
  Recorder r(sim);
  // 1 = (1,0) -> 6 = (2,1): ring 1 -> 2 (100 + 1000), then switch 2 -> sw -> 6
  // (2 * (50 + 1000 / 2)): 1100 + 1100 = 2200.
  net.Send(1, 6, Bytes(1000), &r, 1);
  // 7 = (3,1) -> 0 = (0,0): ring 7 -> 4 (clockwise, 1 hop), switch 4 -> sw -> 0: 2200.
  net.Send(7, 0, Bytes(1000), &r, 2);
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(2200));
  EXPECT_EQ(r.at[2], Time::FromNs(2200));
  auto links = LinksByName(net);
  // Ring: 8 NPUs x 2 directions; switch dim: 8 NPUs x (up, down).
  EXPECT_EQ(links.size(), 32u);
  EXPECT_EQ(links["d0:npu1->npu2"].bytes, 1000u);
  EXPECT_EQ(links["d1:npu2->sw1.2"].bytes, 1000u);  // dim-1 switch of ring position 2
  EXPECT_EQ(links["d1:sw1.2->npu6"].bytes, 1000u);
  EXPECT_EQ(links["d1:sw1.2->npu6"].busy, Time::FromNs(500));
  EXPECT_EQ(links["d0:npu7->npu4"].bytes, 1000u);
  EXPECT_EQ(links["d1:npu4->sw1.0"].bytes, 1000u);
  EXPECT_EQ(links["d1:sw1.0->npu0"].bytes, 1000u);
  EXPECT_EQ(links["d0:npu6->npu5"].bytes, 0u);
}

TEST(AnalyticalAware, IntermediateNpusStoreAndForward) {
  Simulation sim;
  // 2 x 2 rings, 1 B/ns, 100 ns: 0 -> 3 goes 0 -> 1 (dim 0) then 1 -> 3 (dim 1).
  Topology t{{Dim(BlockType::kRing, 2, kOneBytePerNs, Time::FromNs(100)),
              Dim(BlockType::kRing, 2, kOneBytePerNs, Time::FromNs(100))}};
  AnalyticalAwareNetwork net(sim, t);
  Recorder r(sim);
  net.Send(0, 3, Bytes(1000), &r, 1);
  net.Send(1, 3, Bytes(1000), &r, 2);  // uses d1:npu1->npu3 first, at t = 0
  sim.Run();
  // #2 holds npu1->npu3 from 0 to 1000; #1 reaches npu1 at 1100, finds it free: 2200.
  EXPECT_EQ(r.at[2], Time::FromNs(1100));
  EXPECT_EQ(r.at[1], Time::FromNs(2200));
  EXPECT_EQ(LinksByName(net)["d1:npu1->npu3"].bytes, 2000u);
}

// Lanes: a link of 2 lanes at 2 B/ns carries two chunks side by side, each at 1 B/ns. Three
// 1000-byte chunks 0 -> 1 at t = 0: two arrive at 100 + 1000 = 1100, the third takes the first
// lane to free up (1000) and arrives at 2100. Busy time is the whole link's: 3000 B / 2 B/ns.
TEST(AnalyticalAware, LanesCarryChunksSideBySide) {
  Simulation sim;
  Dimension d = Dim(BlockType::kRing, 8, Bandwidth::FromBytesPerSec(2e9), Time::FromNs(100));
  d.lanes = 2;
  AnalyticalAwareNetwork net(sim, Topology{{d}});
  Recorder r(sim);
  for (uint64_t token = 1; token <= 3; ++token) net.Send(0, 1, Bytes(1000), &r, token);
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(1100));
  EXPECT_EQ(r.at[2], Time::FromNs(1100));
  EXPECT_EQ(r.at[3], Time::FromNs(2100));
  EXPECT_EQ(LinksByName(net)["npu0->npu1"].busy, Time::FromNs(1500));
  EXPECT_EQ(LinksByName(net)["npu0->npu1"].bytes, 3000u);
}

// ---- aware-forwarding: pipelined (Options::pipeline_mtu, forwarding.h) ----

AnalyticalAwareNetwork::Options Pipelined(uint64_t mtu) {
  AnalyticalAwareNetwork::Options o;
  o.pipeline_mtu = mtu;
  return o;
}

// 10000 B over 3 ring hops in packets of 4096 B: the first packet takes 4096 + 100 ns per hop to
// get ahead, then the rest follows at line rate: 3 * 100 + 10000 + 2 * 4096 = 18492 ns
// (store-and-forward: 3 * 10100 = 30300). One hop is the same as store-and-forward: 10100.
TEST(AnalyticalAwarePipelined, SeveralHopsPayOnePacketPerExtraHop) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 8), Pipelined(4096));
  Recorder r(sim);
  net.Send(0, 3, Bytes(10000), &r, 1);
  net.Send(4, 5, Bytes(10000), &r, 2);
  net.Send(6, 7, Bytes(0), &r, 3);  // an empty message: the latency
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(18492));
  EXPECT_EQ(r.at[2], Time::FromNs(10100));
  EXPECT_EQ(r.at[3], Time::FromNs(100));
  // Busy time is serialization only: 10000 ns on each link of the 3-hop route.
  EXPECT_EQ(LinksByName(net)["npu1->npu2"].busy, Time::FromNs(10000));
  EXPECT_EQ(net.in_flight(), 0u);
}

// A message sent in pieces (Network::SendInPieces, NCCL's p2p chunks): each piece is stored and
// forwarded, so a relay forwards a piece while the next arrives. 10000 B through a Switch of
// 1 B/ns and 100 ns (2 links) in pieces of 1000 B: 2 * 100 + 10000 + 1000 = 11200 ns, where the
// whole message stored and forwarded takes 2 * 10100 = 20200. With pipelined forwarding in
// packets of 4096 B the smaller unit moves: pieces of 1000 B give 11200 again, pieces of 8192 B
// the packets' 2 * 100 + 10000 + 4096 = 14296. A piece as large as the message is Send.
TEST(AnalyticalAwarePieces, EachPieceIsStoredAndForwarded) {
  for (uint64_t mtu : {uint64_t{0}, uint64_t{4096}}) {
    SCOPED_TRACE(mtu);
    Simulation sim;
    AnalyticalAwareNetwork net(sim, OneDim(BlockType::kSwitch, 4), Pipelined(mtu));
    Recorder r(sim);
    net.SendInPieces(0, 1, Bytes(10000), 1000, &r, 1);
    net.SendInPieces(1, 2, Bytes(10000), 8192, &r, 2);
    net.SendInPieces(2, 3, Bytes(10000), 10000, &r, 3);
    net.Send(3, 0, Bytes(10000), &r, 4);
    sim.Run();
    EXPECT_EQ(r.at[1], Time::FromNs(11200));
    EXPECT_EQ(r.at[2], Time::FromNs(mtu == 0 ? 2 * 100 + 10000 + 8192 : 14296));
    EXPECT_EQ(r.at[3], Time::FromNs(mtu == 0 ? 20200 : 14296));
    EXPECT_EQ(r.at[4], r.at[3]);
    EXPECT_EQ(LinksByName(net)["npu0->sw0"].busy, Time::FromNs(10000));
    EXPECT_EQ(net.in_flight(), 0u);
  }
}

// Links of different speeds (what the packet backend gives, packet by packet, in the comments).
// dim 0 Ring of 4 at 1 B/ns, dim 1 Switch of 2 at 4 B/ns, 100 ns everywhere; 8192 B = 2 packets.
// 0 -> 5: npu0->npu1 (slow), npu1->sw, sw->npu5 (fast). The fast links wait for the packets:
//   packet 1: 0..4096 on the ring, at npu1 4196, 4196..5220, at sw 5320, 5320..6344, in 6444;
//   packet 2: 4096..8192, at npu1 8292, 8292..9316, at sw 9416, 9416..10440, in 10540.
// The reverse order of speeds (dim 0 Switch at 4 B/ns, dim 1 Ring at 1 B/ns), 0 -> 3: the slow
// last link sends back to back from the first packet's arrival (2248) to 10440: in at 10540.
TEST(AnalyticalAwarePipelined, LinksOfDifferentSpeedsWaitForTheSlowerOne) {
  const Bandwidth fast = Bandwidth::FromBytesPerSec(4e9);
  const Time lat = Time::FromNs(100);
  const struct {
    Topology topology;
    int dst;
  } kCases[] = {
      {Topology{
           {Dim(BlockType::kRing, 4, kOneBytePerNs, lat), Dim(BlockType::kSwitch, 2, fast, lat)}},
       5},
      {Topology{
           {Dim(BlockType::kSwitch, 2, fast, lat), Dim(BlockType::kRing, 4, kOneBytePerNs, lat)}},
       3},
  };
  for (const auto& c : kCases) {
    Simulation sim;
    AnalyticalAwareNetwork net(sim, c.topology, Pipelined(4096));
    Recorder r(sim);
    net.Send(0, c.dst, Bytes(8192), &r, 1);
    sim.Run();
    EXPECT_EQ(r.at[1], Time::FromNs(10540)) << "to NPU " << c.dst;
  }
}

// Contention is still per chunk, FIFO per link. Ring of 8: A = 8192 B 0 -> 2, B = 8192 B 1 -> 2,
// both at t = 0. B holds npu1->npu2 until 8192 and is in at 8292. A's head is at npu1 at
// 4096 + 100 = 4196 and waits for the link; it starts at 8192 and cannot finish before
// max(8192 + 8192, its tail at npu1 8292 + 4096) = 16384: in at 16484.
TEST(AnalyticalAwarePipelined, ChunksQueueFifoOnABusyLink) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 8), Pipelined(4096));
  Recorder r(sim);
  net.Send(0, 2, Bytes(8192), &r, 1);
  net.Send(1, 2, Bytes(8192), &r, 2);
  sim.Run();
  EXPECT_EQ(r.at[2], Time::FromNs(8292));
  EXPECT_EQ(r.at[1], Time::FromNs(16484));
  EXPECT_EQ(LinksByName(net)["npu1->npu2"].bytes, 16384u);
}

// A handler that sends again from inside OnDelivered, reusing the freed record.
class PingPong : public DeliveryHandler {
 public:
  PingPong(Simulation& sim, Network& net) : sim_(sim), net_(net) {}
  void OnDelivered(uint64_t token) override {
    last = sim_.now();
    if (token > 0) net_.Send(token % 2, (token + 1) % 2, Bytes(1000), this, token - 1);
  }
  Time last;

 private:
  Simulation& sim_;
  Network& net_;
};

TEST(AnalyticalAware, HandlerMaySendFromDelivery) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, 2));
  PingPong p(sim, net);
  net.Send(1, 0, Bytes(1000), &p, 10);
  sim.Run();
  // 11 messages one after another, 1100 ns each.
  EXPECT_EQ(p.last, Time::FromNs(12100));
  EXPECT_EQ(net.in_flight(), 0u);
}

TEST(AnalyticalAware, LargeRingStaysSmall) {
  Simulation sim;
  const int n = 4096;
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kRing, n));
  EXPECT_EQ(net.num_links(), 2u * n);
  Recorder r(sim);
  // Every NPU sends 8 messages to its clockwise neighbour: k-th arrives at 1000 k + 1100.
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < n; ++i) {
      net.Send(i, (i + 1) % n, Bytes(1000), &r, static_cast<uint64_t>(round) * n + i);
    }
  }
  sim.Run();
  ASSERT_EQ(r.at.size(), 8u * n);
  EXPECT_EQ(r.at[0], Time::FromNs(1100));
  EXPECT_EQ(r.at[7u * n + n - 1], Time::FromNs(8100));
  // Records are recycled: at most the messages in flight at once were ever allocated.
  EXPECT_EQ(net.in_flight(), 0u);
}

TEST(AnalyticalAware, HugeFullyConnectedIsBuiltLazily) {
  Simulation sim;
  // 4096 * 4095 links would be ~16.8 M; the default builds them on first use.
  AnalyticalAwareNetwork net(sim, OneDim(BlockType::kFullyConnected, 4096));
  EXPECT_EQ(net.num_links(), 0u);
  Recorder r(sim);
  net.Send(17, 4000, Bytes(1000), &r, 1);
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(1100));
  ASSERT_EQ(net.num_links(), 1u);
  EXPECT_EQ(net.Links()[0].name, "npu17->npu4000");
}

}  // namespace
}  // namespace orrery
