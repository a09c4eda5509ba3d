#include "network/factory.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "network/analytical_aware/analytical_aware.h"
#include "network/analytical_unaware/analytical_unaware.h"
#include "network/graph.h"
#include "network/packet/packet_network.h"

namespace orrery {
namespace {

TEST(Factory, ParsesBothNames) {
  for (Backend b : {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware}) {
    StatusOr<Backend> parsed = ParseBackend(BackendName(b));
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(*parsed, b);
  }
  EXPECT_STREQ(BackendName(Backend::kAnalyticalAware), "analytical-aware");
  EXPECT_STREQ(BackendName(Backend::kAnalyticalUnaware), "analytical-unaware");
}

TEST(Factory, RejectsUnknownNameListingTheValidOnes) {
  StatusOr<Backend> b = ParseBackend("analytical-awre");
  ASSERT_FALSE(b.ok());
  const std::string m = b.status().message();
  EXPECT_NE(m.find("'analytical-awre'"), std::string::npos) << m;
  EXPECT_NE(m.find("analytical-aware, analytical-unaware"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'analytical-aware'"), std::string::npos) << m;
}

TEST(Factory, NoSuggestionForSomethingFarOff) {
  StatusOr<Backend> b = ParseBackend("ns3");
  ASSERT_FALSE(b.ok());
  const std::string m = b.status().message();
  EXPECT_NE(m.find("analytical-aware, analytical-unaware"), std::string::npos) << m;
  EXPECT_EQ(m.find("did you mean"), std::string::npos) << m;
  EXPECT_FALSE(ParseBackend("").ok());
}

Topology Ring(int npus) {
  Dimension d;
  d.type = BlockType::kRing;
  d.npus = npus;
  d.bandwidth = Bandwidth::FromBytesPerSec(1e9);
  d.latency = Time::FromNs(100);
  return Topology{{d}};
}

TEST(Factory, MakesTheRequestedKind) {
  Simulation sim;
  std::unique_ptr<Network> aware = MakeNetwork(Backend::kAnalyticalAware, sim, Ring(4));
  std::unique_ptr<Network> unaware = MakeNetwork(Backend::kAnalyticalUnaware, sim, Ring(4));
  ASSERT_NE(aware, nullptr);
  ASSERT_NE(unaware, nullptr);
  EXPECT_NE(dynamic_cast<AnalyticalAwareNetwork*>(aware.get()), nullptr);
  EXPECT_NE(dynamic_cast<AnalyticalUnawareNetwork*>(unaware.get()), nullptr);
  EXPECT_EQ(aware->num_npus(), 4);
  EXPECT_EQ(unaware->num_npus(), 4);
  EXPECT_EQ(aware->topology().dims.size(), 1u);
  EXPECT_EQ(aware->Links().size(), 8u);  // 4 NPUs x 2 directions
  EXPECT_TRUE(unaware->Links().empty());
}

class Recorder : public DeliveryHandler {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void OnDelivered(uint64_t token) override { got.push_back({token, sim_.now()}); }
  std::vector<std::pair<uint64_t, Time>> got;

 private:
  Simulation& sim_;
};

// Contract every backend meets: one message on an idle single hop takes latency + size / bw,
// and OnDelivered gets the token back.
TEST(Factory, BothBackendsAgreeOnAnIdleSingleHop) {
  for (Backend b : {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware, Backend::kPacket}) {
    Simulation sim;
    std::unique_ptr<Network> net = MakeNetwork(b, sim, Ring(4));
    Recorder r(sim);
    net->Send(2, 3, Bytes(1000), &r, 77);
    sim.Run();
    ASSERT_EQ(r.got.size(), 1u) << BackendName(b);
    EXPECT_EQ(r.got[0].first, 77u);
    EXPECT_EQ(r.got[0].second, Time::FromNs(1100)) << BackendName(b);  // 100 + 1000 / 1
  }
}

// The largest size is a size like any other: the backends cache the delays of the last size
// they saw, and an empty cache must not pass for one of 2^64 - 1 bytes that takes no time.
TEST(Factory, AnalyticalBackendsTimeTheLargestSize) {
  for (Backend b : {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware}) {
    Topology fast = Ring(4);
    fast.dims[0].bandwidth = Bandwidth::FromBytesPerSec(1e21);  // 1e12 B/ns
    Simulation sim;
    std::unique_ptr<Network> net = MakeNetwork(b, sim, fast);
    Recorder r(sim);
    net->Send(2, 3, Bytes(UINT64_MAX), &r, 77);
    sim.Run();
    ASSERT_EQ(r.got.size(), 1u) << BackendName(b);
    // 100 + 18446744073709551615 / 1e12 = 18446844.07 ns, truncated to whole ns.
    EXPECT_EQ(r.got[0].second, Time::FromNs(18446844)) << BackendName(b);
  }
}

// The packet backend is checked against its parameters before it is built.
// Reports name the model a run used, with what changes its numbers.
TEST(Factory, DescribesTheModel) {
  Topology t;
  t.dims.push_back(Dimension{BlockType::kSwitch, 8, Bandwidth::FromGiBps(400), Time::FromNs(700)});
  t.dims.push_back(Dimension{BlockType::kRing, 2, Bandwidth::FromGiBps(50), Time::FromNs(500)});
  NetworkParams p;
  EXPECT_EQ(DescribeNetworkModel(Backend::kAnalyticalAware, t, p),
            "analytical-aware, store-and-forward");
  EXPECT_EQ(DescribeNetworkModel(Backend::kAnalyticalUnaware, t, p), "analytical-unaware");
  EXPECT_EQ(DescribeNetworkModel(Backend::kPacket, t, p),
            "packet, 4096 B packets, credit flow control, ecmp routing");
  p.aware_forwarding = NetworkParams::AwareForwarding::kPipelined;
  p.mtu = 1024;
  p.flow_control = NetworkParams::FlowControl::kPfc;
  p.routing = NetworkParams::Routing::kAdaptive;
  EXPECT_EQ(DescribeNetworkModel(Backend::kAnalyticalAware, t, p),
            "analytical-aware, pipelined in 1024 B packets");
  EXPECT_EQ(DescribeNetworkModel(Backend::kPacket, t, p),
            "packet, 1024 B packets, pfc flow control, adaptive routing");
  t.dims[0].lanes = 16;
  EXPECT_EQ(DescribeNetworkModel(Backend::kAnalyticalAware, t, p),
            "analytical-aware, pipelined in 1024 B packets, lanes [16, 1]");
  EXPECT_EQ(DescribeNetworkModel(Backend::kAnalyticalUnaware, t, p),
            "analytical-unaware, lanes [16, 1]");
  t.dims[0].lanes = 1;
  t.slow_links.names = {"d0:npu3<->sw0.0", "npu9->npu1"};
  t.slow_links.bandwidth_scale = 0.25;
  EXPECT_EQ(DescribeNetworkModel(Backend::kPacket, t, p),
            "packet, 1024 B packets, pfc flow control, adaptive routing, slow links "
            "[d0:npu3<->sw0.0 npu9->npu1] at 0.25x bandwidth");
}

TEST(Factory, PacketBackendNeedsOneLane) {
  Topology t;
  t.dims.push_back(Dimension{BlockType::kSwitch, 8, Bandwidth::FromGiBps(400), Time::FromNs(700)});
  t.dims[0].lanes = 16;
  EXPECT_TRUE(CheckBackendSupports(Backend::kAnalyticalAware, t).ok());
  const Status s = CheckBackendSupports(Backend::kPacket, t);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("key 'lanes' is 16 for dimension 0"), std::string::npos)
      << s.message();
}

TEST(Factory, PacketBackendChecksItsParameters) {
  NetworkParams p;
  EXPECT_TRUE(CheckBackendSupports(Backend::kPacket, Ring(4), p).ok());
  p.flow_control = NetworkParams::FlowControl::kPfc;
  p.buffer_bytes = 4096;
  const Status s = CheckBackendSupports(Backend::kPacket, Ring(4), p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'packet-buffer-bytes' is 4096"), std::string::npos) << s.message();
  Simulation sim;
  std::unique_ptr<Network> net = MakeNetwork(Backend::kPacket, sim, Ring(4), NetworkParams());
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->Links().size(), 8u);  // 4 NPUs x 2 directions
  EXPECT_TRUE(net->Links()[0].port.has_value());
}

// The time one `bytes` message from `src` to `dst` takes on an idle network.
Time OneMessage(Backend b, const Topology& t, int src, int dst, uint64_t bytes,
                const NetworkParams& p = NetworkParams()) {
  Simulation sim;
  std::unique_ptr<Network> net = MakeNetwork(b, sim, t, p);
  Recorder r(sim);
  net->Send(src, dst, Bytes(bytes), &r, 1);
  sim.Run();
  EXPECT_EQ(r.got.size(), 1u);
  return r.got.empty() ? Time() : r.got[0].second;
}

TEST(SlowLinks, RunAtTheirScaleOnEveryBackendWithLinks) {
  // Ring of 4, 1 B/ns, 100 ns: 1000 B over one hop takes 1100 ns; at a quarter of the bandwidth
  // 100 + 1000 / 0.25 = 4100 ns, in both directions of "npu2<->npu3"; other links keep theirs.
  Topology t = Ring(4);
  t.slow_links.names = {"npu2<->npu3"};
  t.slow_links.bandwidth_scale = 0.25;
  NetworkParams pipelined;
  pipelined.aware_forwarding = NetworkParams::AwareForwarding::kPipelined;
  for (Backend b : {Backend::kAnalyticalAware, Backend::kPacket}) {
    for (bool pipe : {false, true}) {
      const NetworkParams p = pipe ? pipelined : NetworkParams();
      const std::string what =
          std::string(BackendName(b)) + (pipe ? " pipelined" : " store-and-forward");
      ASSERT_TRUE(CheckSlowLinks(b, t, p).ok()) << what;
      EXPECT_EQ(OneMessage(b, t, 2, 3, 1000, p), Time::FromNs(4100)) << what;
      EXPECT_EQ(OneMessage(b, t, 3, 2, 1000, p), Time::FromNs(4100)) << what;
      EXPECT_EQ(OneMessage(b, t, 1, 2, 1000, p), Time::FromNs(1100)) << what;
      EXPECT_EQ(OneMessage(b, t, 0, 3, 1000, p), Time::FromNs(1100)) << what;  // the other way
    }
  }
  // Scaling twice is not compounding: MakeNetwork applies the scale once per link, however
  // many names match it.
  t.slow_links.names = {"npu2->npu3", "npu2<->npu3"};
  EXPECT_EQ(OneMessage(Backend::kAnalyticalAware, t, 2, 3, 1000), Time::FromNs(4100));
}

// A graph machine: NPUs 0 and 1 on a switch, each with two parallel up-links (as a GPU's two
// NICs), one down-link.
Topology TwoNpusOnASwitch() {
  auto g = std::make_shared<PhysicalGraph>();
  g->AddNpus(2);
  const int sw = g->AddDevice("sw0", /*npu=*/false, /*forwards=*/true);
  for (int npu = 0; npu < 2; ++npu) {
    g->AddLink(npu, sw, Bandwidth::FromBytesPerSec(1e9), Time::FromNs(100));
    g->AddLink(npu, sw, Bandwidth::FromBytesPerSec(1e9), Time::FromNs(100));
    g->AddLink(sw, npu, Bandwidth::FromBytesPerSec(1e9), Time::FromNs(100));
  }
  EXPECT_TRUE(g->BuildRoutes().ok());
  Topology t;
  t.dims.push_back(
      Dimension{BlockType::kSwitch, 2, Bandwidth::FromBytesPerSec(1e9), Time::FromNs(100)});
  t.graph = g;
  return t;
}

TEST(SlowLinks, NamesMatchLinksAsLinkStatsListsThem) {
  // On a graph: "sw0->npu1" is one link; "npu0->sw0" both parallel up-links, "npu0->sw0#2"
  // only the second.
  Topology t = TwoNpusOnASwitch();
  t.slow_links.bandwidth_scale = 0.5;
  t.slow_links.names = {"sw0->npu1"};
  for (Backend b : {Backend::kAnalyticalAware, Backend::kPacket}) {
    ASSERT_TRUE(CheckSlowLinks(b, t).ok()) << BackendName(b);
    // One packet, store-and-forward: 1100 up, then 100 + 1000 / 0.5 down.
    EXPECT_EQ(OneMessage(b, t, 0, 1, 1000), Time::FromNs(3200)) << BackendName(b);
    EXPECT_EQ(OneMessage(b, t, 1, 0, 1000), Time::FromNs(2200)) << BackendName(b);
  }
  Simulation sim;
  t.slow_links.names = {"npu0->sw0"};
  std::unique_ptr<Network> both = MakeNetwork(Backend::kAnalyticalAware, sim, t);
  EXPECT_EQ(both->Links()[0].name, "npu0->sw0");
  EXPECT_EQ(both->Links()[1].name, "npu0->sw0#2");
  // A message 0 -> 1 takes one of the up-links (ECMP); both are slowed, so it arrives at
  // 100 + 2000 + 1100 whichever it takes.
  EXPECT_EQ(OneMessage(Backend::kAnalyticalAware, t, 0, 1, 1000), Time::FromNs(3200));
  t.slow_links.names = {"npu1->sw0#2"};
  EXPECT_TRUE(CheckSlowLinks(Backend::kAnalyticalAware, t).ok());
  // Dimension lists of several dimensions prefix their links with "d<k>:"; the bare name
  // matches too.
  Topology two = Ring(4);
  two.dims.push_back(two.dims[0]);
  two.dims[1].npus = 2;
  two.slow_links.bandwidth_scale = 0.25;
  for (const char* name : {"d1:npu1->npu5", "npu1->npu5", "npu1<->npu5", "d1:npu1<->npu5"}) {
    two.slow_links.names = {name};
    for (Backend b : {Backend::kAnalyticalAware, Backend::kPacket}) {
      Status s = CheckSlowLinks(b, two);
      EXPECT_TRUE(s.ok()) << name << " " << BackendName(b) << ": " << s.message();
      EXPECT_EQ(OneMessage(b, two, 1, 5, 1000), Time::FromNs(4100)) << name << BackendName(b);
    }
  }
  // Both backends name the links alike (the packet backend had left the "d<k>:" out).
  {
    Simulation sim_a, sim_p;
    std::vector<std::string> aware, packet;
    for (const LinkStats& l : MakeNetwork(Backend::kAnalyticalAware, sim_a, two)->Links()) {
      aware.push_back(l.name);
    }
    for (const LinkStats& l : MakeNetwork(Backend::kPacket, sim_p, two)->Links()) {
      packet.push_back(l.name);
    }
    std::sort(aware.begin(), aware.end());
    std::sort(packet.begin(), packet.end());
    EXPECT_EQ(aware, packet);
  }
  two.slow_links.names = {"npu1->npu5"};
  EXPECT_EQ(OneMessage(Backend::kAnalyticalAware, two, 0, 1, 1000), Time::FromNs(1100));
}

TEST(SlowLinks, ANameMatchingNoLinkAndALinklessBackendAreNamed) {
  Topology t = Ring(4);
  t.slow_links.names = {"npu0->npu1", "npu2->npu9"};
  t.slow_links.where = "net.yml:7";
  for (Backend b : {Backend::kAnalyticalAware, Backend::kPacket}) {
    const Status s = CheckSlowLinks(b, t);
    ASSERT_FALSE(s.ok()) << BackendName(b);
    EXPECT_EQ(s.message().rfind("net.yml:7: key 'slow-links' names 'npu2->npu9', but the network "
                                "has no such link; expected a link as --link-stats names it "
                                "(did you mean 'npu2->npu3'?), e.g. 'npu0->npu1' or ",
                                0),
              0u)
        << s.message();
  }
  t.slow_links.names = {"npu2<->npu0"};
  const Status both = CheckSlowLinks(Backend::kAnalyticalAware, t);
  EXPECT_NE(both.message().find("names 'npu2<->npu0' (npu2->npu0), but"), std::string::npos)
      << both.message();
  t.slow_links.names = {"npu0->npu1"};
  const Status unaware = CheckSlowLinks(Backend::kAnalyticalUnaware, t);
  EXPECT_EQ(unaware.message(),
            "net.yml:7: key 'slow-links' needs a backend that models links, analytical-aware or "
            "packet; --network-backend analytical-unaware has none");
}

// Network::RouteSignature: equal for member lists whose routes are alike, position for
// position; different where a route crosses a slow link or takes another shape; none where the
// backend cannot say.
TEST(RouteSignature, IsEqualExactlyForAlikeRoutes) {
  // A ring of 8 (1 B/ns, 100 ns) with npu2 <-> npu3 at half speed.
  Topology ring = Ring(8);
  ring.slow_links.names = {"npu2<->npu3"};
  ring.slow_links.bandwidth_scale = 0.5;
  Simulation sim;
  std::unique_ptr<Network> aware = MakeNetwork(Backend::kAnalyticalAware, sim, ring);
  auto sig = [](const Network& n, const std::vector<int>& members) {
    return n.RouteSignature(members);
  };
  ASSERT_TRUE(sig(*aware, {0, 1}).has_value());
  EXPECT_EQ(sig(*aware, {0, 1}), sig(*aware, {5, 6}));  // one hop each way
  EXPECT_NE(sig(*aware, {0, 1}), sig(*aware, {2, 3}));  // the slow link
  EXPECT_NE(sig(*aware, {0, 1}), sig(*aware, {0, 2}));  // two hops each way
  EXPECT_EQ(sig(*aware, {0, 2}), sig(*aware, {4, 6}));
  EXPECT_NE(sig(*aware, {0, 2}), sig(*aware, {1, 3}));  // 1 -> 3 crosses 2 -> 3
  EXPECT_EQ(sig(*aware, {0, 1, 2}), sig(*aware, {4, 5, 6}));
  EXPECT_NE(sig(*aware, {0, 1, 2}), sig(*aware, {0, 2, 1}));  // the same NPUs, another order
  // Without slow links every rotation of a ring is alike.
  Simulation sim2;
  std::unique_ptr<Network> plain = MakeNetwork(Backend::kAnalyticalAware, sim2, Ring(8));
  EXPECT_EQ(sig(*plain, {0, 2}), sig(*plain, {1, 3}));
  EXPECT_EQ(sig(*plain, {7, 1}), sig(*plain, {0, 2}));

  // A graph: NPUs 0, 1 on switch s0, NPUs 2, 3 on s1, the switches joined by one link each way.
  auto g = std::make_shared<PhysicalGraph>();
  g->AddNpus(4);
  const int s0 = g->AddDevice("s0", false, true);
  const int s1 = g->AddDevice("s1", false, true);
  const Bandwidth bw = Bandwidth::FromBytesPerSec(1e9);
  for (int npu = 0; npu < 4; ++npu)
    g->AddBidirectional(npu, npu < 2 ? s0 : s1, bw, Time::FromNs(100));
  g->AddBidirectional(s0, s1, bw, Time::FromNs(100));
  ASSERT_TRUE(g->BuildRoutes().ok());
  Topology graph;
  graph.dims = {Dimension{BlockType::kSwitch, 2, bw, Time::FromNs(100)},
                Dimension{BlockType::kSwitch, 2, bw, Time::FromNs(100)}};
  graph.graph = g;
  Simulation sim3;
  std::unique_ptr<Network> fabric = MakeNetwork(Backend::kAnalyticalAware, sim3, graph);
  EXPECT_EQ(sig(*fabric, {0, 1}), sig(*fabric, {2, 3}));
  EXPECT_EQ(sig(*fabric, {0, 2}), sig(*fabric, {1, 3}));  // both through s0 <-> s1
  EXPECT_NE(sig(*fabric, {0, 1}), sig(*fabric, {0, 2}));
  graph.slow_links.names = {"s0->s1"};
  graph.slow_links.bandwidth_scale = 0.5;
  Simulation sim4;
  std::unique_ptr<Network> slowed = MakeNetwork(Backend::kAnalyticalAware, sim4, graph);
  EXPECT_EQ(sig(*slowed, {0, 1}), sig(*fabric, {0, 1}));
  EXPECT_NE(sig(*slowed, {0, 2}), sig(*fabric, {0, 2}));

  // No signature: the unaware backend (no links), a FullyConnected dimension whose links are
  // built on first use (over 2^20 of them).
  Simulation sim5;
  EXPECT_FALSE(MakeNetwork(Backend::kAnalyticalUnaware, sim5, Ring(8))->RouteSignature({0, 1}));
  Topology huge = Ring(1025);
  huge.dims[0].type = BlockType::kFullyConnected;
  EXPECT_FALSE(MakeNetwork(Backend::kAnalyticalAware, sim5, huge)->RouteSignature({0, 1}));
}

// The packet backend's RouteSignature: ECMP's pick where a ring has two shortest routes, every
// candidate with adaptive routing, and the slow link.
TEST(RouteSignature, OnThePacketBackendFollowsEcmpAndAdaptiveChoices) {
  auto sig = [](const Network& n, const std::vector<int>& members) {
    return n.RouteSignature(members);
  };
  Topology ring = Ring(8);
  ring.slow_links.names = {"npu2<->npu3"};
  ring.slow_links.bandwidth_scale = 0.5;
  Simulation sim;
  std::unique_ptr<Network> packet = MakeNetwork(Backend::kPacket, sim, ring);
  ASSERT_TRUE(sig(*packet, {0, 1}).has_value());
  EXPECT_EQ(sig(*packet, {0, 1}), sig(*packet, {5, 6}));  // one hop each way
  EXPECT_NE(sig(*packet, {0, 1}), sig(*packet, {2, 3}));  // the slow link

  // NPUs 4 apart on a ring of 8: two shortest routes, and ECMP's hash of the NPU ids picks one
  // each way. With ECMP, copies are alike exactly when the picks go the same way round, or both
  // the other way (a mirror image); with adaptive routing, only the same way round (ties at an
  // idle port go to ECMP's pick, and the other candidate is listed too, in out-link order).
  NetworkParams adaptive_params;
  adaptive_params.routing = NetworkParams::Routing::kAdaptive;
  Simulation sim2, sim3;
  std::unique_ptr<Network> ecmp = MakeNetwork(Backend::kPacket, sim2, Ring(8));
  std::unique_ptr<Network> adaptive = MakeNetwork(Backend::kPacket, sim3, Ring(8), adaptive_params);
  const PhysicalGraph& g = static_cast<const PacketNetwork&>(*ecmp).graph();
  auto clockwise = [&](int src, int dst) {
    return g.links[g.NextLink(src, src, dst)].dst == (src + 1) % 8;
  };
  auto picks = [&](int a) { return std::pair{clockwise(a, a + 4), clockwise(a + 4, a)}; };
  int same = 0, mirrored = 0, other = 0;
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      const auto [x, y] = picks(a);
      const bool is_same = picks(b) == std::pair{x, y};
      const bool is_mirror = picks(b) == std::pair{!x, !y};
      (is_same ? same : is_mirror ? mirrored : other) += 1;
      EXPECT_EQ(sig(*ecmp, {a, a + 4}) == sig(*ecmp, {b, b + 4}), is_same || is_mirror)
          << a << " " << b;
      EXPECT_EQ(sig(*adaptive, {a, a + 4}) == sig(*adaptive, {b, b + 4}), is_same) << a << " " << b;
    }
  }
  // The cases that tell the rules apart occur.
  EXPECT_GT(mirrored, 0);
  EXPECT_GT(other, 0);

  // A graph: NPUs 0, 1 on switch s0 and 2, 3 on s1, with s0 and s1 joined through two spines;
  // NPUs 4, 5 on s2 and 6, 7 on s3, joined through three. With ECMP a message crosses the one
  // spine its hash picks, so {0, 2} and {4, 6} are alike; adaptive routing chooses among every
  // spine, so they are not. (s1 and s2 are joined too, off those routes.)
  auto fabric = std::make_shared<PhysicalGraph>();
  fabric->AddNpus(8);
  const Bandwidth bw = Bandwidth::FromBytesPerSec(1e9);
  const Time lat = Time::FromNs(100);
  std::vector<int> leaf;
  for (int i = 0; i < 4; ++i)
    leaf.push_back(fabric->AddDevice("s" + std::to_string(i), false, true));
  for (int npu = 0; npu < 8; ++npu) fabric->AddBidirectional(npu, leaf[npu / 2], bw, lat);
  for (int spine = 0; spine < 5; ++spine) {
    const int t = fabric->AddDevice("t" + std::to_string(spine), false, true);
    const int pair = spine < 2 ? 0 : 2;
    fabric->AddBidirectional(leaf[pair], t, bw, lat);
    fabric->AddBidirectional(leaf[pair + 1], t, bw, lat);
  }
  fabric->AddBidirectional(leaf[1], leaf[2], bw, lat);  // the two halves joined
  ASSERT_TRUE(fabric->BuildRoutes().ok());
  Topology graph;
  graph.dims = {Dimension{BlockType::kSwitch, 2, bw, lat},
                Dimension{BlockType::kSwitch, 4, bw, lat}};
  graph.graph = fabric;
  Simulation sim4, sim5;
  std::unique_ptr<Network> on_ecmp = MakeNetwork(Backend::kPacket, sim4, graph);
  std::unique_ptr<Network> on_adaptive =
      MakeNetwork(Backend::kPacket, sim5, graph, adaptive_params);
  EXPECT_EQ(sig(*on_ecmp, {0, 2}), sig(*on_ecmp, {4, 6}));
  EXPECT_NE(sig(*on_adaptive, {0, 2}), sig(*on_adaptive, {4, 6}));

  EXPECT_EQ(sig(*on_adaptive, {0, 1}), sig(*on_adaptive, {4, 5}));  // one switch
  EXPECT_EQ(sig(*on_adaptive, {0, 1}), sig(*on_adaptive, {2, 3}));
}

}  // namespace
}  // namespace orrery
