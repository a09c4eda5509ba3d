#include "network/symmetry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/event_queue.h"
#include "network/analytical_aware/analytical_aware.h"

namespace orrery {
namespace {

Topology Dims(std::vector<std::pair<BlockType, int>> dims) {
  Topology t;
  for (const auto& [type, npus] : dims) {
    Dimension d;
    d.type = type;
    d.npus = npus;
    d.bandwidth = Bandwidth::FromBytesPerSec(50e9);
    d.latency = Time::FromNs(500);
    t.dims.push_back(d);
  }
  return t;
}

std::vector<int> Iota(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(NpuSymmetry, RotationOfOneDimension) {
  // 4 x 3: tau rotates dimension 1 (the rows); NPU id = x + 4 y.
  NpuSymmetry s(Dims({{BlockType::kRing, 4}, {BlockType::kRing, 3}}));
  EXPECT_TRUE(s.trivial());
  ASSERT_TRUE(s.AddGenerator(1, {{0, 1, 2}}).ok());
  EXPECT_FALSE(s.trivial());
  EXPECT_EQ(s.OrbitSize(), 3);
  EXPECT_EQ(s.Reps(), (std::vector<int>{0, 1, 2, 3}));  // row 0
  EXPECT_EQ(s.Apply(1, 1, 2), 6);                       // (2, 0) -> (2, 1)
  EXPECT_EQ(s.Apply(1, -1, 2), 10);                     // (2, 0) -> (2, 2)
  EXPECT_EQ(s.Rep(10), 2);
  // The symmetry taking 9 = (1, 2) to (1, 0) shifts rows by -2 = +1: 5 = (1, 1) -> (1, 2) = 9.
  EXPECT_EQ(s.ToRep(9, 5), 9);
  EXPECT_EQ(s.ToRep(9, 9), 1);
  s.RemoveGenerator(1);
  EXPECT_TRUE(s.trivial());
  EXPECT_EQ(s.Reps().size(), 12u);
}

TEST(NpuSymmetry, CyclesOfEqualLengthActFreely) {
  // Megatron's data-parallel shift inside stage blocks: nodes 0-3 and 4-7 each rotate.
  NpuSymmetry s(Dims({{BlockType::kSwitch, 2}, {BlockType::kSwitch, 8}}));
  ASSERT_TRUE(s.AddGenerator(1, {{0, 1, 2, 3}, {4, 5, 6, 7}}).ok());
  EXPECT_EQ(s.Reps(), (std::vector<int>{0, 1, 8, 9}));
  for (int npu = 0; npu < 16; ++npu) {
    EXPECT_TRUE(s.IsRep(s.Rep(npu)));
    EXPECT_EQ(s.ToRep(npu, npu), s.Rep(npu));
  }
  EXPECT_EQ(s.Describe(), "dimension 1 in cycles of 4");
  // Images of sets: a data-parallel group {node 0..3, GPU 0} maps onto itself; a node's pair of
  // GPUs has 4 images.
  EXPECT_EQ(s.ImagesOf({0, 2, 4, 6}), 1);
  EXPECT_EQ(s.ImagesOf({0, 1}), 4);
  EXPECT_EQ(s.ImagesOf({0, 2}), 4);  // {0, 2} -> {2, 4} -> ... four distinct pairs
  // Malformed cycles.
  EXPECT_FALSE(s.AddGenerator(1, {{0, 1, 2}, {3, 4, 5, 6, 7}}).ok());  // lengths differ
  EXPECT_FALSE(s.AddGenerator(1, {{0, 1, 2, 3}, {4, 5, 6, 6}}).ok());  // 6 twice, 7 missing
  EXPECT_FALSE(s.AddGenerator(2, {{0}}).ok());                         // no such dimension
}

TEST(NpuSymmetry, AwareBackendMapsLinksOntoTheirOrbits) {
  Simulation sim;
  // A ring rotates: every link maps onto one of NPU 0's.
  {
    AnalyticalAwareNetwork net(sim, Dims({{BlockType::kRing, 6}}));
    NpuSymmetry s(net.topology());
    ASSERT_TRUE(s.AddGenerator(0, {Iota(6)}).ok());
    EXPECT_TRUE(net.UseSymmetry(s));
  }
  // A ring permuted other than by a rotation does not keep its links.
  {
    AnalyticalAwareNetwork net(sim, Dims({{BlockType::kRing, 4}}));
    NpuSymmetry s(net.topology());
    ASSERT_TRUE(s.AddGenerator(0, {{0, 2, 1, 3}}).ok());
    EXPECT_FALSE(net.UseSymmetry(s));
  }
  // A switch takes any permutation; so does a fully connected dimension.
  for (BlockType type : {BlockType::kSwitch, BlockType::kFullyConnected}) {
    AnalyticalAwareNetwork net(sim, Dims({{BlockType::kRing, 2}, {type, 6}}));
    NpuSymmetry s(net.topology());
    ASSERT_TRUE(s.AddGenerator(1, {{0, 3, 1}, {2, 5, 4}}).ok());
    EXPECT_TRUE(net.UseSymmetry(s));
  }
  // A mesh has no symmetry here.
  {
    AnalyticalAwareNetwork net(sim, Dims({{BlockType::kMesh, 4}}));
    NpuSymmetry s(net.topology());
    ASSERT_TRUE(s.AddGenerator(0, {Iota(4)}).ok());
    EXPECT_FALSE(net.UseSymmetry(s));
  }
  // A slow link whose images are not slow breaks it; slowing every image keeps it.
  {
    AnalyticalAwareNetwork net(sim, Dims({{BlockType::kSwitch, 4}}));
    net.ScaleLinkBandwidths({2}, 0.5);  // npu1's up link
    NpuSymmetry s(net.topology());
    ASSERT_TRUE(s.AddGenerator(0, {Iota(4)}).ok());
    EXPECT_FALSE(net.UseSymmetry(s));
    net.ScaleLinkBandwidths({0, 4, 6}, 0.5);  // every NPU's up link
    EXPECT_TRUE(net.UseSymmetry(s));
  }
}

// A message to a non-representative takes its own route, each hop on its orbit's link: on a
// rotated ring, NPU 0's messages to 1 and 5 load the links a full run would load on 0 -> 1 and
// 5 -> 0, whose representatives are 0 -> 1 and 0 -> 1 (anticlockwise 1 -> 0 maps to 0 -> 5).
TEST(NpuSymmetry, MessagesTimeOnRepresentativeLinks) {
  Simulation sim;
  AnalyticalAwareNetwork net(sim, Dims({{BlockType::kRing, 6}}));
  NpuSymmetry s(net.topology());
  ASSERT_TRUE(s.AddGenerator(0, {Iota(6)}).ok());
  ASSERT_TRUE(net.UseSymmetry(s));
  struct Handler : DeliveryHandler {
    Simulation& sim;
    std::vector<Time> at = std::vector<Time>(2);
    explicit Handler(Simulation& s) : sim(s) {}
    void OnDelivered(uint64_t token) override { at[token] = sim.now(); }
  } h(sim);
  // Two 50 KB messages clockwise from 0 to 1: the second waits for the first on link 0 -> 1
  // (1 us each at 50 GB/s, + 500 ns latency).
  net.Send(0, 1, Bytes(50000), &h, 0);
  net.Send(0, 1, Bytes(50000), &h, 1);
  sim.Run();
  EXPECT_EQ(h.at[0], Time::FromNs(1500));
  EXPECT_EQ(h.at[1], Time::FromNs(2500));
  // Every clockwise link reports what 0 -> 1 carried.
  for (const LinkStats& l : net.Links()) {
    const bool clockwise =
        l.name == "npu0->npu1" || l.name == "npu3->npu4" || l.name == "npu5->npu0";
    if (clockwise) {
      EXPECT_EQ(l.bytes, 100000u) << l.name;
    }
  }
}

}  // namespace
}  // namespace orrery
