#include "network/analytical_unaware/analytical_unaware.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace orrery {
namespace {

// Records (token, arrival time) of every delivery.
class Recorder : public DeliveryHandler {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void OnDelivered(uint64_t token) override { got.emplace_back(token, sim_.now()); }
  std::vector<std::pair<uint64_t, Time>> got;

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

// 1 byte per ns exactly, so size / bw needs no rounding.
const Bandwidth kOneBytePerNs = Bandwidth::FromBytesPerSec(1e9);

Topology Ring8() {
  // 50 GB/s with GB = 2^30 B: 50 * 2^30 / 1e9 = 53.6870912 B/ns.
  return Topology{{Dim(BlockType::kRing, 8, Bandwidth::FromGiBps(50), Time::FromNs(500))}};
}

TEST(AnalyticalUnaware, RingNeighbourMatchesAstraSimExample) {
  Simulation sim;
  AnalyticalUnawareNetwork net(sim, Ring8());
  Recorder r(sim);
  net.Send(0, 1, Bytes(65536), &r, 42);
  sim.Run();
  // trunc(1 * 500 + 65536 / 53.6870912) = trunc(500 + 1220.703125) = 1720 ns.
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].first, 42u);
  EXPECT_EQ(r.got[0].second, Time::FromNs(1720));
}

// A message takes one lane: with 4 lanes at 4 B/ns, 1000 B to a neighbour takes
// 100 + 1000 / 1 = 1100 ns, as on a 1-lane link of 1 B/ns (no contention in this model).
TEST(AnalyticalUnaware, AMessageTakesOneLane) {
  Simulation sim;
  Dimension d = Dim(BlockType::kRing, 8, Bandwidth::FromBytesPerSec(4e9), Time::FromNs(100));
  d.lanes = 4;
  AnalyticalUnawareNetwork net(sim, Topology{{d}});
  Recorder r(sim);
  net.Send(0, 1, Bytes(1000), &r, 1);
  sim.Run();
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].second, Time::FromNs(1100));
}

TEST(AnalyticalUnaware, RingTakesTheShorterDirection) {
  Simulation sim;
  AnalyticalUnawareNetwork net(sim, Ring8());
  // Clockwise distance cw = (dst - src) mod 8; hops = min(cw, 8 - cw).
  EXPECT_EQ(net.Hops(0, 1), 1);
  EXPECT_EQ(net.Hops(0, 7), 1);  // cw 7, anticlockwise 1
  EXPECT_EQ(net.Hops(0, 3), 3);
  EXPECT_EQ(net.Hops(0, 5), 3);  // cw 5, anticlockwise 3
  EXPECT_EQ(net.Hops(6, 1), 3);  // cw (1 - 6 + 8) = 3
  EXPECT_EQ(net.Hops(0, 4), 4);
  // trunc(3 * 500 + 1220.703125) = 2720; trunc(4 * 500 + 1220.703125) = 3220.
  EXPECT_EQ(net.Delay(0, 5, Bytes(65536)), Time::FromNs(2720));
  EXPECT_EQ(net.Delay(0, 4, Bytes(65536)), Time::FromNs(3220));
  EXPECT_EQ(net.Delay(0, 7, Bytes(65536)), Time::FromNs(1720));
}

TEST(AnalyticalUnaware, SwitchCountsTwoHops) {
  Simulation sim;
  AnalyticalUnawareNetwork net(
      sim, Topology{{Dim(BlockType::kSwitch, 8, kOneBytePerNs, Time::FromNs(100))}});
  // 2 * 100 + 1000 / 1 = 1200 ns, for any pair.
  EXPECT_EQ(net.Hops(0, 7), 2);
  EXPECT_EQ(net.Delay(0, 7, Bytes(1000)), Time::FromNs(1200));
  EXPECT_EQ(net.Delay(3, 4, Bytes(1000)), Time::FromNs(1200));
}

TEST(AnalyticalUnaware, FullyConnectedIsOneHop) {
  Simulation sim;
  AnalyticalUnawareNetwork net(
      sim, Topology{{Dim(BlockType::kFullyConnected, 8, kOneBytePerNs, Time::FromNs(100))}});
  // 1 * 100 + 1000 / 1 = 1100 ns.
  EXPECT_EQ(net.Hops(0, 4), 1);
  EXPECT_EQ(net.Delay(0, 4, Bytes(1000)), Time::FromNs(1100));
}

// A message whose addresses differ in one dimension takes ASTRA-sim's time on it. One that
// differs in several (which ASTRA-sim's per-dimension algorithms never send, but Orrery's flat
// and channel rings and direct all-to-all do) crosses each: every differing dimension's hops and
// latency, and its bytes once at the slowest of their bandwidths (ASTRA-sim charges the lowest
// differing dimension alone, so such a ring ran across nodes at NVLink's rate). The trace's own
// messages keep ASTRA-sim's charge (TraceMessagesTakeTheLowestDifferingDimensionAlone).
TEST(AnalyticalUnaware, MultiDimCrossesEveryDifferingDimension) {
  Simulation sim;
  // dim 0: Ring of 4 (1 B/ns, 100 ns); dim 1: Switch of 2 (2 B/ns, 50 ns). id = a0 + 4 * a1.
  Topology t{{Dim(BlockType::kRing, 4, kOneBytePerNs, Time::FromNs(100)),
              Dim(BlockType::kSwitch, 2, Bandwidth::FromBytesPerSec(2e9), Time::FromNs(50))}};
  AnalyticalUnawareNetwork net(sim, t);
  // 1 = (1,0) -> 2 = (2,0): dim 0 only, ring hops 1: 100 + 1000 / 1 = 1100 (ASTRA-sim's).
  EXPECT_EQ(net.Delay(1, 2, Bytes(1000)), Time::FromNs(1100));
  // 1 = (1,0) -> 5 = (1,1): dim 1 only, switch: 2 * 50 + 1000 / 2 = 600 (ASTRA-sim's).
  EXPECT_EQ(net.Delay(1, 5, Bytes(1000)), Time::FromNs(600));
  // 1 = (1,0) -> 6 = (2,1): ring hops 1 and the switch's 2: 100 + 2 * 50 + 1000 / min(1, 2)
  // = 1200 (ASTRA-sim: 1100, dimension 0 alone).
  EXPECT_EQ(net.Delay(1, 6, Bytes(1000)), Time::FromNs(1200));
  // 1 = (1,0) -> 7 = (3,1): ring hops min(2, 2) = 2: 2 * 100 + 2 * 50 + 1000 = 1300.
  EXPECT_EQ(net.Delay(1, 7, Bytes(1000)), Time::FromNs(1300));
  // The slower dimension sets the rate whichever it is: dim 1 at 0.5 B/ns.
  Topology slow{{Dim(BlockType::kRing, 4, kOneBytePerNs, Time::FromNs(100)),
                 Dim(BlockType::kSwitch, 2, Bandwidth::FromBytesPerSec(5e8), Time::FromNs(50))}};
  AnalyticalUnawareNetwork slow_net(sim, slow);
  // 100 + 2 * 50 + 1000 / 0.5 = 2200.
  EXPECT_EQ(slow_net.Delay(1, 6, Bytes(1000)), Time::FromNs(2200));
  EXPECT_EQ(slow_net.Delay(1, 2, Bytes(1000)), Time::FromNs(1100));
  // Three dimensions, the lowest equal: [Ring 4 (1 B/ns, 100 ns), Switch 2 (2 B/ns, 50 ns),
  // Ring 4 (0.25 B/ns, 1000 ns)], id = a0 + 4 a1 + 8 a2. 1 = (1,0,0) -> 5 = (1,1,0): dim 1 only,
  // 600 (ASTRA-sim's). 1 -> 29 = (1,1,3): dims 1 and 2 (ring hops min(3, 1) = 1):
  // 2 * 50 + 1000 + 1000 / 0.25 = 5100. 1 -> 17 = (1,0,2): dim 2 only, hops 2:
  // 2 * 1000 + 4000 = 6000.
  Topology three{{Dim(BlockType::kRing, 4, kOneBytePerNs, Time::FromNs(100)),
                  Dim(BlockType::kSwitch, 2, Bandwidth::FromBytesPerSec(2e9), Time::FromNs(50)),
                  Dim(BlockType::kRing, 4, Bandwidth::FromBytesPerSec(2.5e8), Time::FromNs(1000))}};
  AnalyticalUnawareNetwork three_net(sim, three);
  EXPECT_EQ(three_net.Delay(1, 5, Bytes(1000)), Time::FromNs(600));
  EXPECT_EQ(three_net.Delay(1, 29, Bytes(1000)), Time::FromNs(5100));
  EXPECT_EQ(three_net.Delay(1, 17, Bytes(1000)), Time::FromNs(6000));
}

// A message the trace names itself (a Chakra send, a custom collective's) is ASTRA-sim's own
// traffic, which its congestion-unaware backend charges in the lowest differing dimension alone
// (MultiDimTopology::send): Orrery's does the same for it, and says so once at the end.
TEST(AnalyticalUnaware, TraceMessagesTakeTheLowestDifferingDimensionAlone) {
  Simulation sim;
  // dim 0: Ring of 4 (1 B/ns, 100 ns); dim 1: Switch of 2 (2 B/ns, 50 ns). id = a0 + 4 * a1.
  Topology t{{Dim(BlockType::kRing, 4, kOneBytePerNs, Time::FromNs(100)),
              Dim(BlockType::kSwitch, 2, Bandwidth::FromBytesPerSec(2e9), Time::FromNs(50))}};
  AnalyticalUnawareNetwork net(sim, t);
  using Crossing = AnalyticalUnawareNetwork::Crossing;
  // 1 = (1,0) -> 7 = (3,1): ring hops min(2, 2) = 2 in dimension 0 alone: 2 * 100 + 1000 / 1
  // = 1200 (crossing both: 2 * 100 + 2 * 50 + 1000 = 1300, MultiDimCrossesEveryDifferingDimension).
  EXPECT_EQ(net.Delay(1, 7, Bytes(1000), nullptr, Crossing::kLowestDimension), Time::FromNs(1200));
  // One differing dimension: the same either way. 1 -> 5 = (1,1): 2 * 50 + 1000 / 2 = 600.
  EXPECT_EQ(net.Delay(1, 5, Bytes(1000), nullptr, Crossing::kLowestDimension), Time::FromNs(600));
  Recorder r(sim);
  net.SendTraceMessage(1, 7, Bytes(1000), /*piece=*/0, &r, 1);    // 1200
  net.Send(1, 7, Bytes(1000), &r, 2);                             // 1300: Orrery's algorithms
  net.SendTraceMessage(1, 5, Bytes(1000), /*piece=*/256, &r, 3);  // 600, one dimension
  net.SendTraceMessage(3, 4, Bytes(1000), /*piece=*/0, &r, 4);    // (3,0) -> (0,1): 1 hop, 1100
  sim.Run();
  ASSERT_EQ(r.got.size(), 4u);
  EXPECT_EQ(r.got[0], std::make_pair(uint64_t{3}, Time::FromNs(600)));
  EXPECT_EQ(r.got[1], std::make_pair(uint64_t{4}, Time::FromNs(1100)));
  EXPECT_EQ(r.got[2], std::make_pair(uint64_t{1}, Time::FromNs(1200)));
  EXPECT_EQ(r.got[3], std::make_pair(uint64_t{2}, Time::FromNs(1300)));
  // Two trace messages crossed both dimensions (1 -> 7 and 3 -> 4); the run hears of it once.
  const std::vector<std::string> w = net.Warnings(Time::FromNs(1300));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("2 point-to-point messages of the trace (the first NPU 1 to NPU 7, 1000 B) "
                      "went between NPUs that differ in several dimensions"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[0].find("took dimension 0's time alone"), std::string::npos) << w[0];
  // A run whose trace messages each stay in one dimension hears nothing.
  AnalyticalUnawareNetwork quiet(sim, t);
  quiet.SendTraceMessage(1, 5, Bytes(1000), 0, &r, 5);
  quiet.Send(1, 7, Bytes(1000), &r, 6);
  sim.Run();
  EXPECT_TRUE(quiet.Warnings(sim.now()).empty());
}

TEST(AnalyticalUnaware, TruncatesTheSumOnceToWholeNs) {
  Simulation sim;
  // 3 B/ns, 0.4 ns latency, Ring of 8, 0 -> 3 (3 hops), 1000 B:
  // 3 * 0.4 + 1000 / 3 = 1.2 + 333.33... = 334.53... -> 334 ns.
  // (Truncating each part separately would give 0 + 333 = 333.)
  Topology t{{Dim(BlockType::kRing, 8, Bandwidth::FromBytesPerSec(3e9), Time::FromPs(400))}};
  AnalyticalUnawareNetwork net(sim, t);
  EXPECT_EQ(net.Delay(0, 3, Bytes(1000)), Time::FromNs(334));
}

TEST(AnalyticalUnaware, ConcurrentMessagesDoNotInterfere) {
  Simulation sim;
  AnalyticalUnawareNetwork net(sim, Ring8());
  Recorder r(sim);
  for (uint64_t k = 0; k < 3; ++k) net.Send(0, 1, Bytes(65536), &r, k);
  sim.Run();
  ASSERT_EQ(r.got.size(), 3u);
  for (uint64_t k = 0; k < 3; ++k) {
    EXPECT_EQ(r.got[k].first, k);  // equal times: delivered in send order
    EXPECT_EQ(r.got[k].second, Time::FromNs(1720));
  }
  EXPECT_TRUE(net.Links().empty());
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

TEST(AnalyticalUnaware, HandlerMaySendFromDelivery) {
  Simulation sim;
  AnalyticalUnawareNetwork net(
      sim, Topology{{Dim(BlockType::kRing, 2, kOneBytePerNs, Time::FromNs(100))}});
  PingPong p(sim, net);
  net.Send(0, 1, Bytes(1000), &p, 9);
  sim.Run();
  // 10 messages one after another, each 100 + 1000 = 1100 ns.
  EXPECT_EQ(p.last, Time::FromNs(11000));
}

}  // namespace
}  // namespace orrery
