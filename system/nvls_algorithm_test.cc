// The nvls algorithm's message pattern, derived from system/README.md ("NVLS") over a test
// network that delivers every message after exactly `latency + size / bandwidth` (whole ns).
//
// e = endpoint-delay = 10 ns, D = 1 MiB, a 50 GiB/s (53.687 B/ns), 500 ns switch:
// t(D) = floor(500 + 1048576 / 53.687) = 20031.
#include <gtest/gtest.h>

#include <tuple>
#include <utility>
#include <vector>

#include "system/collective_engine.h"
#include "system/test_network.h"

namespace orrery {
namespace {

constexpr uint64_t kD = 1 << 20;

Topology Switch8() {
  Dimension d;
  d.type = BlockType::kSwitch;
  d.npus = 8;
  d.bandwidth = Bandwidth::FromGiBps(50);
  d.latency = Time::FromNs(500);
  return Topology{{d}};
}

SystemParams Nvls() {
  SystemParams p;
  p.preferred_dataset_splits = 1;
  p.endpoint_delay_ns = 10;
  p.local_mem_bw_bytes_per_ns = 1600;
  for (auto& impl : p.impl) impl = {AlgorithmSpec{AlgorithmKind::kNvls}};
  return p;
}

// The collective on the 8-NPU switch; a start error fails the test (and every NPU reads -1).
CollectiveRun RunAll(CollectiveType type, uint64_t size) {
  StatusOr<CollectiveRun> r = RunOnEveryNpu(Switch8(), Nvls(), type, size);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return CollectiveRun{std::vector<int64_t>(8, -1), decltype(CollectiveRun::sent)(8)};
  return *r;
}

// All-reduce: input = output = D; each NPU's link carries D + D/8 each way (D read for the
// reduction and D/8 of result multicast up; D/8 reduced and D multicast down), so each NPU
// sends one (D + D/8)-byte message to its successor and receives one; no reduction on the NPU.
// T = 2e + t(1179648) = 20 + floor(500 + 21972.66) = 20 + 22472 = 22492.
TEST(NvlsTest, AllReduceMovesTheBufferAndItsShareEachWay) {
  CollectiveRun r = RunAll(CollectiveType::kAllReduce, kD);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.ns[i], 22492) << i;
    ASSERT_EQ(r.sent[i].size(), 1u);
    EXPECT_EQ(r.sent[i][0], std::make_pair((i + 1) % 8, kD + kD / 8));
  }
}

// Reduce-scatter on its own: up D, down D/8; the busier direction decides, so one D-byte
// message. T = 2e + t(D) = 20 + 20031 = 20051.
TEST(NvlsTest, ReduceScatterMovesItsInputUp) {
  CollectiveRun r = RunAll(CollectiveType::kReduceScatter, kD);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.ns[i], 20051) << i;
    ASSERT_EQ(r.sent[i].size(), 1u);
    EXPECT_EQ(r.sent[i][0], std::make_pair((i + 1) % 8, kD));
  }
}

// All-gather of D/8 per NPU on its own: up D/8, down D; one D-byte message, as the
// reduce-scatter.
TEST(NvlsTest, AllGatherMovesItsOutputDown) {
  CollectiveRun r = RunAll(CollectiveType::kAllGather, kD / 8);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.ns[i], 20051) << i;
    ASSERT_EQ(r.sent[i].size(), 1u);
    EXPECT_EQ(r.sent[i][0].second, kD);
  }
}

// An all-reduce over two dimensions with local-bw-aware phases and nvls on the first (NCCL's
// NVLS-tree): reduce-scatter in the switch, all-reduce across, all-gather in the switch. The
// pair loads each direction of an NPU's link with D + D/8 in all, so each of its two phases
// sends (D + D/8) / 2; the second dimension's ring sends its own messages.
TEST(NvlsTest, AllReduceAroundAnotherDimensionSplitsTheLoadOverItsTwoPhases) {
  Topology topo = Switch8();
  Dimension across = topo.dims[0];
  across.type = BlockType::kRing;
  across.npus = 2;
  topo.dims.push_back(across);
  SystemParams params = Nvls();
  params.local_bw_aware = true;
  for (auto& impl : params.impl) {
    impl = {AlgorithmSpec{AlgorithmKind::kNvls}, AlgorithmSpec{AlgorithmKind::kRing}};
  }
  StatusOr<CollectiveRun> r = RunOnEveryNpu(topo, params, CollectiveType::kAllReduce, kD);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int i = 0; i < 16; ++i) {
    EXPECT_GE(r->ns[i], 0) << i;
    int pair_messages = 0;
    for (const auto& [to, bytes] : r->sent[i]) {
      if (to / 8 == i / 8) {  // inside the switch
        EXPECT_EQ(bytes, (kD + kD / 8) / 2) << i;
        ++pair_messages;
      }
    }
    EXPECT_EQ(pair_messages, 2) << i;
  }
}

// A communicator group with group-collectives: hierarchical keeps nvls on a Switch dimension,
// as NCCL runs NVLS for a communicator of some of a node's GPUs (NVIDIA/nccl #1455). The first
// node's 8 NPUs of a machine of two such nodes move exactly what the 8-NPU switch does alone
// (22492 ns, one D + D/8 message each); 4 of them, D + D/4 each:
// T = 2e + floor(500 + 1310720 / 53.687) = 20 + 24914 = 24934.
TEST(NvlsTest, AHierarchicalGroupRunsNvlsOverItsMembers) {
  Dimension nodes = Switch8().dims[0];
  nodes.npus = 2;
  const Topology two_nodes{{Switch8().dims[0], nodes}};
  SystemParams params = Nvls();
  params.group_collectives = GroupCollectives::kHierarchical;
  for (auto& impl : params.impl) {
    impl = {AlgorithmSpec{AlgorithmKind::kNvls}, AlgorithmSpec{AlgorithmKind::kRing}};
  }
  for (const auto& [topo, n, expected] : {std::make_tuple(two_nodes, 8, int64_t{22492}),
                                          std::make_tuple(Switch8(), 4, int64_t{24934})}) {
    Simulation sim;
    FixedDelayNetwork net(sim, topo);
    SystemLayer sys(sim, net, params);
    std::vector<int> members;
    for (int i = 0; i < n; ++i) members.push_back(i);
    ASSERT_TRUE(sys.AddGroup(1, members).ok());
    std::vector<Done> done(members.size());
    for (int i : members) {
      done[i].sim = &sim;
      CollectiveRequest req;
      req.size = kD;
      req.group = 1;
      const Status s = sys.npu(i).StartCollective(req, &done[i], 0);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    sim.Run();
    for (int i : members) {
      ASSERT_EQ(done[i].at.size(), 1u) << n << " " << i;
      EXPECT_EQ(done[i].at[0].WholeNs(), expected) << n << " " << i;
    }
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(net.sent[i].size(), 1u) << n << " " << i;
      EXPECT_EQ(net.sent[i][0], std::make_pair((i + 1) % n, kD + kD / static_cast<uint64_t>(n)));
    }
  }
}

TEST(NvlsTest, AllToAllIsAClearError) {
  StatusOr<CollectiveRun> r = RunOnEveryNpu(Switch8(), Nvls(), CollectiveType::kAllToAll, kD);
  ASSERT_FALSE(r.ok());
  const std::string& message = r.status().message();
  EXPECT_NE(message.find("'nvls'"), std::string::npos) << message;
  EXPECT_NE(message.find("supported for all-to-all: ring"), std::string::npos);
}

}  // namespace
}  // namespace orrery
