// The channelRing algorithm's message pattern, derived from system/README.md ("Channel ring"):
// 2 nodes of 4 NPUs (a Switch of 4, then a Switch of 2; or 2 x 2 x 2), an all-reduce cut into 4
// chunks, all active at once: chunk c is channel c, whose ring inside each node starts at local NPU
// c.
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "system/collective_engine.h"
#include "system/test_network.h"

namespace orrery {
namespace {

constexpr uint64_t kD = 1 << 20;

Dimension Switch(int n) {
  Dimension d;
  d.type = BlockType::kSwitch;
  d.npus = n;
  d.bandwidth = Bandwidth::FromGiBps(50);
  d.latency = Time::FromNs(500);
  return d;
}

// Per NPU: (destination, bytes) of every message, in sending order.
std::vector<std::vector<std::pair<int, uint64_t>>> RunChannels(CollectiveType type, uint64_t size,
                                                               const Topology& topo = Topology{
                                                                   {Switch(4), Switch(2)}}) {
  SystemParams p;
  p.preferred_dataset_splits = 4;
  p.active_chunks_per_dimension = 4;
  p.endpoint_delay_ns = 10;
  p.local_mem_bw_bytes_per_ns = 1600;
  for (auto& impl : p.impl) impl = {AlgorithmSpec{AlgorithmKind::kChannelRing}};
  StatusOr<CollectiveRun> r = RunOnEveryNpu(topo, p, type, size);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return std::vector<std::vector<std::pair<int, uint64_t>>>(8);
  for (int i = 0; i < 8; ++i) EXPECT_GE(r->ns[i], 0) << i;
  return r->sent;
}

// Channel c's ring: node 0's NPUs from local c, then node 1's from local c. NPU 3 (node 0,
// local 3) is the last of node 0 in channel 0 (sends to NPU 4, node 1's first), and sends inside
// its node in channels 1, 2, 3 (to local 0). Every NPU leaves its node in exactly one channel:
// 4 chunks x 2(8-1) = 56 messages of D/4/8, 14 of them to the other node.
TEST(ChannelRingTest, EachChannelLeavesTheNodeThroughADifferentNpu) {
  const auto sent = RunChannels(CollectiveType::kAllReduce, kD);
  for (int npu = 0; npu < 8; ++npu) {
    ASSERT_EQ(sent[npu].size(), 56u) << npu;
    int crossing = 0;
    for (const auto& [dst, bytes] : sent[npu]) {
      EXPECT_EQ(bytes, kD / 32);
      if (dst / 4 != npu / 4) ++crossing;
    }
    EXPECT_EQ(crossing, 14) << npu;
  }
  std::set<int> dsts;
  for (const auto& m : sent[3]) dsts.insert(m.first);
  EXPECT_EQ(dsts, (std::set<int>{0, 4}));
  dsts.clear();
  for (const auto& m : sent[5]) dsts.insert(m.first);  // node 1, local 1: exits in channel 2
  EXPECT_EQ(dsts, (std::set<int>{6, 2}));
}

// On three dimensions a node is every dimension but the last, as NCCL's tuner takes it
// (nccl/nccl_tuner.cc): on 2 x 2 x 2 the nodes are NPUs 0-3 and 4-7, and the channels run as
// on the two nodes of 4 above (a node of dimension 0 alone had rotated each channel inside pairs
// of NPUs, so that NPUs left their node of 4 in 0 or 2 channels, not 1).
TEST(ChannelRingTest, ANodeIsEveryDimensionButTheLast) {
  const auto sent =
      RunChannels(CollectiveType::kAllReduce, kD, Topology{{Switch(2), Switch(2), Switch(2)}});
  for (int npu = 0; npu < 8; ++npu) {
    ASSERT_EQ(sent[npu].size(), 56u) << npu;
    int crossing = 0;
    for (const auto& m : sent[npu]) crossing += m.first / 4 != npu / 4;
    EXPECT_EQ(crossing, 14) << npu;
  }
  std::set<int> dsts;
  for (const auto& m : sent[3]) dsts.insert(m.first);
  EXPECT_EQ(dsts, (std::set<int>{0, 4}));
}

// All-gather of D/8 per NPU: 4 chunks x (8-1) messages of D/32, 7 of them leaving the node.
TEST(ChannelRingTest, AllGatherSendsEachChunkAroundTheFlatRing) {
  const auto sent = RunChannels(CollectiveType::kAllGather, kD / 8);
  for (int npu = 0; npu < 8; ++npu) {
    ASSERT_EQ(sent[npu].size(), 28u) << npu;
    int crossing = 0;
    for (const auto& m : sent[npu]) crossing += m.first / 4 != npu / 4;
    EXPECT_EQ(crossing, 7) << npu;
  }
}

}  // namespace
}  // namespace orrery
