// Torus, mesh and DGX fat-tree machines on the congestion-aware model, derived by hand.
#include "network/analytical_aware/graph_network.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "network/analytical_aware/analytical_aware.h"
#include "network/graph.h"
#include "network/machines.h"

namespace orrery {
namespace {

class Recorder : public DeliveryHandler {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void OnDelivered(uint64_t token) override { at[token] = sim_.now(); }
  std::map<uint64_t, Time> at;
  Time Last() const {
    Time t;
    for (const auto& [token, when] : at) t = std::max(t, when);
    return t;
  }

 private:
  Simulation& sim_;
};

// 1 byte per ns: a 1000-byte message is serialised in 1000 ns.
const Bandwidth kOneBytePerNs = Bandwidth::FromBytesPerSec(1e9);

std::map<std::string, LinkStats> LinksByName(const Network& net) {
  std::map<std::string, LinkStats> m;
  for (const LinkStats& l : net.Links()) m[l.name] = l;
  return m;
}

// 8 x 8 torus, 100 ns per hop: a 1000 B message takes 1100 ns per hop.
TEST(Torus, SingleMessageHopCountsAndTimes) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, TorusOrMesh(true, {8, 8}, kOneBytePerNs, Time::FromNs(100)));
  Recorder r(sim);
  net.Send(0, 1, Bytes(1000), &r, 1);    // (0,0) -> (1,0): 1 hop
  net.Send(8, 15, Bytes(1000), &r, 2);   // (0,1) -> (7,1): 1 hop, over the wrap-around link
  net.Send(16, 20, Bytes(1000), &r, 3);  // (0,2) -> (4,2): 4 hops either way (tie: clockwise)
  net.Send(24, 63, Bytes(1000), &r, 4);  // (0,3) -> (7,7): 1 (wrap) + 4 = 5 hops
  net.Send(32, 59, Bytes(1000), &r, 5);  // (0,4) -> (3,7): 3 + 3 = 6 hops
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(1100));
  EXPECT_EQ(r.at[2], Time::FromNs(1100));
  EXPECT_EQ(r.at[3], Time::FromNs(4 * 1100));
  EXPECT_EQ(r.at[4], Time::FromNs(5 * 1100));
  EXPECT_EQ(r.at[5], Time::FromNs(6 * 1100));
  const auto links = LinksByName(net);
  EXPECT_EQ(links.at("d0:npu8->npu15").bytes, 1000u);  // the wrap-around link carried message 2
  EXPECT_EQ(links.size(), 4u * 64);                    // 2 dims x 2 directions x 64 NPUs
}

TEST(Torus, ThreeDimensionalWrapsEveryDimension) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, TorusOrMesh(true, {4, 4, 4}, kOneBytePerNs, Time::FromNs(100)));
  Recorder r(sim);
  net.Send(0, 63, Bytes(1000), &r, 1);  // (0,0,0) -> (3,3,3): 1 + 1 + 1 hops via wrap-arounds
  net.Send(0, 42, Bytes(1000), &r, 2);  // (0,0,0) -> (2,2,2): 2 + 2 + 2 hops
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(3 * 1100));
  EXPECT_EQ(r.at[2], Time::FromNs(6 * 1100));
}

TEST(Mesh, NoWrapAround) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, TorusOrMesh(false, {8, 8}, kOneBytePerNs, Time::FromNs(100)));
  Recorder r(sim);
  net.Send(0, 63, Bytes(1000), &r, 1);  // (0,0) -> (7,7): 7 + 7 hops, no short cut
  net.Send(15, 8, Bytes(1000), &r, 2);  // (7,1) -> (0,1): 7 hops down the line
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(14 * 1100));
  EXPECT_EQ(r.at[2], Time::FromNs(7 * 1100));
  // Each line of 8 has 7 links per direction: 2 dims x 8 lines x 7 x 2 = 224 links.
  EXPECT_EQ(net.Links().size(), 224u);
}

// Two flows over one link: the link carries both back to back, so the shared part takes twice
// as long. Latency 0, 100 messages of 1000 B per flow, 8 x 8 torus.
TEST(Torus, TwoFlowsSharingALinkTakeTwiceAsLong) {
  auto run = [](bool both) {
    Simulation sim;
    AnalyticalAwareNetwork net(sim, TorusOrMesh(true, {8, 8}, kOneBytePerNs, Time::Zero()));
    Recorder r(sim);
    for (int i = 0; i < 100; ++i) {
      net.Send(1, 2, Bytes(1000), &r, i);                  // flow B: npu1 -> npu2, 1 hop
      if (both) net.Send(0, 2, Bytes(1000), &r, 100 + i);  // flow A: 0 -> 1 -> 2
    }
    sim.Run();
    return r.Last();
  };
  // Alone, link 1->2 carries 100 x 1000 ns. With flow A it is busy without a gap from t = 0
  // (B's queue lasts until A's chunks reach npu1) for 200 chunks: 200 000 ns.
  EXPECT_EQ(run(false), Time::FromNs(100000));
  EXPECT_EQ(run(true), Time::FromNs(200000));
}

// Ring all-reduce on a 2-D torus, step by step: reduce-scatter along dimension 0 (rows of n0),
// all-reduce along dimension 1 on the 1/n0 shard, all-gather along dimension 0. Each step every
// NPU sends one piece to its clockwise neighbour in that dimension; the next step starts when all
// have arrived. Closed form of the bandwidth term:
//   2 (n0 - 1) / n0 * S / B  +  2 (n1 - 1) / n1 * (S / n0) / B.
class RingAllReduce : public DeliveryHandler {
 public:
  RingAllReduce(Simulation& sim, Network& net, std::vector<int> shape, uint64_t bytes)
      : sim_(sim), net_(net), shape_(std::move(shape)), bytes_(bytes) {
    const int n0 = shape_[0], n1 = shape_[1];
    for (int i = 0; i < n0 - 1; ++i) steps_.push_back({0, bytes_ / n0});  // reduce-scatter
    for (int i = 0; i < 2 * (n1 - 1); ++i) steps_.push_back({1, bytes_ / n0 / n1});  // all-reduce
    for (int i = 0; i < n0 - 1; ++i) steps_.push_back({0, bytes_ / n0});             // all-gather
  }
  void Start() { Step(); }
  void OnDelivered(uint64_t) override {
    if (--pending_ == 0) Step();
  }
  Time finished;

 private:
  void Step() {
    if (next_ == steps_.size()) {
      finished = sim_.now();
      return;
    }
    const auto [dim, size] = steps_[next_++];
    const int n = net_.num_npus();
    const int stride = dim == 0 ? 1 : shape_[0];
    pending_ = n;
    for (int npu = 0; npu < n; ++npu) {
      const int c = npu / stride % shape_[dim];
      const int to = npu + ((c + 1) % shape_[dim] - c) * stride;
      net_.Send(npu, to, Bytes(size), this, 0);
    }
  }
  Simulation& sim_;
  Network& net_;
  std::vector<int> shape_;
  uint64_t bytes_;
  std::vector<std::pair<int, uint64_t>> steps_;
  size_t next_ = 0;
  int pending_ = 0;
};

TEST(Torus, RingAllReduceMatchesClosedFormBandwidthTerm) {
  const std::vector<int> shape = {8, 8};
  const uint64_t size = uint64_t{64} << 20;  // 64 MiB
  const Bandwidth bw = Bandwidth::FromGiBps(62);
  Simulation sim;
  AnalyticalAwareNetwork net(sim, TorusOrMesh(true, shape, bw, Time::FromNs(500)));
  RingAllReduce ar(sim, net, shape, size);
  ar.Start();
  sim.Run();
  const double s_over_b = static_cast<double>(size) / bw.bytes_per_ns();
  const double closed = 2.0 * 7 / 8 * s_over_b + 2.0 * 7 / 8 * s_over_b / 8;
  // 28 steps of 500 ns latency are 14 us; the bandwidth term is about 1.1 ms.
  EXPECT_NEAR(ar.finished.Ns(), closed, 0.02 * closed);
  EXPECT_GT(ar.finished.Ns(), closed);
}

// An empty delay cache must not pass for a message of 2^64 - 1 bytes that takes no time.
TEST(Dgx, TheLargestSizeIsTimedLikeAnyOther) {
  DgxSpec s;
  s.gpus_per_node = 2;
  s.nodes = 2;
  s.nvswitch_bandwidth = Bandwidth::FromBytesPerSec(1e21);  // 1e12 B/ns
  s.nvswitch_latency = Time::FromNs(100);
  s.nic_bandwidth = kOneBytePerNs;
  s.leaf_radix = 4;
  s.spines = 1;
  StatusOr<Topology> t = BuildDgx(s);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Simulation sim;
  GraphNetwork net(sim, *t);
  Recorder r(sim);
  net.Send(0, 1, Bytes(UINT64_MAX), &r, 1);  // GPU 0 -> NVSwitch -> GPU 1
  sim.Run();
  // Per hop 100 + 18446744073709551615 / 1e12 = 18446844.07 ns, truncated to whole ns.
  EXPECT_EQ(r.at[1], Time::FromNs(2 * 18446844));
}

// Three tiers with a node's NICs on its NVSwitch: 4 nodes x 4 GPUs, 3 NICs per node, 4 per leaf
// (3 leaves, one per pod), one spine per pod and one core. Node 1's NICs sit on leaves 0 and 1,
// so its NVSwitch joins them, and a route through it (leaf, NVSwitch, leaf) had tied with the
// fabric's (leaf, spine, core, spine, leaf): a send from GPU 9 (node 2) to GPU 0 crossed node
// 1's NVSwitch. It goes through the core, and no NVSwitch carries another node's traffic.
TEST(Dgx, NoRouteCrossesAnotherNodesNvswitch) {
  DgxSpec s;
  s.gpus_per_node = 4;
  s.nodes = 4;
  s.nvswitch_bandwidth = Bandwidth::FromGiBps(100);
  s.nic_bandwidth = kOneBytePerNs;
  s.leaf_radix = 4;
  s.spines = 1;
  s.nic_per_gpu = false;
  s.nics_per_node = 3;
  s.pods = 3;
  s.cores = 1;
  StatusOr<Topology> t = BuildDgx(s);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Simulation sim;
  GraphNetwork net(sim, *t);
  Recorder r(sim);
  int token = 0;
  for (int src = 0; src < 16; ++src) {
    for (int dst = 0; dst < 16; ++dst) {
      if (src / 4 != dst / 4) net.Send(src, dst, Bytes(1000), &r, token++);
    }
  }
  sim.Run();
  const std::map<std::string, LinkStats> links = LinksByName(net);
  EXPECT_GT(links.at("core0->spine0").bytes, 0u);
  // What leaves node n's NVSwitch for a leaf is node n's own traffic: 4 GPUs x 12 peers.
  for (int n = 0; n < 4; ++n) {
    uint64_t out = 0;
    for (const auto& [name, l] : links) {
      if (name.rfind("nvs" + std::to_string(n) + "->leaf", 0) == 0) out += l.bytes;
    }
    EXPECT_EQ(out, 4u * 12 * 1000) << "node " << n;
  }
}

// DGX: 4 nodes x 2 GPUs, one NIC per GPU at 8 Gb/s (= 1 B/ns), 4 NICs per leaf (2 leaves), one
// spine, no latency. Leaf -> spine carries 4 B/ns / r. GPUs 0..3 (leaf 0) each send 100
// messages of 1000 B to GPU i + 4 (leaf 1): 400 chunks cross leaf0 -> spine0 -> leaf1.
Time CrossLeafTime(double oversubscription, std::map<std::string, LinkStats>* links) {
  DgxSpec s;
  s.gpus_per_node = 2;
  s.nodes = 4;
  s.nvswitch_bandwidth = Bandwidth::FromGiBps(100);
  s.nic_bandwidth = kOneBytePerNs;
  s.leaf_radix = 4;
  s.spines = 1;
  s.oversubscription = oversubscription;
  StatusOr<Topology> t = BuildDgx(s);
  EXPECT_TRUE(t.ok()) << t.status().message();
  Simulation sim;
  GraphNetwork net(sim, *t);
  Recorder r(sim);
  for (int m = 0; m < 100; ++m) {
    for (int g = 0; g < 4; ++g) net.Send(g, g + 4, Bytes(1000), &r, m * 4 + g);
  }
  sim.Run();
  *links = LinksByName(net);
  return r.Last();
}

TEST(Dgx, OversubscribedFatTreeSlowsCrossLeafTrafficByTheRatio) {
  std::map<std::string, LinkStats> links;
  // r = 1: uplink 4 B/ns, 250 ns per chunk; the NICs (1000 ns per chunk) are the bottleneck.
  // The last batch of 4 reaches leaf0 at 100 000, leaves it at +250 .. +1000, crosses the spine
  // link (250 ns each) by 101 250 and the destination NIC (1000 ns): 102 250.
  EXPECT_EQ(CrossLeafTime(1, &links), Time::FromNs(102250));
  EXPECT_EQ(links.at("leaf0->spine0").bytes, 400000u);
  EXPECT_EQ(links.at("leaf0->spine0").busy, Time::FromNs(400 * 250));
  // r = 2: uplink 2 B/ns (500 ns per chunk), busy without a gap from 1000: the last chunk leaves
  // at 1000 + 400 * 500 = 201 000, crosses spine -> leaf1 by 201 500, the NIC by 202 500.
  EXPECT_EQ(CrossLeafTime(2, &links), Time::FromNs(202500));
  // r = 4: uplink 1 B/ns: 1000 + 400 * 1000 = 401 000, + 1000, + 1000.
  EXPECT_EQ(CrossLeafTime(4, &links), Time::FromNs(403000));
  EXPECT_EQ(links.at("leaf0->spine0").busy, Time::FromNs(400000));
  // So the transfer (minus the fixed 3 hops) takes 100k, 200k, 400k ns: r times as long.
}

// Two nodes of 8 GPUs on one leaf: NVSwitch 1 B/ns and 100 ns, NICs 1 B/ns and 50 ns per link.
DgxSpec TwoNodesOfEight() {
  DgxSpec s;
  s.gpus_per_node = 8;
  s.nodes = 2;
  s.nvswitch_bandwidth = kOneBytePerNs;
  s.nvswitch_latency = Time::FromNs(100);
  s.nic_bandwidth = kOneBytePerNs;
  s.fabric_latency = Time::FromNs(50);
  s.leaf_radix = 16;
  s.spines = 2;
  return s;
}

TEST(Dgx, InsideANodeTrafficStaysOnTheNvSwitch) {
  StatusOr<Topology> t = BuildDgx(TwoNodesOfEight());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->dims.size(), 2u);
  EXPECT_EQ(t->dims[0].npus, 8);
  EXPECT_EQ(t->dims[1].npus, 2);
  EXPECT_EQ(t->graph->Route(0, 7).size(), 2u);   // gpu0 -> nvs0 -> gpu7
  EXPECT_EQ(t->graph->Route(0, 15).size(), 2u);  // gpu0 -> leaf0 -> gpu15 (same leaf)
  Simulation sim;
  GraphNetwork net(sim, *t);
  Recorder r(sim);
  net.Send(0, 7, Bytes(1000), &r, 1);
  net.Send(1, 9, Bytes(1000), &r, 2);
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(2 * 1100));
  EXPECT_EQ(r.at[2], Time::FromNs(2 * 1050));
}

// A send in pieces (NCCL's p2p chunks) on the DGX graph: gpu1 -> leaf0 -> gpu9, 1 B/ns and
// 50 ns per link, 10000 B: whole, stored and forwarded at the leaf, 2 * 10050 = 20100 ns; in
// pieces of 1000 B, 2 * 50 + 10000 + 1000 = 11100.
TEST(Dgx, ASendInPiecesIsForwardedPieceByPiece) {
  StatusOr<Topology> t = BuildDgx(TwoNodesOfEight());
  ASSERT_TRUE(t.ok()) << t.status().message();
  Simulation sim;
  GraphNetwork net(sim, *t);
  Recorder r(sim);
  net.Send(0, 8, Bytes(10000), &r, 1);
  net.SendInPieces(1, 9, Bytes(10000), 1000, &r, 2);
  sim.Run();
  EXPECT_EQ(r.at[1], Time::FromNs(20100));
  EXPECT_EQ(r.at[2], Time::FromNs(11100));
}

TEST(Dgx, EcmpIsDeterministicAndSpreadsOverSpines) {
  DgxSpec s;
  s.gpus_per_node = 8;
  s.nodes = 8;
  s.nvswitch_bandwidth = kOneBytePerNs;
  s.nic_bandwidth = kOneBytePerNs;
  s.leaf_radix = 16;  // 4 leaves
  s.spines = 4;
  StatusOr<Topology> a = BuildDgx(s);
  StatusOr<Topology> b = BuildDgx(s);
  ASSERT_TRUE(a.ok() && b.ok());
  std::map<std::string, uint64_t> spine_bytes;
  for (int src = 0; src < 64; ++src) {
    for (int dst = 0; dst < 64; ++dst) {
      if (src == dst) continue;
      const std::vector<uint32_t> ra = a->graph->Route(src, dst);
      ASSERT_EQ(ra, b->graph->Route(src, dst));
      // Across leaves: gpu -> leaf -> spine -> leaf -> gpu.
      if (src / 16 != dst / 16) {
        ASSERT_EQ(ra.size(), 4u);
        ++spine_bytes[a->graph->devices[a->graph->links[ra[1]].dst].name];
      }
    }
  }
  ASSERT_EQ(spine_bytes.size(), 4u);  // every spine carries some flows
  for (const auto& [name, flows] : spine_bytes) {
    EXPECT_GT(flows, 3072u / 4 / 2) << name;  // 64 * 48 = 3072 cross-leaf flows, none starved
  }
}

TEST(Dgx, ThreeTierAndSharedNics) {
  DgxSpec s;
  s.gpus_per_node = 4;
  s.nodes = 8;
  s.nvswitch_bandwidth = kOneBytePerNs;
  s.nic_per_gpu = false;
  s.nics_per_node = 2;  // 16 NICs on the NVSwitches
  s.nic_bandwidth = kOneBytePerNs;
  s.leaf_radix = 4;  // 4 leaves
  s.spines = 2;
  s.pods = 2;  // 2 leaves per pod
  s.cores = 2;
  s.oversubscription = 2;
  StatusOr<Topology> t = BuildDgx(s);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const DgxShape shape = ShapeOf(s);
  EXPECT_EQ(shape.leaves, 4);
  EXPECT_DOUBLE_EQ(shape.leaf_spine.bytes_per_ns(), 4.0 / (2 * 2));  // 4 NICs / (r 2 * 2 spines)
  EXPECT_DOUBLE_EQ(shape.spine_core.bytes_per_ns(), 2 * 1.0 / (2 * 2));  // 2 leaves * 1 / (2 * 2)
  // gpu0 (node 0, pod 0) -> gpu31 (node 7, pod 1): gpu, nvs, leaf, spine, core, spine, leaf, nvs,
  // gpu: 8 links.
  EXPECT_EQ(t->graph->Route(0, 31).size(), 8u);
  EXPECT_EQ(t->graph->Route(0, 5).size(), 4u);  // node 0 -> node 1, same leaf: gpu nvs leaf nvs gpu
}

}  // namespace
}  // namespace orrery
