#include "network/factory.h"

#include <vector>

#include "gtest/gtest.h"
#include "network/analytical_aware/analytical_aware.h"
#include "network/analytical_unaware/analytical_unaware.h"

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

}  // namespace
}  // namespace orrery
