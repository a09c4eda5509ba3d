// The contract every network backend keeps (network/README.md, "The contract"), one suite run on
// each backend (congestion-unaware, congestion-aware, packet) over machines of every kind it
// models: a ring, a switch, fully connected NPUs, a 2-D torus, a mesh, a ring x switch, and a
// DGX-style fat-tree (a graph: congestion-aware and packet only).
//
// What is checked holds for any correct backend, whatever its model: each message is delivered
// exactly once, with its token, no sooner than its fastest possible link allows; a bigger message
// never arrives sooner than a smaller one; traffic elsewhere never makes a message faster;
// messages of one size between one pair arrive in the order sent; the same sends give the same
// times; a handler may send again from OnDelivered; a machine whose NPUs are all alike times
// every NPU alike; links report the bytes that crossed them; a send to itself or to an NPU that
// does not exist stops the program with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/event_queue.h"
#include "network/factory.h"
#include "network/graph.h"
#include "network/machines.h"
#include "network/network.h"

namespace orrery {
namespace {

struct Machine {
  std::string name;
  Topology topology;
  bool all_npus_alike = false;  // vertex-transitive: every NPU sees the same machine
};

Dimension Dim(BlockType type, int npus, double gib_per_s, int64_t latency_ns) {
  Dimension d;
  d.type = type;
  d.npus = npus;
  d.bandwidth = Bandwidth::FromGiBps(gib_per_s);
  d.latency = Time::FromNs(latency_ns);
  return d;
}

std::vector<Machine> Machines() {
  std::vector<Machine> m;
  m.push_back({"ring8", Topology{{Dim(BlockType::kRing, 8, 50, 500)}}, true});
  m.push_back({"switch8", Topology{{Dim(BlockType::kSwitch, 8, 100, 700)}}, true});
  m.push_back({"fully_connected4", Topology{{Dim(BlockType::kFullyConnected, 4, 25, 300)}}, true});
  m.push_back({"ring4_x_switch2",
               Topology{{Dim(BlockType::kRing, 4, 150, 100), Dim(BlockType::kSwitch, 2, 25, 1000)}},
               true});
  m.push_back({"torus4x4",
               TorusOrMesh(/*torus=*/true, {4, 4}, Bandwidth::FromGiBps(62), Time::FromNs(500)),
               true});
  m.push_back({"mesh3x3",
               TorusOrMesh(/*torus=*/false, {3, 3}, Bandwidth::FromGiBps(62), Time::FromNs(500)),
               false});
  DgxSpec s;
  s.gpus_per_node = 4;
  s.nodes = 2;
  s.nvswitch_bandwidth = Bandwidth::FromGBps(450);
  s.nvswitch_latency = Time::FromNs(700);
  s.nic_bandwidth = Bandwidth::FromGBps(50);
  s.fabric_latency = Time::FromNs(2000);
  s.leaf_radix = 4;
  s.spines = 2;
  StatusOr<Topology> dgx = BuildDgx(s);
  EXPECT_TRUE(dgx.ok()) << dgx.status().message();
  if (dgx.ok()) m.push_back({"dgx4x2", *dgx, false});
  return m;
}

// The fastest bandwidth and the shortest latency of any link: no message beats them.
struct Bounds {
  Bandwidth fastest;
  Time shortest;
};
Bounds LinkBounds(const Topology& t) {
  Bounds b{t.dims[0].bandwidth, t.dims[0].latency};
  auto take = [&](Bandwidth bw, Time lat) {
    if (bw.bytes_per_sec() > b.fastest.bytes_per_sec()) b.fastest = bw;
    b.shortest = std::min(b.shortest, lat);
  };
  if (t.graph != nullptr) {
    b = {t.graph->links[0].bandwidth, t.graph->links[0].latency};
    for (const PhysicalGraph::Link& l : t.graph->links) take(l.bandwidth, l.latency);
  } else {
    for (const Dimension& d : t.dims) take(d.bandwidth, d.latency);
  }
  return b;
}

// Records each delivery: its token and time, in the order they came.
class Recorder : public DeliveryHandler {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void OnDelivered(uint64_t token) override { got.push_back({token, sim_.now()}); }
  std::vector<std::pair<uint64_t, Time>> got;

 private:
  Simulation& sim_;
};

using Param = std::tuple<Backend, size_t>;  // backend, index into Machines()

class NetworkContract : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    machines_ = Machines();
    const auto& [backend, index] = GetParam();
    ASSERT_LT(index, machines_.size());
    backend_ = backend;
    machine_ = machines_[index];
    const Status supported = CheckBackendSupports(backend_, machine_.topology);
    ASSERT_TRUE(supported.ok()) << supported.message();
  }
  std::unique_ptr<Network> Make(Simulation& sim) const {
    return MakeNetwork(backend_, sim, machine_.topology);
  }
  int Npus() const { return machine_.topology.num_npus(); }
  // The delivery time of one message alone on a fresh network.
  Time Alone(int src, int dst, uint64_t bytes) const {
    Simulation sim;
    std::unique_ptr<Network> net = Make(sim);
    Recorder r(sim);
    net->Send(src, dst, Bytes(bytes), &r, 1);
    sim.Run();
    EXPECT_EQ(r.got.size(), 1u);
    return r.got.empty() ? Time::Zero() : r.got[0].second;
  }

  std::vector<Machine> machines_;
  Machine machine_;
  Backend backend_ = Backend::kAnalyticalAware;
};

TEST_P(NetworkContract, EveryMessageIsDeliveredOnceWithItsToken) {
  Simulation sim;
  std::unique_ptr<Network> net = Make(sim);
  ASSERT_EQ(net->num_npus(), Npus());
  Recorder r(sim);
  const std::vector<uint64_t> sizes = {0, 1, 4096, 1 << 20};
  uint64_t token = 0;
  for (int src = 0; src < Npus(); ++src) {
    for (int dst = 0; dst < Npus(); ++dst) {
      if (src == dst) continue;
      for (uint64_t s : sizes) net->Send(src, dst, Bytes(s), &r, token++);
    }
  }
  sim.Run();
  ASSERT_EQ(r.got.size(), token);
  std::vector<uint64_t> tokens;
  for (const auto& [t, when] : r.got) tokens.push_back(t);
  std::sort(tokens.begin(), tokens.end());
  for (uint64_t i = 0; i < token; ++i) ASSERT_EQ(tokens[i], i) << "token delivered twice or never";
  for (size_t i = 1; i < r.got.size(); ++i) {
    EXPECT_GE(r.got[i].second, r.got[i - 1].second) << "deliveries go back in time";
  }
  EXPECT_TRUE(net->DescribeStuck(10).empty());
  EXPECT_TRUE(net->error().ok()) << net->error().message();
}

TEST_P(NetworkContract, NoMessageBeatsItsFastestLink) {
  const Bounds b = LinkBounds(machine_.topology);
  for (uint64_t bytes : {uint64_t{0}, uint64_t{1000}, uint64_t{1} << 20}) {
    // Whole nanoseconds, truncated, as ASTRA-sim times a hop: at most 1 ns below the exact bound.
    const Time bound = b.shortest + Bytes(bytes) / b.fastest - Time::FromNs(1);
    for (int dst = 1; dst < Npus(); ++dst) {
      EXPECT_GE(Alone(0, dst, bytes), bound) << bytes << " B to NPU " << dst;
    }
  }
}

TEST_P(NetworkContract, ABiggerMessageNeverArrivesSooner) {
  const int far = Npus() - 1;
  Time previous = Time::Zero();
  for (uint64_t bytes : {0, 1, 1000, 4096, 4097, 65536, 1 << 20, 16 << 20}) {
    const Time t = Alone(0, far, bytes);
    EXPECT_GE(t, previous) << bytes << " B";
    previous = t;
  }
  EXPECT_GT(Alone(0, far, 16 << 20), Alone(0, far, 1000));
}

TEST_P(NetworkContract, OtherTrafficNeverMakesAMessageFaster) {
  const uint64_t bytes = 1 << 20;
  const Time alone = Alone(1, 0, bytes);
  // Every other NPU sends to NPU 0 at the same moment (an incast), and NPU 0 to each of them.
  Simulation sim;
  std::unique_ptr<Network> net = Make(sim);
  Recorder r(sim);
  net->Send(1, 0, Bytes(bytes), &r, 1);
  for (int src = 2; src < Npus(); ++src) net->Send(src, 0, Bytes(bytes), &r, src);
  for (int dst = 1; dst < Npus(); ++dst) net->Send(0, dst, Bytes(bytes), &r, 1000 + dst);
  sim.Run();
  ASSERT_EQ(r.got.size(), static_cast<size_t>(2 * Npus() - 2));
  for (const auto& [token, when] : r.got) {
    if (token == 1) {
      EXPECT_GE(when, alone);
    }
  }
}

TEST_P(NetworkContract, MessagesOfOneSizeBetweenOnePairArriveInTheOrderSent) {
  Simulation sim;
  std::unique_ptr<Network> net = Make(sim);
  Recorder r(sim);
  for (uint64_t token = 0; token < 6; ++token) net->Send(0, Npus() - 1, Bytes(65536), &r, token);
  sim.Run();
  ASSERT_EQ(r.got.size(), 6u);
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(r.got[i].first, i);
}

TEST_P(NetworkContract, TheSameSendsGiveTheSameTimes) {
  auto run = [&] {
    Simulation sim;
    std::unique_ptr<Network> net = Make(sim);
    Recorder r(sim);
    uint64_t token = 0;
    for (int src = 0; src < Npus(); ++src) {
      for (int k = 1; k <= 3; ++k) {
        net->Send(src, (src + k) % Npus(), Bytes(1000 * (token % 7) + 1), &r, token);
        ++token;
      }
    }
    sim.Run();
    return r.got;
  };
  const auto a = run();
  EXPECT_EQ(a, run());
  EXPECT_FALSE(a.empty());
}

// A handler that sends the next message of a chain when one arrives: NPU i -> i+1 -> ...
class Relay : public DeliveryHandler {
 public:
  Relay(Simulation& sim, Network& net, int hops) : sim_(sim), net_(net), hops_(hops) {}
  void OnDelivered(uint64_t token) override {
    times.push_back(sim_.now());
    if (static_cast<int>(token) + 1 < hops_) {
      const int from = static_cast<int>(token + 1) % net_.num_npus();
      net_.Send(from, (from + 1) % net_.num_npus(), Bytes(4096), this, token + 1);
    }
  }
  std::vector<Time> times;

 private:
  Simulation& sim_;
  Network& net_;
  int hops_;
};

TEST_P(NetworkContract, AHandlerMaySendFromOnDelivered) {
  Simulation sim;
  std::unique_ptr<Network> net = Make(sim);
  const int hops = 2 * Npus();
  Relay relay(sim, *net, hops);
  net->Send(0, 1, Bytes(4096), &relay, 0);
  sim.Run();
  ASSERT_EQ(relay.times.size(), static_cast<size_t>(hops));
  // Each message starts when the one before arrives, so the chain takes at least the sum of its
  // messages' times alone.
  Time sum = Time::Zero();
  for (int i = 0; i < hops; ++i) {
    const int from = i % Npus();
    sum = sum + Alone(from, (from + 1) % Npus(), 4096);
    EXPECT_GE(relay.times[i], sum) << "message " << i;
  }
}

TEST_P(NetworkContract, ZeroAndPiecewiseMessagesAreDeliveredOnce) {
  const int far = Npus() - 1;
  EXPECT_LE(Alone(0, far, 0), Alone(0, far, 1));
  Simulation sim;
  std::unique_ptr<Network> net = Make(sim);
  Recorder r(sim);
  net->SendInPieces(0, far, Bytes(1 << 20), 128 << 10, &r, 7);
  net->SendInPieces(far, 0, Bytes(1000), 128 << 10, &r, 8);  // smaller than one piece
  sim.Run();
  ASSERT_EQ(r.got.size(), 2u);
  const Bounds b = LinkBounds(machine_.topology);
  for (const auto& [token, when] : r.got) {
    const uint64_t bytes = token == 7 ? (1 << 20) : 1000;
    EXPECT_GE(when, b.shortest + Bytes(bytes) / b.fastest - Time::FromNs(1)) << token;
  }
}

TEST_P(NetworkContract, AMessageTakesAsLongBackAsThereAndAlikeNpusAreTimedAlike) {
  const uint64_t bytes = 100000;
  for (int a = 0; a < Npus(); ++a) {
    for (int b = a + 1; b < Npus(); b += 3) {
      EXPECT_EQ(Alone(a, b, bytes), Alone(b, a, bytes)) << a << " <-> " << b;
    }
  }
  if (!machine_.all_npus_alike) return;  // a mesh's corner and middle differ, as a GPU and a NIC
  // Each NPU to the next along dimension 0 (wrapping round it): the same time from every NPU.
  const int n0 = machine_.topology.dims[0].npus;
  const Time first = Alone(0, 1, bytes);
  for (int src = 0; src < Npus(); ++src) {
    const int dst = (src % n0 == n0 - 1) ? src - (n0 - 1) : src + 1;
    EXPECT_EQ(Alone(src, dst, bytes), first) << src << " -> " << dst;
  }
}

TEST_P(NetworkContract, LinksCarryTheBytesThatCrossedThem) {
  Simulation sim;
  std::unique_ptr<Network> net = Make(sim);
  Recorder r(sim);
  const uint64_t bytes = 300000;
  net->Send(0, Npus() - 1, Bytes(bytes), &r, 1);
  sim.Run();
  const std::vector<LinkStats> links = net->Links();
  if (backend_ == Backend::kAnalyticalUnaware) {
    EXPECT_TRUE(links.empty()) << "the congestion-unaware backend models no links";
    return;
  }
  ASSERT_FALSE(links.empty());
  int crossed = 0;
  for (const LinkStats& l : links) {
    EXPECT_TRUE(l.bytes == 0 || l.bytes == bytes) << l.name << " carried " << l.bytes << " B";
    if (l.bytes == 0) continue;
    ++crossed;
    EXPECT_GT(l.busy, Time::Zero()) << l.name;
    EXPECT_LE(l.busy, r.got.at(0).second) << l.name << " busy longer than the run";
  }
  EXPECT_GE(crossed, 1);
}

using NetworkContractDeathTest = NetworkContract;

TEST_P(NetworkContractDeathTest, ASendToItselfOrToNoNpuStopsWithAMessage) {
  Simulation sim;
  std::unique_ptr<Network> net = Make(sim);
  Recorder r(sim);
  EXPECT_DEATH(net->Send(2, 2, Bytes(1), &r, 0), "a message needs src != dst");
  EXPECT_DEATH(net->Send(-1, 1, Bytes(1), &r, 0), "NPU id out of range: -1 -> 1");
  EXPECT_DEATH(net->Send(0, Npus(), Bytes(1), &r, 0), "NPU id out of range");
}

std::string Name(const ::testing::TestParamInfo<Param>& info) {
  std::string backend = BackendName(std::get<0>(info.param));
  std::replace(backend.begin(), backend.end(), '-', '_');
  return backend + "_" + Machines()[std::get<1>(info.param)].name;
}

// Every backend on every machine it models: all of them, except a graph on the
// congestion-unaware backend, which has no links to route over (checked below).
std::vector<Param> EveryBackendOnEveryMachine() {
  std::vector<Param> params;
  const std::vector<Machine> machines = Machines();
  for (Backend b : {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware, Backend::kPacket}) {
    for (size_t i = 0; i < machines.size(); ++i) {
      if (b == Backend::kAnalyticalUnaware && machines[i].topology.graph != nullptr) continue;
      params.emplace_back(b, i);
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, NetworkContract,
                         ::testing::ValuesIn(EveryBackendOnEveryMachine()), Name);
INSTANTIATE_TEST_SUITE_P(EveryBackend, NetworkContractDeathTest,
                         ::testing::ValuesIn(EveryBackendOnEveryMachine()), Name);

TEST(NetworkContractMachines, EveryKindIsBuiltAndOnlyAGraphIsRefusedByTheUnawareBackend) {
  const std::vector<Machine> machines = Machines();
  ASSERT_EQ(machines.size(), 7u);
  EXPECT_EQ(EveryBackendOnEveryMachine().size(), 3 * machines.size() - 1);
  const Status refused =
      CheckBackendSupports(Backend::kAnalyticalUnaware, machines.back().topology);
  ASSERT_NE(machines.back().topology.graph, nullptr);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("analytical-aware"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace orrery
