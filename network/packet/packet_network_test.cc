// The packet-level backend against hand-derived figures: agreement with the analytical models
// without contention, and what only packets show (incast, PFC back-pressure, ECMP collisions).
//
// Most cases use links of 1 byte per ns, so a 4096-byte packet is serialized in exactly 4096 ns
// and every time below is an integer number of ns that can be checked by hand.
#include "network/packet/packet_network.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "network/analytical_aware/analytical_aware.h"
#include "network/analytical_aware/graph_network.h"
#include "network/analytical_unaware/analytical_unaware.h"
#include "network/factory.h"
#include "network/machines.h"

namespace orrery {
namespace {

class Recorder : public DeliveryHandler {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void OnDelivered(uint64_t token) override {
    EXPECT_EQ(at.count(token), 0u) << "token " << token << " delivered twice";
    at[token] = sim_.now();
  }
  Time Last() const {
    Time t;
    for (const auto& [token, when] : at) t = std::max(t, when);
    return t;
  }
  std::map<uint64_t, Time> at;

 private:
  Simulation& sim_;
};

const Bandwidth kOneBytePerNs = Bandwidth::FromBytesPerSec(1e9);
const Time k100ns = Time::FromNs(100);
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kMtu = 4096;

Topology OneDim(BlockType type, int npus, Bandwidth bw = kOneBytePerNs, Time lat = k100ns) {
  Topology t;
  t.dims.push_back(Dimension{type, npus, bw, lat});
  return t;
}

std::map<std::string, LinkStats> ByName(const Network& net) {
  std::map<std::string, LinkStats> m;
  for (const LinkStats& l : net.Links()) m[l.name] = l;
  return m;
}

// One message alone on a network built by `make`; returns its delivery time.
template <typename Make>
Time Alone(Make make, int src, int dst, uint64_t size) {
  Simulation sim;
  std::unique_ptr<Network> net = make(sim);
  Recorder r(sim);
  net->Send(src, dst, Bytes(size), &r, 1);
  sim.Run();
  EXPECT_EQ(r.at.size(), 1u);
  return r.at[1];
}

NetworkParams Params(uint64_t mtu = kMtu) {
  NetworkParams p;
  p.mtu = mtu;
  return p;
}

// ---- Agreement with the analytical models when nothing contends ----

// One hop, 1 MiB to a ring neighbour. Aware: trunc(100 + 1048576 / 1) = 1048676 ns. Packets:
// 256 of 4096 B leave back to back, the last finishes at 256 * 4096 = 1048576 and lands 100 ns
// later: 1048676 ns, the same figure.
TEST(Agreement, OneHopEqualsTheAwareModel) {
  const Topology t = OneDim(BlockType::kRing, 8);
  const Time aware = Alone(
      [&](Simulation& s) { return std::make_unique<AnalyticalAwareNetwork>(s, t); }, 4, 5, kMiB);
  const Time packet = Alone(
      [&](Simulation& s) { return std::make_unique<PacketNetwork>(s, t, Params()); }, 4, 5, kMiB);
  EXPECT_EQ(aware, Time::FromNs(1048676));
  EXPECT_EQ(packet, Time::FromNs(256 * 4096 + 100));
  EXPECT_NEAR(packet.Ns(), aware.Ns(), 0.02 * aware.Ns());
}

// The same at ASTRA-sim's units (50 GB/s, 500 ns, GB = 2^30 B): a 4096 B packet takes
// 4096 / 53.6870912 = 76.2939453125 ns, kept as 76294 ps; the aware model truncates
// 500 + 1048576 / 53.6870912 = 20031.25 to 20031 ns.
TEST(Agreement, OneHopAtAstraSimUnits) {
  const Topology t = OneDim(BlockType::kRing, 8, Bandwidth::FromGiBps(50), Time::FromNs(500));
  const Time aware = Alone(
      [&](Simulation& s) { return std::make_unique<AnalyticalAwareNetwork>(s, t); }, 0, 1, kMiB);
  const Time packet = Alone(
      [&](Simulation& s) { return std::make_unique<PacketNetwork>(s, t, Params()); }, 0, 1, kMiB);
  EXPECT_EQ(aware, Time::FromNs(20031));
  EXPECT_EQ(packet, Time::FromPs(256 * 76294 + 500000));
  EXPECT_NEAR(packet.Ns(), aware.Ns(), 0.02 * aware.Ns());
}

// Several hops. A message that is one packet is forwarded store-and-forward exactly as the aware
// model forwards its single chunk: per hop latency + size / bw. 3 hops on a ring (0 -> 3),
// 1 MiB with packet-mtu 1 MiB: 3 * (100 + 1048576) = 3146028 ns on both.
TEST(Agreement, SeveralHopsOnePacketEqualsTheAwareModel) {
  const Topology ring = OneDim(BlockType::kRing, 8);
  const Time aware = Alone(
      [&](Simulation& s) { return std::make_unique<AnalyticalAwareNetwork>(s, ring); }, 0, 3, kMiB);
  const Time packet =
      Alone([&](Simulation& s) { return std::make_unique<PacketNetwork>(s, ring, Params(kMiB)); },
            0, 3, kMiB);
  EXPECT_EQ(aware, Time::FromNs(3 * 1048676));
  EXPECT_EQ(packet, aware);
  // A switch (2 hops) and a 2-D torus (0 -> 5 on 4 x 4: 1 + 1 hops), 4 KiB (one default packet).
  for (const Topology& t :
       {OneDim(BlockType::kSwitch, 8), TorusOrMesh(true, {4, 4}, kOneBytePerNs, k100ns)}) {
    const int dst = t.dims.size() == 1 ? 7 : 5;
    const Time a =
        Alone([&](Simulation& s) { return std::make_unique<AnalyticalAwareNetwork>(s, t); }, 0, dst,
              kMtu);
    const Time p =
        Alone([&](Simulation& s) { return std::make_unique<PacketNetwork>(s, t, Params()); }, 0,
              dst, kMtu);
    EXPECT_EQ(a, Time::FromNs(2 * (100 + 4096)));
    EXPECT_NEAR(p.Ns(), a.Ns(), 0.02 * a.Ns());
  }
}

// A large message over several hops is pipelined: hops * latency + size / bw + (hops - 1) *
// mtu / bw. 0 -> 3 on the ring: 300 + 1048576 + 2 * 4096 = 1057068 ns, within 1% of the
// unaware model's hops * latency + size / bw = 1048876 (the aware model, which holds the whole
// message at every hop, says 3 * 1048676: see network/README.md, "store-and-forward").
TEST(Agreement, SeveralHopsLargeMessageIsPipelined) {
  const Topology ring = OneDim(BlockType::kRing, 8);
  const Time unaware =
      Alone([&](Simulation& s) { return std::make_unique<AnalyticalUnawareNetwork>(s, ring); }, 0,
            3, kMiB);
  const Time packet =
      Alone([&](Simulation& s) { return std::make_unique<PacketNetwork>(s, ring, Params()); }, 0, 3,
            kMiB);
  EXPECT_EQ(unaware, Time::FromNs(300 + 1048576));
  EXPECT_EQ(packet, Time::FromNs(300 + 1048576 + 2 * 4096));
  EXPECT_NEAR(packet.Ns(), unaware.Ns(), 0.01 * unaware.Ns());
}

// Every kind of machine the aware backend knows, at 1 B/ns and 100 ns per link (the DGX
// leaf-spine links: 8 NICs * 1 / 2 spines = 4 B/ns).
std::vector<std::pair<std::string, Topology>> EveryMachineKind() {
  std::vector<std::pair<std::string, Topology>> machines;
  machines.push_back({"ring", OneDim(BlockType::kRing, 6)});
  machines.push_back({"fully connected", OneDim(BlockType::kFullyConnected, 4)});
  machines.push_back({"switch", OneDim(BlockType::kSwitch, 5)});
  machines.push_back({"mesh", TorusOrMesh(false, {5}, kOneBytePerNs, k100ns)});
  machines.push_back({"torus", TorusOrMesh(true, {4, 3}, kOneBytePerNs, k100ns)});
  {
    Topology t = OneDim(BlockType::kRing, 4);
    t.dims.push_back(Dimension{BlockType::kSwitch, 2, kOneBytePerNs, k100ns});
    machines.push_back({"ring x switch", t});
  }
  {
    DgxSpec s;
    s.gpus_per_node = 4;
    s.nodes = 4;
    s.nvswitch_bandwidth = kOneBytePerNs;
    s.nvswitch_latency = k100ns;
    s.nic_bandwidth = kOneBytePerNs;
    s.fabric_latency = k100ns;
    s.leaf_radix = 8;
    s.spines = 2;
    StatusOr<Topology> dgx = BuildDgx(s);
    EXPECT_TRUE(dgx.ok()) << dgx.status().message();
    if (!dgx.ok()) return machines;
    machines.push_back({"dgx", *dgx});
  }
  return machines;
}

// One single-packet message per pair on every machine: the time is
// the sum over the route of (latency + 1000 B / bandwidth) (1100 ns per hop, except the DGX
// leaf-spine links: 350 ns), and the aware backend agrees.
TEST(Agreement, EveryTopologySinglePacketMatchesTheRoute) {
  const std::vector<std::pair<std::string, Topology>> machines = EveryMachineKind();
  for (const auto& [name, t] : machines) {
    ASSERT_TRUE(CheckPacketTopology(t, Params()).ok()) << name;
    const int n = t.num_npus();
    for (int src = 0; src < n; ++src) {
      for (int dst = 0; dst < n; ++dst) {
        if (src == dst) continue;
        Simulation sim;
        PacketNetwork net(sim, t, Params());
        Recorder r(sim);
        net.Send(src, dst, Bytes(1000), &r, 1);
        sim.Run();
        Time expected;
        for (uint32_t link : net.graph().Route(src, dst)) {
          const PhysicalGraph::Link& l = net.graph().links[link];
          expected += l.latency + Bytes(1000) / l.bandwidth;
        }
        EXPECT_EQ(r.at[1], expected) << name << " " << src << " -> " << dst;
        const Time aware = Alone(
            [&](Simulation& s) -> std::unique_ptr<Network> {
              if (t.graph) return std::make_unique<GraphNetwork>(s, t);
              return std::make_unique<AnalyticalAwareNetwork>(s, t);
            },
            src, dst, 1000);
        EXPECT_NEAR(r.at[1].Ns(), aware.Ns(), 0.02 * aware.Ns()) << name;
      }
    }
  }
}

// The aware backend with `aware-forwarding: pipelined` moves a chunk in packets of packet-mtu
// bytes without per-packet events: over every route of every machine kind, for messages of one
// packet, a few packets with a short last one, and 1 MiB (256 packets), the packet backend and
// it agree to the nanosecond (no contention: H hops of equal links give
// H * latency + size / bw + (H - 1) * mtu / bw; the DGX routes mix 1 and 4 B/ns links). A last
// packet of 1 B (8193 B: three packets) makes a fast link after a slow one wait for the full
// packet before it, then send that whole first: on a 1 B/ns ring into a 4 B/ns switch the model
// had let the tail leave 4096 / 4 - 1 = 1023 ns early (a slow link further on hides it, as on
// the DGX routes, whose NIC links follow the spine).
TEST(Agreement, PipelinedAwareModelMatchesPacketsForEverySizeAndRoute) {
  std::vector<std::pair<std::string, Topology>> machines = EveryMachineKind();
  {
    Topology t = OneDim(BlockType::kRing, 4);
    t.dims.push_back(Dimension{BlockType::kSwitch, 2, Bandwidth::FromBytesPerSec(4e9), k100ns});
    machines.push_back({"slow ring x fast switch", t});
  }
  for (const auto& [name, t] : machines) {
    const int n = t.num_npus();
    for (uint64_t size : {uint64_t{1000}, uint64_t{8193}, uint64_t{10000}, kMiB}) {
      for (int src = 0; src < n; ++src) {
        for (int dst = 0; dst < n; ++dst) {
          if (src == dst || (size == kMiB && (src + dst) % 3 != 0)) continue;
          const Time packet =
              Alone([&](Simulation& s) { return std::make_unique<PacketNetwork>(s, t, Params()); },
                    src, dst, size);
          NetworkParams pipelined = Params();
          pipelined.aware_forwarding = NetworkParams::AwareForwarding::kPipelined;
          const Time aware = Alone(
              [&](Simulation& s) {
                return MakeNetwork(Backend::kAnalyticalAware, s, t, pipelined);
              },
              src, dst, size);
          EXPECT_EQ(packet, aware) << name << " " << src << " -> " << dst << ", " << size << " B";
          EXPECT_NEAR(packet.Ns(), aware.Ns(), 0.02 * aware.Ns());
        }
      }
    }
  }
}

// At ASTRA-sim's units (50 GiB/s, 500 ns) serialization is not a whole number of ps: the packet
// backend rounds each packet, the pipelined aware model the whole message once. 1 MiB over the
// 3 hops 0 -> 3 of a ring: 1500 + 1048576 / 53.687 + 2 * 4096 / 53.687 = 21683.8 ns on both,
// within a nanosecond (and so far inside 2%).
TEST(Agreement, PipelinedAwareModelAtAstraSimUnits) {
  const Topology t = OneDim(BlockType::kRing, 8, Bandwidth::FromGiBps(50), Time::FromNs(500));
  AnalyticalAwareNetwork::Options o;
  o.pipeline_mtu = kMtu;
  const Time aware = Alone(
      [&](Simulation& s) { return std::make_unique<AnalyticalAwareNetwork>(s, t, o); }, 0, 3, kMiB);
  const Time packet = Alone(
      [&](Simulation& s) { return std::make_unique<PacketNetwork>(s, t, Params()); }, 0, 3, kMiB);
  const double expected_ns = 1500 + (1048576.0 + 2 * 4096.0) / 53.6870912;
  EXPECT_NEAR(aware.Ns(), expected_ns, 0.001);
  EXPECT_NEAR(packet.Ns(), aware.Ns(), 1.0);
}

// ---- What only packets show ----

// 8 NPUs each send 256 KiB (64 packets) to NPU 8 through one switch (1 B/ns, 100 ns).
// Alone: the last packet leaves the NIC at 262144, reaches the switch at 262244, and the sink
// at 262244 + 4096 + 100 = 266440 ns. Together: the switch's port to NPU 8 carries 8 * 64
// packets back to back from when the first one arrives (4096 + 100), so the last lands at
// 4196 + 8 * 262144 + 100 = 2101448 ns: 7.89 times the single flow (8x minus the fixed
// latency). Each of the 8 ingress buffers holds at most packet-buffer-bytes (credits), and the
// senders can keep them nearly full (a credit returns within 100 ns, 1/40 of a packet time), so
// the egress queue grows to between 7 and 8 buffers.
TEST(Incast, EightToOneTakesEightTimesAndFillsTheEgressQueue) {
  const Topology t = OneDim(BlockType::kSwitch, 9);
  NetworkParams p = Params();
  p.buffer_bytes = 16 * kMtu;
  ASSERT_TRUE(CheckPacketTopology(t, p).ok());
  const uint64_t size = 256 * 1024;
  const Time alone =
      Alone([&](Simulation& s) { return std::make_unique<PacketNetwork>(s, t, p); }, 0, 8, size);
  EXPECT_EQ(alone, Time::FromNs(266440));

  Simulation sim;
  PacketNetwork net(sim, t, p);
  Recorder r(sim);
  for (int i = 0; i < 8; ++i) net.Send(i, 8, Bytes(size), &r, i);
  sim.Run();
  ASSERT_EQ(r.at.size(), 8u);
  EXPECT_EQ(r.Last(), Time::FromNs(4196 + 8 * 262144 + 100));
  const double ratio = r.Last().Ns() / alone.Ns();
  EXPECT_GT(ratio, 7.8);
  EXPECT_LE(ratio, 8.0);
  const auto links = ByName(net);
  const LinkStats::Port egress = *links.at("sw0->npu8").port;
  EXPECT_GE(egress.max_queue_bytes, 7 * p.buffer_bytes);
  EXPECT_LE(egress.max_queue_bytes, 8 * p.buffer_bytes);
  EXPECT_GT(egress.mean_queue_bytes, 0.0);
  EXPECT_EQ(links.at("sw0->npu8").bytes, 8 * size);
  for (int i = 0; i < 8; ++i) {
    const LinkStats::Port nic = *links.at("npu" + std::to_string(i) + "->sw0").port;
    EXPECT_GT(nic.paused, Time::Zero()) << "NIC " << i << " never waited for credits";
    EXPECT_EQ(nic.drops, 0u);
  }
  EXPECT_EQ(net.messages_in_flight(), 0u);
}

// The same incast with queue depths recorded (timelines): only the congested port has a series;
// it follows the queue within one packet, peaks at the port's maximum and ends empty.
TEST(Incast, QueueDepthOverTime) {
  const Topology t = OneDim(BlockType::kSwitch, 9);
  NetworkParams p = Params();
  p.buffer_bytes = 16 * kMtu;
  Simulation sim;
  PacketNetwork net(sim, t, p);
  net.RecordQueueDepths();
  Recorder r(sim);
  for (int i = 0; i < 8; ++i) net.Send(i, 8, Bytes(256 * 1024), &r, i);
  sim.Run();
  const std::vector<QueueSeries> q = net.QueueDepths();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].link, "sw0->npu8");
  const uint64_t max = ByName(net).at("sw0->npu8").port->max_queue_bytes;
  uint64_t peak = 0;
  for (size_t i = 0; i < q[0].samples.size(); ++i) {
    peak = std::max(peak, q[0].samples[i].bytes);
    if (i > 0) {
      EXPECT_LT(q[0].samples[i - 1].time, q[0].samples[i].time);
    }
  }
  EXPECT_EQ(peak, max);  // a new deepest depth is always sampled
  EXPECT_EQ(q[0].samples.back().bytes, 0u);
  EXPECT_LE(q[0].samples.back().time, r.Last());
  // Far fewer samples than packets through the port (512): one per packet-sized change.
  EXPECT_LT(q[0].samples.size(), 2u * 512);
}

// A port's deepest queue is of depths held for some time, and its track peaks there: a lone
// flow queues nowhere (every packet leaves as it arrives: it had shown max 4096 B at the
// switch's port with no track), and three 2000 B messages into one NPU queue up to 4000 B,
// under one MTU (no track had been drawn for it).
TEST(Incast, QueuesOfNoTimeOrUnderOneMtu) {
  const Topology t = OneDim(BlockType::kSwitch, 4);
  {
    Simulation sim;
    PacketNetwork net(sim, t, Params());
    net.RecordQueueDepths();
    Recorder r(sim);
    net.Send(0, 1, Bytes(kMiB), &r, 0);
    sim.Run();
    for (const LinkStats& l : net.Links()) EXPECT_EQ(l.port->max_queue_bytes, 0u) << l.name;
    EXPECT_TRUE(net.QueueDepths().empty());
  }
  Simulation sim;
  PacketNetwork net(sim, t, Params());
  net.RecordQueueDepths();
  Recorder r(sim);
  for (int i = 1; i < 4; ++i) net.Send(i, 0, Bytes(2000), &r, i);
  sim.Run();
  EXPECT_EQ(ByName(net).at("sw0->npu0").port->max_queue_bytes, 4000u);
  const std::vector<QueueSeries> q = net.QueueDepths();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].link, "sw0->npu0");
  uint64_t peak = 0;
  for (const QueueSeries::Sample& s : q[0].samples) peak = std::max(peak, s.bytes);
  EXPECT_EQ(peak, 4000u);
  EXPECT_EQ(q[0].samples.back().bytes, 0u);
}

// Two switches: NPUs 0-3 on swA, NPUs 4-8 on swB, swA <-> swB at 4 B/ns (never the bottleneck
// by itself). All of 0-7 send 256 KiB to NPU 8: swB's port to NPU 8 is the bottleneck (8 * 256
// KiB at 1 B/ns), swB's ingress from swA fills past xoff and pauses swA's port, whose queue then
// fills swA's ingress buffers, which pause the NICs of NPUs 0-3: the pause travels two hops
// upstream. Lossless: no drops, every byte delivered, the sink busy all along (about 8 * 262144
// ns).
TEST(Pfc, PausePropagatesUpstream) {
  auto g = std::make_shared<PhysicalGraph>();
  g->AddNpus(9);
  const int a = g->AddDevice("swA", false, true);
  const int b = g->AddDevice("swB", false, true);
  for (int i = 0; i < 4; ++i) g->AddBidirectional(i, a, kOneBytePerNs, k100ns);
  for (int i = 4; i < 9; ++i) g->AddBidirectional(i, b, kOneBytePerNs, k100ns);
  g->AddBidirectional(a, b, Bandwidth::FromBytesPerSec(4e9), k100ns);
  ASSERT_TRUE(g->BuildRoutes().ok());
  Topology t;
  t.dims = {Dimension{BlockType::kSwitch, 9, kOneBytePerNs, k100ns}};
  t.graph = g;
  NetworkParams p = Params();
  p.flow_control = NetworkParams::FlowControl::kPfc;
  p.buffer_bytes = 16 * kMtu;
  ASSERT_TRUE(CheckPacketTopology(t, p).ok()) << CheckPacketTopology(t, p).message();

  Simulation sim;
  PacketNetwork net(sim, t, p);
  Recorder r(sim);
  const uint64_t size = 256 * 1024;
  for (int i = 0; i < 8; ++i) net.Send(i, 8, Bytes(size), &r, i);
  sim.Run();
  ASSERT_EQ(r.at.size(), 8u);
  EXPECT_NEAR(r.Last().Ns(), 8.0 * size, 0.01 * 8 * size);
  const auto links = ByName(net);
  EXPECT_GT(links.at("swA->swB").port->paused, Time::Zero());
  for (int i = 0; i < 4; ++i) {
    EXPECT_GT(links.at("npu" + std::to_string(i) + "->swA").port->paused, Time::Zero()) << i;
  }
  for (const auto& [name, l] : links) EXPECT_EQ(l.port->drops, 0u) << name;
  EXPECT_EQ(links.at("swB->npu8").bytes, 8 * size);
}

// A leaf-spine fabric: NPUs 0-3 on leaf0, 4-7 on leaf1, two spines, every link 1 B/ns, 100 ns.
// ECMP picks the spine from a hash of (src, dst, device), so some pairs of flows leaf0 -> leaf1
// share an uplink and some do not; the graph's own routes tell which. Spread, each flow alone:
// 400 + 262144 + 3 * 4096 = 274832 ns. Sharing leaf0's uplink: it carries both flows back to
// back from the first arrival, 4196 + 2 * 262144, then 2 * (4096 + 100) more: 536876 ns, twice
// the time less the fixed latency. Adaptive routing sends each packet to the less loaded spine
// and takes the colliding pair back to the spread time.
TEST(Ecmp, TwoFlowsOnOnePathTakeTwiceAsLong) {
  auto g = std::make_shared<PhysicalGraph>();
  g->AddNpus(8);
  const int leaf0 = g->AddDevice("leaf0", false, true);
  const int leaf1 = g->AddDevice("leaf1", false, true);
  const int spine0 = g->AddDevice("spine0", false, true);
  const int spine1 = g->AddDevice("spine1", false, true);
  for (int i = 0; i < 8; ++i) g->AddBidirectional(i, i < 4 ? leaf0 : leaf1, kOneBytePerNs, k100ns);
  for (int leaf : {leaf0, leaf1}) {
    for (int spine : {spine0, spine1}) g->AddBidirectional(leaf, spine, kOneBytePerNs, k100ns);
  }
  ASSERT_TRUE(g->BuildRoutes().ok());
  Topology t;
  t.dims = {Dimension{BlockType::kSwitch, 8, kOneBytePerNs, k100ns}};
  t.graph = g;

  // Pairs of flows (s1 -> d1, s2 -> d2) with different sources and destinations.
  std::pair<std::pair<int, int>, std::pair<int, int>> same{}, apart{};
  bool found_same = false, found_apart = false;
  for (int s1 = 0; s1 < 4; ++s1) {
    for (int s2 = s1 + 1; s2 < 4; ++s2) {
      for (int d1 = 4; d1 < 8; ++d1) {
        for (int d2 = 4; d2 < 8; ++d2) {
          if (d1 == d2) continue;
          const bool shared = g->Route(s1, d1)[1] == g->Route(s2, d2)[1];  // leaf0's uplink
          if (shared && !found_same) same = {{s1, d1}, {s2, d2}}, found_same = true;
          if (!shared && !found_apart) apart = {{s1, d1}, {s2, d2}}, found_apart = true;
        }
      }
    }
  }
  ASSERT_TRUE(found_same && found_apart) << "the hash put every pair on one side";

  const uint64_t size = 256 * 1024;
  auto run = [&](std::pair<std::pair<int, int>, std::pair<int, int>> flows,
                 NetworkParams::Routing routing) {
    NetworkParams p = Params();
    p.routing = routing;
    Simulation sim;
    PacketNetwork net(sim, t, p);
    Recorder r(sim);
    net.Send(flows.first.first, flows.first.second, Bytes(size), &r, 1);
    net.Send(flows.second.first, flows.second.second, Bytes(size), &r, 2);
    sim.Run();
    EXPECT_EQ(r.at.size(), 2u);
    return r.Last();
  };
  const Time spread = run(apart, NetworkParams::Routing::kEcmp);
  const Time collided = run(same, NetworkParams::Routing::kEcmp);
  EXPECT_EQ(spread, Time::FromNs(400 + 262144 + 3 * 4096));
  EXPECT_NEAR(collided.Ns(), 4196 + 2 * 262144 + 2 * 4196, 0.005 * collided.Ns());
  EXPECT_NEAR(collided.Ns() / spread.Ns(), 2.0, 0.06);
  const Time adaptive = run(same, NetworkParams::Routing::kAdaptive);
  EXPECT_LT(adaptive.Ns(), 1.1 * spread.Ns());
}

// On a list of dimensions both backends cross the dimensions in order (dimension 0 first), so a
// message takes the same links on each. [Switch 8, Switch 2] (two nodes of 8 GPUs, one rail
// switch per GPU index, as configs/machines/dgx-h100-ndr): npu1 -> npu10 goes over node 0's
// switch to npu2, then out of npu2's NIC (rail 2) to npu10, not out of npu1's own NIC to npu9
// and over node 1's switch (as short, and once taken by ECMP's hash). Eight flows from each
// GPU of node 0 to the next GPU index on node 1 then use the eight NICs once each, as on the
// congestion-aware backend: each NIC carries one flow's bytes, and they finish together in one
// flow's time (pipelined over 4 hops) instead of two on a NIC that two flows hash onto.
TEST(Ecmp, DimensionsAreCrossedInOrderAsOnTheAwareBackend) {
  Topology t;
  t.dims = {Dimension{BlockType::kSwitch, 8, kOneBytePerNs, k100ns},
            Dimension{BlockType::kSwitch, 2, kOneBytePerNs, k100ns}};
  Simulation sim;
  PacketNetwork net(sim, t, Params());
  std::vector<std::string> route;
  for (uint32_t link : net.graph().Route(1, 10)) {
    const PhysicalGraph::Link& l = net.graph().links[link];
    route.push_back(net.graph().devices[l.src].name + "->" + net.graph().devices[l.dst].name);
  }
  EXPECT_EQ(route, (std::vector<std::string>{"npu1->sw0.0", "sw0.0->npu2", "npu2->sw1.2",
                                             "sw1.2->npu10"}));
  for (int src = 0; src < 16; ++src) {
    for (int dst = 0; dst < 16; ++dst) {
      if (src == dst) continue;
      const std::vector<uint32_t> r = net.graph().Route(src, dst);
      // Dimension 0's links (if the GPU indices differ) come before dimension 1's.
      for (size_t k = 1; k < r.size(); ++k) {
        EXPECT_LE(net.graph().links[r[k - 1]].dimension, net.graph().links[r[k]].dimension)
            << src << " -> " << dst;
      }
    }
  }
  const uint64_t size = 256 * 1024;
  Recorder r(sim);
  for (int i = 0; i < 8; ++i) net.Send(i, 8 + (i + 1) % 8, Bytes(size), &r, i);
  sim.Run();
  ASSERT_EQ(r.at.size(), 8u);
  const std::map<std::string, LinkStats> links = ByName(net);
  for (int i = 0; i < 8; ++i) {
    const std::string nic = "d1:npu" + std::to_string(i) + "->sw1." + std::to_string(i);
    ASSERT_EQ(links.count(nic), 1u) << nic;
    EXPECT_EQ(links.at(nic).bytes, size) << nic;
  }
  // 4 hops of 100 ns, the message once, and 3 packets of pipeline fill.
  EXPECT_EQ(r.Last(), Time::FromNs(400 + 262144 + 3 * 4096));
  Simulation aware_sim;
  AnalyticalAwareNetwork aware(aware_sim, t);
  Recorder ra(aware_sim);
  for (int i = 0; i < 8; ++i) aware.Send(i, 8 + (i + 1) % 8, Bytes(size), &ra, i);
  aware_sim.Run();
  int nics = 0;
  for (const LinkStats& l : aware.Links()) {
    if (l.name.rfind("d1:npu", 0) == 0 && l.name.find("->sw1.") != std::string::npos &&
        std::stoi(l.name.substr(6)) < 8) {
      EXPECT_EQ(l.bytes, size) << l.name;
      ++nics;
    }
  }
  EXPECT_EQ(nics, 8);
}

// ---- Lossless, deterministic, allocation-free in steady state ----

// All-to-all with the smallest buffers credits allow (2 MTU) on rings, tori and a switch, and
// with PFC on a switch (smallest PFC buffer: headroom ceil(2 * 100 * 1) + 3 MTU, plus one MTU
// below xoff) and on a ring and a torus with automatic buffers: every message arrives, nothing
// is dropped, nothing is left in flight.
TEST(Lossless, AllToAllCompletes) {
  using FC = NetworkParams::FlowControl;
  struct Case {
    FC fc;
    Topology t;
    uint64_t buffer;
  };
  const Case cases[] = {
      {FC::kCredit, OneDim(BlockType::kRing, 8), 2 * kMtu},
      {FC::kCredit, OneDim(BlockType::kSwitch, 8), 2 * kMtu},
      {FC::kCredit, TorusOrMesh(true, {4, 4}, kOneBytePerNs, k100ns), 2 * kMtu},
      {FC::kPfc, OneDim(BlockType::kSwitch, 8), 200 + 4 * kMtu},
      {FC::kPfc, OneDim(BlockType::kRing, 8), 0},
      {FC::kPfc, TorusOrMesh(true, {4, 4}, kOneBytePerNs, k100ns), 0},
  };
  for (const Case& c : cases) {
    NetworkParams p = Params();
    p.flow_control = c.fc;
    p.buffer_bytes = c.buffer;
    const Topology& t = c.t;
    ASSERT_TRUE(CheckPacketTopology(t, p).ok()) << CheckPacketTopology(t, p).message();
    SCOPED_TRACE(std::string(c.fc == FC::kPfc ? "pfc " : "credit ") +
                 std::to_string(t.dims.size()) + "-D " + BlockTypeName(t.dims[0].type));
    Simulation sim;
    PacketNetwork net(sim, t, p);
    Recorder r(sim);
    const int n = t.num_npus();
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        if (s != d) net.Send(s, d, Bytes(5 * kMtu + 123), &r, s * n + d);
      }
    }
    sim.Run();
    EXPECT_EQ(r.at.size(), static_cast<size_t>(n * (n - 1)));
    EXPECT_EQ(net.messages_in_flight(), 0u);
    uint64_t bytes_into_npus = 0;
    for (const LinkStats& l : net.Links()) {
      EXPECT_EQ(l.port->drops, 0u);
      if (l.name.find("->npu") != std::string::npos) bytes_into_npus += l.bytes;
    }
    EXPECT_GE(bytes_into_npus, static_cast<uint64_t>(n) * (n - 1) * (5 * kMtu + 123));
  }
}

// A packet that turns from one dimension into a ring at a relaying NPU enters that ring as an
// injected one does: it waits for the bubble, in a queue of its own so that packets continuing
// along the ring do not wait behind it. Without that, NPU i sending 4 MiB to NPU i + 6 on a
// 4 x 4 torus (routed X then Y) filled the Y rings with turning packets and stopped with 12
// NPUs stuck; so did a fully-connected dimension feeding a ring.
TEST(Lossless, TurningIntoARingWaitsForTheBubble) {
  const Bandwidth fast = Bandwidth::FromBytesPerSec(100.0 * (1 << 30));
  const Bandwidth half = Bandwidth::FromBytesPerSec(50.0 * (1 << 30));
  Topology fc_ring;
  fc_ring.dims = {Dimension{BlockType::kFullyConnected, 4, fast, Time::FromNs(500)},
                  Dimension{BlockType::kRing, 4, half, Time::FromNs(700)}};
  for (const Topology& t : {TorusOrMesh(true, {4, 4}, fast, Time::FromNs(500)), fc_ring}) {
    SCOPED_TRACE(BlockTypeName(t.dims[0].type));
    Simulation sim;
    // The switch-like buffer (a round trip plus 16 MTU) relaying NPUs had by default then; the
    // 4 MiB they have now hides the deadlock on this pattern, not on larger ones.
    NetworkParams p;
    p.buffer_bytes = 172911;
    PacketNetwork net(sim, t, p);
    Recorder r(sim);
    for (int s = 0; s < 16; ++s) net.Send(s, (s + 6) % 16, Bytes(4 * kMiB), &r, s);
    sim.Run();
    EXPECT_EQ(r.at.size(), 16u);
    EXPECT_EQ(net.messages_in_flight(), 0u);
    EXPECT_TRUE(net.DescribeStuck(10).empty());
  }
}

// A relaying NPU stores and forwards through its own memory: by default a link into one has an
// ingress buffer of at least 4 MiB, a link into a switch a round trip plus 16 MTU; a buffer the
// user gives applies to every link.
TEST(Lossless, RelayingNpusBufferInTheirMemory) {
  const Bandwidth nvlink = Bandwidth::FromBytesPerSec(400.0 * (1 << 30));
  const Time hop = Time::FromNs(700);
  const PortLimits relay = ResolvePortLimits(NetworkParams(), nvlink, hop, /*relay=*/true);
  const PortLimits to_switch = ResolvePortLimits(NetworkParams(), nvlink, hop, /*relay=*/false);
  EXPECT_EQ(relay.buffer_bytes, kRelayBufferBytes);
  const uint64_t round_trip = static_cast<uint64_t>(std::ceil(2 * 700 * 400.0 * (1 << 30) / 1e9));
  EXPECT_EQ(to_switch.buffer_bytes, round_trip + 16 * kMtu);
  NetworkParams given;
  given.buffer_bytes = 100000;
  EXPECT_EQ(ResolvePortLimits(given, nvlink, hop, true).buffer_bytes, 100000u);

  // On four nodes of 8 ([Switch 8 at 400 GiB/s, Switch 4 at 50]) GPU 0 sends 2 MiB to GPU 9,
  // relayed by GPU 1 onto its NIC, and 16 MiB to GPU 1 itself; both cross the NVSwitch's link
  // into GPU 1. With the relay's memory as its buffer the relayed message waits there for the
  // NIC (2 MiB at 50 GiB/s: 39 us) while the 16 MiB arrive beside it (18 MiB at 400 GiB/s:
  // 44 us). With a switch port's buffer (the default until 2026-11-26) the relayed packets fill
  // it and credits hold the link's other traffic behind them at the NIC's pace.
  Topology t;
  t.dims = {Dimension{BlockType::kSwitch, 8, nvlink, hop},
            Dimension{BlockType::kSwitch, 4, Bandwidth::FromBytesPerSec(50.0 * (1 << 30)),
                      Time::FromNs(700)}};
  auto last = [&](const NetworkParams& p) {
    Simulation sim;
    PacketNetwork net(sim, t, p);
    Recorder r(sim);
    net.Send(0, 9, Bytes(2 * kMiB), &r, 9);
    net.Send(0, 1, Bytes(16 * kMiB), &r, 1);
    sim.Run();
    EXPECT_EQ(r.at.size(), 2u);
    return r.Last();
  };
  NetworkParams switch_like;
  switch_like.buffer_bytes = to_switch.buffer_bytes;
  const Time now = last(NetworkParams());
  const Time before = last(switch_like);
  EXPECT_LT(now.Us(), 1.1 * 44.0) << now.Us();
  EXPECT_GT(before.Us(), 1.3 * now.Us()) << before.Us();
}

// PFC has no bubble: on a ring of relaying NPUs with one packet between xoff and zero, every
// NPU injects, every ingress passes xoff, every port is paused by its downstream neighbour and
// no packet can move: the cyclic-buffer deadlock real PFC fabrics have. The simulation does not
// hang: it runs out of events with the messages still in flight (the runner reports the stuck
// NPUs). Credits with the bubble rule finish the same traffic (AllToAllCompletes).
TEST(Lossless, PfcWithTinyBuffersDeadlocksOnARingAndStops) {
  NetworkParams p = Params();
  p.flow_control = NetworkParams::FlowControl::kPfc;
  p.buffer_bytes = 200 + 4 * kMtu;  // xoff = 1 MTU
  const Topology t = OneDim(BlockType::kRing, 8);
  ASSERT_TRUE(CheckPacketTopology(t, p).ok());
  Simulation sim;
  PacketNetwork net(sim, t, p);
  Recorder r(sim);
  for (int s = 0; s < 8; ++s) {
    for (int d = 0; d < 8; ++d) {
      if (s != d) net.Send(s, d, Bytes(5 * kMtu + 123), &r, s * 8 + d);
    }
  }
  sim.Run();
  EXPECT_EQ(sim.pending_events(), 0u);
  EXPECT_GT(net.messages_in_flight(), 0u);
  EXPECT_LT(r.at.size(), 56u);
  // Every clockwise and anticlockwise port waits on its neighbour: the report says so.
  const std::vector<std::string> why = net.DescribeStuck(6);
  ASSERT_EQ(why.size(), 6u);
  EXPECT_NE(why[0].find("port(s) hold packets that flow control will not let go (paused"),
            std::string::npos)
      << why[0];
  EXPECT_NE(why.back().find("PFC deadlock"), std::string::npos) << why.back();
}

// Closed-loop random traffic (fixed seeds): each delivery sends a new message from inside
// OnDelivered, over every topology kind, both flow controls and both routings, packet sizes from
// 256 B to 4 KiB, buffers at their minimum for credits and automatic for PFC. Every message
// arrives exactly once, nothing is dropped or left in flight, and a second run gives the same
// end time to the picosecond.
class Chain : public DeliveryHandler {
 public:
  Chain(Network& net, uint64_t seed, int budget) : net_(net), state_(seed), budget_(budget) {}
  void Start(int flows) {
    for (int i = 0; i < flows; ++i) SendOne();
  }
  void OnDelivered(uint64_t token) override {
    ASSERT_LT(token, delivered_.size());
    EXPECT_FALSE(delivered_[token]) << "token " << token << " delivered twice";
    delivered_[token] = true;
    if (budget_ > 0) SendOne();
  }
  size_t sent() const { return delivered_.size(); }
  size_t delivered() const {
    size_t n = 0;
    for (bool d : delivered_) n += d;
    return n;
  }

 private:
  uint64_t Next() {  // xorshift64: deterministic and the same everywhere
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  void SendOne() {
    --budget_;
    const int n = net_.num_npus();
    const int src = static_cast<int>(Next() % n);
    const int dst = (src + 1 + static_cast<int>(Next() % (n - 1))) % n;
    const uint64_t size = Next() % 3 == 0 ? Next() % 64 : Next() % 50000;
    delivered_.push_back(false);
    net_.Send(src, dst, Bytes(size), this, delivered_.size() - 1);
  }
  Network& net_;
  uint64_t state_;
  int budget_;
  std::vector<bool> delivered_;
};

TEST(Lossless, RandomClosedLoopTrafficEverywhere) {
  std::vector<Topology> machines = {OneDim(BlockType::kRing, 7), OneDim(BlockType::kSwitch, 6),
                                    OneDim(BlockType::kFullyConnected, 5),
                                    TorusOrMesh(false, {3, 3}, kOneBytePerNs, k100ns),
                                    TorusOrMesh(true, {3, 4}, kOneBytePerNs, k100ns)};
  {
    DgxSpec s;
    s.gpus_per_node = 4;
    s.nodes = 4;
    s.nvswitch_bandwidth = Bandwidth::FromBytesPerSec(4e9);
    s.nvswitch_latency = Time::FromNs(50);
    s.nic_bandwidth = kOneBytePerNs;
    s.fabric_latency = k100ns;
    s.leaf_radix = 4;
    s.spines = 2;
    s.oversubscription = 2;
    StatusOr<Topology> dgx = BuildDgx(s);
    ASSERT_TRUE(dgx.ok());
    machines.push_back(*dgx);
  }
  uint64_t seed = 1;
  for (const Topology& t : machines) {
    for (const auto fc : {NetworkParams::FlowControl::kCredit, NetworkParams::FlowControl::kPfc}) {
      for (const auto routing :
           {NetworkParams::Routing::kEcmp, NetworkParams::Routing::kAdaptive}) {
        NetworkParams p;
        p.mtu = uint64_t{256} << (seed % 5);  // 256 .. 4096
        p.flow_control = fc;
        p.routing = routing;
        p.buffer_bytes = fc == NetworkParams::FlowControl::kCredit ? 2 * p.mtu : 0;
        ASSERT_TRUE(CheckPacketTopology(t, p).ok()) << CheckPacketTopology(t, p).message();
        SCOPED_TRACE("seed " + std::to_string(seed));
        Time end[2];
        for (int run = 0; run < 2; ++run) {
          Simulation sim;
          PacketNetwork net(sim, t, p);
          Chain chain(net, seed, 300);
          chain.Start(t.num_npus());
          sim.Run();
          EXPECT_EQ(chain.delivered(), chain.sent());
          EXPECT_EQ(net.messages_in_flight(), 0u);
          for (const LinkStats& l : net.Links()) EXPECT_EQ(l.port->drops, 0u) << l.name;
          end[run] = sim.now();
        }
        EXPECT_EQ(end[0], end[1]);
        ++seed;
      }
    }
  }
}

// Same inputs, same outputs, bit for bit; a second identical burst on the same network reuses
// the packet pool instead of growing it.
TEST(Engine, DeterministicAndPooled) {
  const Topology t = OneDim(BlockType::kSwitch, 9, Bandwidth::FromGiBps(50), Time::FromNs(500));
  auto run = [&](std::vector<LinkStats>* links, std::vector<size_t>* pool) {
    Simulation sim;
    NetworkParams p = Params();
    p.routing = NetworkParams::Routing::kAdaptive;
    PacketNetwork net(sim, t, p);
    Recorder r(sim);
    for (int burst = 0; burst < 2; ++burst) {
      for (int i = 0; i < 8; ++i) {
        net.Send(i, (i + 3) % 9, Bytes(100000 + 4099 * i), &r, 10 * burst + i);
      }
      net.Send(8, 0, Bytes(0), &r, 100 + burst);  // a size-0 message: one empty packet
      sim.Run();
      pool->push_back(net.packet_pool_size());
    }
    *links = net.Links();
    std::vector<int64_t> times;
    for (const auto& [token, when] : r.at) times.push_back(when.ps());
    return times;
  };
  std::vector<LinkStats> l1, l2;
  std::vector<size_t> p1, p2;
  EXPECT_EQ(run(&l1, &p1), run(&l2, &p2));
  ASSERT_EQ(l1.size(), l2.size());
  for (size_t i = 0; i < l1.size(); ++i) {
    EXPECT_EQ(l1[i].name, l2[i].name);
    EXPECT_EQ(l1[i].bytes, l2[i].bytes);
    EXPECT_EQ(l1[i].busy, l2[i].busy);
    EXPECT_EQ(l1[i].port->max_queue_bytes, l2[i].port->max_queue_bytes);
    EXPECT_EQ(l1[i].port->mean_queue_bytes, l2[i].port->mean_queue_bytes);
    EXPECT_EQ(l1[i].port->paused, l2[i].port->paused);
  }
  EXPECT_EQ(p1[1], p1[0]) << "the second burst allocated packets";
}

// ---- Bad parameters are errors naming the key, the value and the valid range ----

// A message of up to 2^28 packets is simulated; one byte more is refused with its packet count
// (a message of exactly 2^28 packets had been refused, "268435456 packets, above its limit of
// 268435456"). Packets of 16 MiB keep the sizes in range; nothing is run.
TEST(Check, MessagesOfMoreThanTwoToTheTwentyEightPacketsAreRefused) {
  NetworkParams p = Params();
  p.mtu = uint64_t{1} << 24;
  const Topology t = OneDim(BlockType::kSwitch, 2);
  const uint64_t largest = PacketNetwork::kMaxPacketsPerMessage * p.mtu;
  {
    Simulation sim;
    PacketNetwork net(sim, t, p);
    Recorder r(sim);
    net.Send(0, 1, Bytes(largest), &r, 1);
    EXPECT_TRUE(net.error().ok()) << net.error().message();
  }
  Simulation sim;
  PacketNetwork net(sim, t, p);
  Recorder r(sim);
  net.Send(0, 1, Bytes(largest + 1), &r, 1);
  ASSERT_FALSE(net.error().ok());
  EXPECT_NE(net.error().message().find("a message of 4503599627370497 B from NPU 0 to NPU 1: "
                                       "268435457 packets of packet-mtu 16777216 B, above its "
                                       "limit of 268435456 per message"),
            std::string::npos)
      << net.error().message();
}

// A link into a relaying NPU has the NPU's memory (4 MiB) for its ingress buffer, so PFC's
// thresholds there are checked against that, not against a switch port's automatic buffer (a
// ring's xoff of 1 MB, or an xon alone of 100 kB, had been refused with a switch port's range).
TEST(Check, PfcThresholdsIntoRelayingNpusAreCheckedAgainstTheirMemory) {
  const Topology ring = OneDim(BlockType::kRing, 8);  // 1 B/ns, 100 ns
  NetworkParams p = Params();
  p.flow_control = NetworkParams::FlowControl::kPfc;
  p.pfc_xoff_bytes = 1000000;
  EXPECT_TRUE(CheckPacketTopology(ring, p).ok()) << CheckPacketTopology(ring, p).message();
  p.pfc_xoff_bytes = 0;
  p.pfc_xon_bytes = 100000;
  EXPECT_TRUE(CheckPacketTopology(ring, p).ok()) << CheckPacketTopology(ring, p).message();
  // Headroom: 2 * 100 * 1 + 3 MTU = 12488; the largest xoff 4194304 - 12488 = 4181816.
  p.pfc_xon_bytes = 0;
  p.pfc_xoff_bytes = 4181817;
  Status s = CheckPacketTopology(ring, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("expected 4096 .. 4181816 (one MTU .. buffer - headroom of a link "
                             "of dimension 0 (Ring) (0.9313225746 GB/s, 100 ns) into a relaying "
                             "NPU)"),
            std::string::npos)
      << s.message();
  // Two switch dimensions: the NPUs relay between them, but a link up into a switch has a
  // switch port's buffer (200 B + 16 MTU), which bounds xoff.
  Topology two = OneDim(BlockType::kSwitch, 4);
  two.dims.push_back(Dimension{BlockType::kSwitch, 2, kOneBytePerNs, k100ns});
  p.pfc_xoff_bytes = 1000000;
  s = CheckPacketTopology(two, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("expected 4096 .. " + std::to_string(200 + 16 * 4096 - 12488) +
                             " (one MTU .. buffer - headroom of a link of dimension 0 (Switch) "
                             "(0.9313225746 GB/s, 100 ns) into a switch)"),
            std::string::npos)
      << s.message();
  // Both run as checked: a ring all-to-all with xoff at 1 MB arrives whole.
  p.pfc_xoff_bytes = 1000000;
  Simulation sim;
  PacketNetwork net(sim, ring, p);
  Recorder r(sim);
  for (int src = 0; src < 8; ++src) net.Send(src, (src + 4) % 8, Bytes(kMiB), &r, src);
  sim.Run();
  EXPECT_EQ(r.at.size(), 8u);
}

TEST(Check, BadParametersNameKeyValueAndRange) {
  const Topology t = OneDim(BlockType::kSwitch, 8, Bandwidth::FromGiBps(400), Time::FromNs(1000));
  NetworkParams p = Params();
  p.mtu = 10;
  Status s = CheckPacketTopology(t, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'packet-mtu' is 10; expected 64 .. 16777216"), std::string::npos)
      << s.message();

  p = Params();
  p.flow_control = NetworkParams::FlowControl::kPfc;
  p.buffer_bytes = 65536;
  s = CheckPacketTopology(t, p);
  ASSERT_FALSE(s.ok());
  // Headroom: ceil(2 * 1000 * 429.4967296) + 3 * 4096 = 858994 + 12288; plus an MTU: 875378.
  EXPECT_NE(s.message().find("'packet-buffer-bytes' is 65536"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("expected 875378 .. 2^40"), std::string::npos) << s.message();

  p.buffer_bytes = 0;
  p.pfc_xoff_bytes = 100000;
  p.pfc_xon_bytes = 200000;
  s = CheckPacketTopology(t, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'packet-pfc-xon-bytes' is 200000; expected less than"),
            std::string::npos)
      << s.message();
  // xon alone, above the automatic xoff of the link (buffer - headroom = 16 MTU - 3 MTU).
  p.pfc_xoff_bytes = 0;
  p.pfc_xon_bytes = 900000;
  s = CheckPacketTopology(t, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("whose xoff is " + std::to_string(13 * 4096)), std::string::npos)
      << s.message();

  // 64 B at 10^6 GiB/s: 0.06 ps, which had rounded to an instant link.
  p = Params();
  p.mtu = 64;
  s = CheckPacketTopology(OneDim(BlockType::kRing, 8, Bandwidth::FromGiBps(1e6)), p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("key 'packet-mtu' is 64, which a link of dimension 0 (Ring) "
                             "(1000000 GB/s, 100 ns) into a relaying NPU sends in 0.0596"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("at least 100 ps on every link (1% rounding): expected a "
                             "packet-mtu of at least 107375 B"),
            std::string::npos)
      << s.message();
  p.mtu = 107375;
  EXPECT_TRUE(CheckPacketTopology(OneDim(BlockType::kRing, 8, Bandwidth::FromGiBps(1e6)), p).ok());

  p = Params();
  p.buffer_bytes = 4096;  // credits need 2 MTU
  s = CheckPacketTopology(t, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("expected 8192 .. 2^40"), std::string::npos) << s.message();

  // A link that holds more than 2^40 bytes over a round trip (2 x latency x bandwidth; here
  // 2 * 1e11 ns * 1e4 * 2^30 / 1e9 B/ns = 2.1e15 B): the automatic buffer and the PFC headroom
  // would be past the largest packet-buffer-bytes (they overflowed 2^64 and deadlocked the run,
  // or ran with a wrapped buffer). With credits and a buffer of at most 2^40, the link runs at
  // buffer / round trip.
  const Topology far =
      OneDim(BlockType::kRing, 8, Bandwidth::FromGiBps(1e4), Time::FromNs(100'000'000'000));
  s = CheckPacketTopology(far, Params());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a link of dimension 0 (Ring) (10000 GB/s, 1e+11 ns) into a "
                             "relaying NPU holds 2.147483648e+15 bytes over a round trip"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("above 2^40"), std::string::npos) << s.message();
  p = Params();
  p.flow_control = NetworkParams::FlowControl::kPfc;
  p.buffer_bytes = uint64_t{1} << 40;
  EXPECT_FALSE(CheckPacketTopology(far, p).ok());
  p = Params();
  p.buffer_bytes = uint64_t{1} << 40;
  EXPECT_TRUE(CheckPacketTopology(far, p).ok()) << CheckPacketTopology(far, p).message();

  Topology huge = OneDim(BlockType::kRing, 16384);
  s = CheckPacketTopology(huge, Params());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at most 8192 NPUs"), std::string::npos) << s.message();
  EXPECT_TRUE(CheckPacketTopology(t, Params()).ok());
}

}  // namespace
}  // namespace orrery
