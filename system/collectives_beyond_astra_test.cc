// Broadcast, reduce, gather, scatter, reduce-scatter-block and barrier, derived by hand from
// system/README.md ("Collectives beyond ASTRA-sim") over a test network that delivers every
// message after exactly `latency + size / bandwidth` (whole ns, no contention).
//
// Figures: endpoint-delay e = 25 ns (a communicator group's local hand-off is 10 ns),
// local-mem-bw 1600 B/ns so r(s) = 3 * floor(s / 1600); one 50 GiB/s (53.687 B/ns), 500 ns
// dimension: t(s) = floor(500 + s / 53.687).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "system/collective_engine.h"
#include "system/test_network.h"

namespace orrery {
namespace {

constexpr int64_t kE = 25;
constexpr uint64_t kD = 1 << 20;

int64_t T(uint64_t s) {
  return static_cast<int64_t>(std::floor(500 + static_cast<double>(s) / (50.0 * (1 << 30) / 1e9)));
}
int64_t R(uint64_t s) { return 3 * static_cast<int64_t>(s / 1600); }
int CeilLog2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}
int HighBit(int v) { return static_cast<int>(std::log2(v)); }
int LowBit(int v) { return __builtin_ctz(static_cast<unsigned>(v)); }
int PopCount(int v) { return __builtin_popcount(static_cast<unsigned>(v)); }

Topology OneDim(int n) {
  Dimension d;
  d.type = BlockType::kSwitch;
  d.npus = n;
  d.bandwidth = Bandwidth::FromGiBps(50);
  d.latency = Time::FromNs(500);
  return Topology{{d}};
}

SystemParams Params(int splits = 1) {
  SystemParams p;
  p.preferred_dataset_splits = splits;
  p.endpoint_delay_ns = kE;
  p.local_mem_bw_bytes_per_ns = 1600;
  for (auto& impl : p.impl) impl = {AlgorithmSpec{AlgorithmKind::kRing}};
  return p;
}

struct Result {
  std::vector<int64_t> ns;                                  // completion per NPU (-1: none)
  std::vector<std::vector<std::pair<int, uint64_t>>> sent;  // per NPU: (dst, bytes)
  int Messages(int npu) const { return static_cast<int>(sent[npu].size()); }
  uint64_t BytesSent(int npu) const {
    uint64_t b = 0;
    for (const auto& m : sent[npu]) b += m.second;
    return b;
  }
  uint64_t BytesReceived(int npu) const {
    uint64_t b = 0;
    for (const auto& s : sent) {
      for (const auto& m : s) b += m.first == npu ? m.second : 0;
    }
    return b;
  }
  int TotalMessages() const {
    int c = 0;
    for (const auto& s : sent) c += static_cast<int>(s.size());
    return c;
  }
};

// Every NPU of `npus` (all NPUs if empty) starts the collective at time 0.
Result RunColl(int n, CollectiveType type, uint64_t size, int root = -1, int splits = 1,
               std::vector<int> group = {},
               RootedAlgorithm rooted = RootedAlgorithm::kBinomialTree) {
  Simulation sim;
  FixedDelayNetwork net(sim, OneDim(n));
  SystemParams params = Params(splits);
  params.rooted = rooted;
  SystemLayer sys(sim, net, params);
  std::vector<int> npus = group;
  if (!group.empty()) {
    EXPECT_TRUE(sys.AddGroup(1, group).ok());
  } else {
    for (int i = 0; i < n; ++i) npus.push_back(i);
  }
  std::vector<Done> done(n);
  for (int i : npus) {
    done[i].sim = &sim;
    CollectiveRequest req;
    req.type = type;
    req.size = size;
    req.root = root;
    req.group = group.empty() ? 0 : 1;
    const Status s = sys.npu(i).StartCollective(req, &done[i], 0);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  sim.Run();
  Result r;
  for (int i = 0; i < n; ++i) {
    const bool member = std::find(npus.begin(), npus.end(), i) != npus.end();
    EXPECT_EQ(done[i].at.size(), member ? 1u : 0u) << "NPU " << i;
    r.ns.push_back(done[i].at.empty() ? -1 : done[i].at[0].WholeNs());
  }
  r.sent = net.sent;
  return r;
}

const int kSizes[] = {2, 3, 5, 6, 8, 13};

// Broadcast, binomial tree. Relative rank v = (npu - root) mod n. v != 0 receives once, from
// v - 2^h(v) (h = highest bit), and sends to v + 2^j for j > h(v) with v + 2^j < n; the root
// sends to every 2^j < n: ceil(log2 n) messages. So n - 1 messages of D in all.
// Time: a send is e + t(D) and the next starts when it has arrived; a receive is handed off (e).
// Along the path root -> v the bits of v are added low to high, so v receives at
// (h(v) + 1)(e + t) + (popcount(v) - 1) e, starts sending e later, and ends after its own sends.
TEST(BroadcastTest, BinomialTreeMessagesBytesAndTimes) {
  for (int n : kSizes) {
    for (int root : {0, n - 1}) {
      const Result r = RunColl(n, CollectiveType::kBroadcast, kD, root);
      const int64_t step = kE + T(kD);
      EXPECT_EQ(r.TotalMessages(), n - 1);
      for (int npu = 0; npu < n; ++npu) {
        const int v = (npu - root + n) % n;
        int sends = 0;
        for (int j = v == 0 ? 0 : HighBit(v) + 1; v + (1 << j) < n; ++j) ++sends;
        const int64_t begin = v == 0 ? 0 : (HighBit(v) + 1) * step + PopCount(v) * kE;
        SCOPED_TRACE("n=" + std::to_string(n) + " root=" + std::to_string(root) +
                     " npu=" + std::to_string(npu));
        EXPECT_EQ(r.Messages(npu), sends);
        EXPECT_EQ(r.BytesSent(npu), sends * kD);
        EXPECT_EQ(r.BytesReceived(npu), v == 0 ? 0 : kD);
        EXPECT_EQ(r.ns[npu], begin + sends * step);
      }
      // n = 2^L: the last member (all bits set) ends at L (2e + t).
      if ((n & (n - 1)) == 0) {
        EXPECT_EQ(*std::max_element(r.ns.begin(), r.ns.end()), CeilLog2(n) * (2 * kE + T(kD)));
      }
    }
  }
}

// Reduce, the mirrored binomial tree: v != 0 sends D once, to v - 2^b(v) (b = lowest bit); v
// receives from v + 2^k for k < b(v) (every k for the root) with v + 2^k < n and reduces each
// (e + r(D)) one at a time in arrival order before sending (e + t(D)). n - 1 messages in all.
// Times follow from that recursion: a member with no children sends at once.
int64_t ReduceArrival(int v, int n);  // when v's message reaches its parent
int64_t ReduceReady(int v, int n) {   // when v has reduced all its children
  std::vector<int64_t> arrivals;
  const int limit = v == 0 ? 31 : LowBit(v);
  for (int k = 0; k < limit && v + (1 << k) < n; ++k) {
    arrivals.push_back(ReduceArrival(v + (1 << k), n));
  }
  std::sort(arrivals.begin(), arrivals.end());
  int64_t busy_until = 0;
  for (int64_t a : arrivals) busy_until = std::max(busy_until, a) + kE + R(kD);
  return busy_until;
}
int64_t ReduceArrival(int v, int n) { return ReduceReady(v, n) + kE + T(kD); }

TEST(ReduceTest, BinomialTreeMessagesBytesAndTimes) {
  for (int n : kSizes) {
    for (int root : {0, 2 % n}) {
      const Result r = RunColl(n, CollectiveType::kReduce, kD, root);
      EXPECT_EQ(r.TotalMessages(), n - 1);
      for (int npu = 0; npu < n; ++npu) {
        const int v = (npu - root + n) % n;
        int children = 0;
        for (int k = 0; k < (v == 0 ? 31 : LowBit(v)) && v + (1 << k) < n; ++k) ++children;
        SCOPED_TRACE("n=" + std::to_string(n) + " root=" + std::to_string(root) +
                     " npu=" + std::to_string(npu));
        EXPECT_EQ(r.Messages(npu), v == 0 ? 0 : 1);
        EXPECT_EQ(r.BytesSent(npu), v == 0 ? 0 : kD);
        EXPECT_EQ(r.BytesReceived(npu), children * kD);
        EXPECT_EQ(r.ns[npu], v == 0 ? ReduceReady(0, n) : ReduceArrival(v, n));
      }
      if ((n & (n - 1)) == 0) {  // n = 2^L: the root ends at L (2e + t + r)
        EXPECT_EQ(r.ns[root], CeilLog2(n) * (2 * kE + T(kD) + R(kD)));
      }
    }
  }
}

// NCCL's ring broadcast and reduce (broadcast-reduce-algorithm: ring): D cut into k slices,
// k = max(ceil(D / 512 KiB), 4n) (at most D), each member but the last sending every slice once
// to the next member along the pipeline: broadcast from the root (v = 0, 1, ..., n-1), reduce
// from the member after the root to the root (v = 1, ..., n-1, 0). On this network (no
// contention) all slices move together: the member at position p receives them at p (e + t(s))
// for broadcast, plus (p - 1) r(s) for reduce (each member reduces before it sends on).
uint64_t RingSlices(uint64_t d, int n) {
  const uint64_t by_step = (d + (512 << 10) - 1) / (512 << 10);
  return std::min<uint64_t>(std::max<uint64_t>(by_step, 4 * static_cast<uint64_t>(n)), d);
}

TEST(BroadcastTest, RingPipelinesSlicesAlongTheRing) {
  for (int n : kSizes) {
    for (uint64_t d : {uint64_t{kD}, uint64_t{40}, uint64_t{3 << 20}}) {
      for (int root : {0, n - 1}) {
        const Result r =
            RunColl(n, CollectiveType::kBroadcast, d, root, 1, {}, RootedAlgorithm::kRing);
        const uint64_t k = RingSlices(d, n);
        const uint64_t s = d / k;  // every slice but the last; the last takes the rest
        const int64_t hop = kE + T(s);
        SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d) +
                     " root=" + std::to_string(root));
        EXPECT_EQ(r.TotalMessages(), static_cast<int>(k) * (n - 1));
        for (int npu = 0; npu < n; ++npu) {
          const int p = (npu - root + n) % n;  // position along the pipeline
          EXPECT_EQ(r.BytesSent(npu), p == n - 1 ? 0 : d) << npu;
          EXPECT_EQ(r.BytesReceived(npu), p == 0 ? 0 : d) << npu;
          if (p < n - 1) {
            EXPECT_EQ(r.sent[npu].front().first, (npu + 1) % n) << npu;
          }
          if (d % k == 0) {
            EXPECT_EQ(r.ns[npu], p == n - 1 ? p * hop + kE : (p + 1) * hop) << npu;
          }
        }
      }
    }
  }
}

TEST(ReduceTest, RingPipelinesSlicesToTheRoot) {
  for (int n : kSizes) {
    for (int root : {0, 2 % n}) {
      const Result r = RunColl(n, CollectiveType::kReduce, kD, root, 1, {}, RootedAlgorithm::kRing);
      const uint64_t k = RingSlices(kD, n);
      const uint64_t s = kD / k;
      // Arrival at position p >= 1: p (e + t(s)) + (p - 1) r(s).
      auto arrival = [&](int p) { return p * (kE + T(s)) + (p - 1) * R(s); };
      SCOPED_TRACE("n=" + std::to_string(n) + " root=" + std::to_string(root));
      EXPECT_EQ(r.TotalMessages(), static_cast<int>(k) * (n - 1));
      for (int npu = 0; npu < n; ++npu) {
        const int v = (npu - root + n) % n;
        const int p = (v + n - 1) % n;  // v = 1 first, the root last
        EXPECT_EQ(r.BytesSent(npu), v == 0 ? 0 : kD) << npu;
        EXPECT_EQ(r.BytesReceived(npu), p == 0 ? 0 : kD) << npu;
        if (v != 0) {
          EXPECT_EQ(r.sent[npu].front().first, (npu + 1) % n) << npu;
        }
        if (kD % k == 0) {
          // The root reduces the last slices; the others are done when theirs have arrived.
          EXPECT_EQ(r.ns[npu], p == n - 1 ? arrival(p) + kE + R(s) : arrival(p + 1)) << npu;
        }
      }
    }
  }
}

// Across nodes NCCL's rings leave each node through a different GPU per channel: on 2 nodes of
// 4, with 4 chunks (channels), chunk c's ring starts at local NPU c of each node
// (channelRing's rotation: c = 1 runs 1 2 3 0 5 6 7 4). The broadcast from NPU 0 follows each
// ring from the root, so it crosses to node 1 from NPU 3, 0, 1 and 2 (one chunk through every
// GPU's NIC, where one ring in id order sends all four across from NPU 3), and back from 4, 5
// and 6 (chunk 0's chain ends in node 1). A reduce to NPU 0 ends each chain at the root: every
// GPU of node 1 sends one chunk back. The chain still moves the buffer once per NPU.
TEST(BroadcastTest, RingAcrossNodesLeavesEachNodeThroughEveryGpu) {
  for (CollectiveType type : {CollectiveType::kBroadcast, CollectiveType::kReduce}) {
    Simulation sim;
    Dimension node = OneDim(4).dims[0];
    Dimension nodes = node;
    nodes.npus = 2;
    FixedDelayNetwork net(sim, Topology{{node, nodes}});
    SystemParams params = Params(/*splits=*/4);
    params.rooted = RootedAlgorithm::kRing;
    SystemLayer sys(sim, net, params);
    std::vector<Done> done(8);
    for (int i = 0; i < 8; ++i) {
      done[i].sim = &sim;
      CollectiveRequest req;
      req.type = type;
      req.size = kD;
      req.root = 0;
      ASSERT_TRUE(sys.npu(i).StartCollective(req, &done[i], 0).ok());
    }
    sim.Run();
    std::set<int> out_of_node0, out_of_node1;
    uint64_t bytes = 0;
    for (int npu = 0; npu < 8; ++npu) {
      ASSERT_EQ(done[npu].at.size(), 1u) << npu;
      for (const auto& [dst, size] : net.sent[npu]) {
        bytes += size;
        if (npu / 4 != dst / 4) (npu < 4 ? out_of_node0 : out_of_node1).insert(npu);
      }
    }
    SCOPED_TRACE(CollectiveTypeName(type));
    EXPECT_EQ(bytes, 7 * uint64_t{kD});  // every NPU but the chain's last sends the buffer once
    if (type == CollectiveType::kBroadcast) {
      EXPECT_EQ(out_of_node0, (std::set<int>{0, 1, 2, 3}));
      EXPECT_EQ(out_of_node1, (std::set<int>{4, 5, 6}));
    } else {
      EXPECT_EQ(out_of_node1, (std::set<int>{4, 5, 6, 7}));
      EXPECT_EQ(out_of_node0, (std::set<int>{1, 2, 3}));
    }
  }
}

// Gather: each non-root sends its D to the root (e + t); the root hands every arrival off (e).
// n - 1 messages; the root receives (n - 1) D. Root at 2e + t, others at e + t.
TEST(GatherTest, DirectToRoot) {
  for (int n : kSizes) {
    const int root = n / 2;
    const Result r = RunColl(n, CollectiveType::kGather, kD, root);
    EXPECT_EQ(r.TotalMessages(), n - 1);
    for (int npu = 0; npu < n; ++npu) {
      SCOPED_TRACE("n=" + std::to_string(n) + " npu=" + std::to_string(npu));
      if (npu == root) {
        EXPECT_EQ(r.Messages(npu), 0);
        EXPECT_EQ(r.BytesReceived(npu), (n - 1) * kD);
        EXPECT_EQ(r.ns[npu], 2 * kE + T(kD));
      } else {
        EXPECT_EQ(r.sent[npu], (std::vector<std::pair<int, uint64_t>>{{root, kD}}));
        EXPECT_EQ(r.ns[npu], kE + T(kD));
      }
    }
  }
}

// Scatter: the root sends piece D to each other member (e + t, all at once, in member order); a
// member hands its piece off (e). Root at e + t, others at 2e + t.
TEST(ScatterTest, DirectFromRoot) {
  for (int n : kSizes) {
    const int root = 1;
    const Result r = RunColl(n, CollectiveType::kScatter, kD, root);
    EXPECT_EQ(r.TotalMessages(), n - 1);
    std::vector<std::pair<int, uint64_t>> expected;
    for (int v = 1; v < n; ++v) expected.push_back({(root + v) % n, kD});
    EXPECT_EQ(r.sent[root], expected);
    for (int npu = 0; npu < n; ++npu) {
      SCOPED_TRACE("n=" + std::to_string(n) + " npu=" + std::to_string(npu));
      EXPECT_EQ(r.BytesReceived(npu), npu == root ? 0 : kD);
      EXPECT_EQ(r.ns[npu], npu == root ? kE + T(kD) : 2 * kE + T(kD));
    }
  }
}

// Barrier, dissemination: ceil(log2 n) rounds; in round k every member sends 1 byte to the one
// 2^k ahead (mod n). Each round is e + t(1) + e. n ceil(log2 n) messages in all.
TEST(BarrierTest, DisseminationRounds) {
  for (int n : kSizes) {
    const Result r = RunColl(n, CollectiveType::kBarrier, /*size=*/12345);
    const int rounds = CeilLog2(n);
    EXPECT_EQ(r.TotalMessages(), n * rounds);
    for (int npu = 0; npu < n; ++npu) {
      SCOPED_TRACE("n=" + std::to_string(n) + " npu=" + std::to_string(npu));
      std::vector<std::pair<int, uint64_t>> expected;
      for (int k = 0; k < rounds; ++k) expected.push_back({(npu + (1 << k)) % n, 1});
      EXPECT_EQ(r.sent[npu], expected);
      EXPECT_EQ(r.BytesSent(npu), static_cast<uint64_t>(rounds));
      EXPECT_EQ(r.ns[npu], rounds * (2 * kE + T(1)));
    }
  }
}

// Reduce-scatter-block: equal blocks, so ASTRA-sim's reduce-scatter with the configured
// algorithm (here ring): n - 1 messages of D/n per NPU, each reduced. One chunk:
// (n - 1)(e + t(D/n) + r(D/n)) + e.
TEST(ReduceScatterBlockTest, IsTheReduceScatter) {
  for (int n : {3, 5, 8}) {
    const Result r = RunColl(n, CollectiveType::kReduceScatterBlock, kD);
    const uint64_t m = kD / n;
    for (int npu = 0; npu < n; ++npu) {
      EXPECT_EQ(r.Messages(npu), n - 1);
      EXPECT_EQ(r.BytesSent(npu), (n - 1) * m);
      EXPECT_EQ(r.ns[npu], (n - 1) * (kE + T(m) + R(m)) + kE);
    }
  }
}

// Chunks: each NPU runs its chunks one after another (active-chunks-per-dimension 1), but an NPU
// starts its next chunk as soon as its own part of the previous one is done, so chunks pipeline
// down the tree. With n = 2^L the root sends chunk c at c L (e + t) (its L sends of e + t each),
// and the last member gets each chunk L e later than its root's sends end: with k chunks of D/k
// the end is k L (e + t(D/k)) + L e. Here n = 4, k = 4: 8 (e + t(D/4)) + 2e.
TEST(BroadcastTest, ChunksPipelineDownTheTree) {
  const Result r = RunColl(4, CollectiveType::kBroadcast, kD, 0, /*splits=*/4);
  EXPECT_EQ(*std::max_element(r.ns.begin(), r.ns.end()), 4 * 2 * (kE + T(kD / 4)) + 2 * kE);
  EXPECT_EQ(r.ns[0], 4 * 2 * (kE + T(kD / 4)));
  EXPECT_EQ(r.TotalMessages(), 4 * 3);
  EXPECT_EQ(r.BytesSent(0), 4 * 2 * (kD / 4));
}

// A communicator group: members {1, 3, 4, 6} of 8 NPUs, root NPU 4 (member index 2); local
// hand-offs of 10 ns. Relative ranks: 4 -> 0, 6 -> 1, 1 -> 2, 3 -> 3. Binomial: 4 sends to 6 then
// 1; 6 (v = 1) sends to 3 (v = 3). NPU 3 (v = 3) ends at 2 (10 + t) + 2 * 10.
TEST(BroadcastTest, CommunicatorGroupAndRoot) {
  const Result r = RunColl(8, CollectiveType::kBroadcast, kD, /*root=*/4, 1, {6, 1, 4, 3});
  EXPECT_EQ(r.sent[4], (std::vector<std::pair<int, uint64_t>>{{6, kD}, {1, kD}}));
  EXPECT_EQ(r.sent[6], (std::vector<std::pair<int, uint64_t>>{{3, kD}}));
  EXPECT_TRUE(r.sent[1].empty());
  EXPECT_EQ(r.ns[3], 2 * (10 + T(kD)) + 2 * 10);
  EXPECT_EQ(r.ns[4], 2 * (10 + T(kD)));
  EXPECT_EQ(r.ns[0], -1);
}

TEST(RootedErrorsTest, RootOutsideTheGroupNamesNodeAndValidValues) {
  Simulation sim;
  FixedDelayNetwork net(sim, OneDim(8));
  SystemLayer sys(sim, net, Params());
  ASSERT_TRUE(sys.AddGroup(1, {0, 2, 4}).ok());
  Done d;
  CollectiveRequest req;
  req.type = CollectiveType::kGather;
  req.size = kD;
  req.group = 1;
  req.root = 3;
  req.label = "node 7 'gather'";
  const Status s = sys.npu(0).StartCollective(req, &d, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 7 'gather'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("communicator group 1"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace orrery
