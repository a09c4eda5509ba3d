// Communicator groups (system/README.md, "Communicator groups"): sub-grid groups run one phase
// per dimension they span with group-collectives: hierarchical, other groups one flat ring, and
// overlapping groups run one after the other on the NPUs they share. Expected times are derived
// by hand over the test network, which delivers a message after exactly
// `latency + size / bandwidth` (whole ns) of the lowest dimension its two ends differ in.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "system/collective_engine.h"
#include "system/test_network.h"

namespace orrery {
namespace {

constexpr uint64_t kD = 1 << 20;

// One chunk, localBWAware, ring on every dimension; endpoint-delay 30 ns so that it differs from
// a flat group's fixed 10 ns hand-off.
SystemParams Params(GroupCollectives mode, int dims) {
  SystemParams p;
  p.preferred_dataset_splits = 1;
  p.active_chunks_per_dimension = 1;
  p.local_bw_aware = true;
  p.endpoint_delay_ns = 30;
  p.local_mem_bw_bytes_per_ns = 1600;
  p.group_collectives = mode;
  for (auto& impl : p.impl) impl.assign(dims, AlgorithmSpec{AlgorithmKind::kRing});
  return p;
}

// 4 x 4: dimension 0 at 100 GiB/s and 100 ns, dimension 1 at 25 GiB/s and 1000 ns.
//   t0(s) = floor(100 + s / 107.374), t1(s) = floor(1000 + s / 26.844).
Topology FourByFour() { return Topology{{RingDimension(4, 100, 100), RingDimension(4, 25, 1000)}}; }

struct GroupRun {
  std::vector<int64_t> ns;  // per member, in the order given
  std::vector<std::vector<std::pair<int, uint64_t>>> sent;
};

// Every member of `members` runs one all-reduce of kD bytes in group 1 (watched by `observer`).
GroupRun RunGroup(const Topology& topo, const SystemParams& params, std::vector<int> members,
                  SystemObserver* observer = nullptr) {
  Simulation sim;
  FixedDelayNetwork net(sim, topo);
  SystemLayer sys(sim, net, params);
  if (observer != nullptr) sys.set_observer(observer);
  EXPECT_TRUE(sys.AddGroup(1, members).ok());
  std::vector<Done> done(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    done[i].sim = &sim;
    CollectiveRequest req;
    req.size = kD;
    req.group = 1;
    Status s = sys.npu(members[i]).StartCollective(req, &done[i], 0);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  sim.Run();
  GroupRun out;
  for (const Done& d : done) {
    EXPECT_EQ(d.at.size(), 1u);
    out.ns.push_back(d.at.empty() ? -1 : d.at[0].WholeNs());
  }
  out.sent = net.sent;
  return out;
}

TEST(GroupCollectivesTest, SubGridGroupRunsOnePhasePerDimension) {
  // {0, 1, 4, 5} = coordinates {0, 1} x {0, 1}. Hierarchical, e = 30 (endpoint-delay):
  //   RS on dimension 0 over 2 (NPU 0 with 1), msg D/2 = 524288: t0 = floor(100 + 4882.81)
  //     = 4982, r = 3 * floor(524288 / 1600) = 981: (e + t0 + r) + e = 6023.
  //   AR on dimension 1 over 2 (NPU 0 with 4) of D/2, msg D/4 = 262144: t1 = floor(1000 +
  //     9765.63) = 10765, r = 3 * 163 = 489: 2 (e + t1) + r + e = 22109.
  //   AG on dimension 0 of D/2, msg 524288: (e + t0) + e = 5042.
  // T = 6023 + 22109 + 5042 = 33174.
  const std::vector<int> group = {0, 1, 4, 5};
  GroupRun h = RunGroup(FourByFour(), Params(GroupCollectives::kHierarchical, 2), group);
  for (int64_t x : h.ns) EXPECT_EQ(x, 33174);
  const std::vector<std::pair<int, uint64_t>> npu0 = {
      {1, kD / 2}, {4, kD / 4}, {4, kD / 4}, {1, kD / 2}};
  EXPECT_EQ(h.sent[0], npu0);

  // Flat (the default, ASTRA-sim): one ring 0 -> 1 -> 4 -> 5 -> 0 with the 10 ns local hand-off;
  // the test network takes every hop on dimension 0 (the lowest differing one): msg D/4,
  // t0 = floor(100 + 2441.41) = 2541, r = 489: 6 (10 + t0) + 3 r + 10 = 16783.
  GroupRun f = RunGroup(FourByFour(), Params(GroupCollectives::kFlat, 2), group);
  for (int64_t x : f.ns) EXPECT_EQ(x, 16783);
  EXPECT_EQ(f.sent[1], (std::vector<std::pair<int, uint64_t>>(6, {4, kD / 4})));
}

// One collective of kD bytes in the 2 x 2 group {0, 1, 4, 5} of FourByFour(), with `involved`
// as its involved_dim: each member's time and CollectiveSpan, and what NPU 0 sent.
struct TwoByTwoGroupRun {
  std::vector<int64_t> ns;
  std::vector<int> spans;
  std::vector<std::pair<int, uint64_t>> sent0;
};
TwoByTwoGroupRun RunTwoByTwoGroup(const SystemParams& p, CollectiveType type,
                                  const std::vector<bool>& involved = {}) {
  Simulation sim;
  FixedDelayNetwork net(sim, FourByFour());
  SystemLayer sys(sim, net, p);
  EXPECT_TRUE(sys.AddGroup(1, {0, 1, 4, 5}).ok());
  std::vector<Done> done(4);
  const int members[] = {0, 1, 4, 5};
  TwoByTwoGroupRun out;
  for (int i = 0; i < 4; ++i) {
    done[i].sim = &sim;
    CollectiveRequest req;
    req.type = type;
    req.size = kD;
    req.group = 1;
    req.involved_dims = involved;
    out.spans.push_back(sys.npu(members[i]).CollectiveSpan(req).members);
    Status s = sys.npu(members[i]).StartCollective(req, &done[i], 0);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  sim.Run();
  for (const Done& d : done) out.ns.push_back(d.at.size() == 1 ? d.at[0].WholeNs() : -1);
  out.sent0 = net.sent[0];
  return out;
}

// The group's collective and the world's on a 2 x 2 network with the same links take the same
// time on every member (NPUs 0, 1, 2, 3 there). Returns what NPU 0 sent in the group.
std::vector<std::pair<int, uint64_t>> ExpectTheGroupRunsAsTheWorldOnTwoByTwo(const SystemParams& p,
                                                                             CollectiveType type) {
  const TwoByTwoGroupRun group = RunTwoByTwoGroup(p, type);
  StatusOr<CollectiveRun> r = RunOnEveryNpu(
      Topology{{RingDimension(2, 100, 100), RingDimension(2, 25, 1000)}}, p, type, kD);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok()) {
    EXPECT_EQ(group.ns, r->ns) << CollectiveTypeName(type);
  }
  for (int64_t x : group.ns) EXPECT_GT(x, 0) << CollectiveTypeName(type);
  return group.sent0;
}

TEST(GroupCollectivesTest, SubGridGroupSchedulesLikeAWorldCollective) {
  // Four chunks, two active per dimension, two queues per dimension, roundRobin dimension
  // order, localBWAware: the 2 x 2 group {0, 1, 4, 5} of the 4 x 4 network must take exactly
  // the time of a world all-reduce on a 2 x 2 network with the same links (NPUs 0, 1, 2, 3).
  for (CollectiveType type : {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                              CollectiveType::kAllGather, CollectiveType::kAllToAll}) {
    SystemParams p = Params(GroupCollectives::kHierarchical, 2);
    p.preferred_dataset_splits = 4;
    p.active_chunks_per_dimension = 2;
    p.queues_per_dim = {2, 2};
    p.inter_dimension = InterDimensionPolicy::kRoundRobin;
    ExpectTheGroupRunsAsTheWorldOnTwoByTwo(p, type);
  }
}

// NCCL's ring across nodes (channelRing) in a sub-grid group spanning both dimensions runs as it
// runs on the world: one flat ring over the members per channel, rotated inside each node. It
// had run a ring per dimension, a hierarchical algorithm NCCL does not run (each NPU's share of
// its node alone crossed the nodes: a reduce-scatter on 4 + 4 GPUs of two p5 nodes 35% fast).
// The 2 x 2 group {0, 1, 4, 5} of the 4 x 4 network takes exactly the time of the world's
// channelRing on a 2 x 2 network with the same links, and NPU 0's first channel sends to 1.
TEST(GroupCollectivesTest, AChannelRingGroupAcrossNodesRunsNcclsFlatRing) {
  for (CollectiveType type :
       {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
    SystemParams p = Params(GroupCollectives::kHierarchical, 2);
    p.preferred_dataset_splits = 4;
    p.active_chunks_per_dimension = 4;
    for (auto& impl : p.impl) impl.assign(1, AlgorithmSpec{AlgorithmKind::kChannelRing});
    const std::vector<std::pair<int, uint64_t>> sent =
        ExpectTheGroupRunsAsTheWorldOnTwoByTwo(p, type);
    // Channels 0 and 2 start at each node's first member (0 sends to 1), channels 1 and 3 at
    // its second (0 is last in its node and sends across, to 4 or 5): both kinds are there.
    ASSERT_FALSE(sent.empty()) << CollectiveTypeName(type);
    EXPECT_TRUE(std::any_of(sent.begin(), sent.end(), [](const auto& m) { return m.first == 1; }))
        << CollectiveTypeName(type);
    EXPECT_TRUE(std::any_of(sent.begin(), sent.end(), [](const auto& m) {
      return m.first == 4 || m.first == 5;
    })) << CollectiveTypeName(type);
  }
}

// involved_dim confines a channelRing group to the members that differ from this NPU only in
// the involved dimensions, as CollectiveSpan says: with one of the two it spans, the ring of
// that dimension runs, exactly as with `ring` listed (the flat channel ring had run a phase
// over dimension 0's flag alone: no data at all with [0, 1], every member with [1, 0]).
TEST(GroupCollectivesTest, AChannelRingGroupKeepsToItsInvolvedDimensions) {
  auto run = [](AlgorithmKind kind, std::vector<bool> involved) {
    SystemParams p = Params(GroupCollectives::kHierarchical, 2);
    for (auto& impl : p.impl) impl.assign(1, AlgorithmSpec{kind});
    const TwoByTwoGroupRun r = RunTwoByTwoGroup(p, CollectiveType::kAllReduce, involved);
    return std::make_pair(r.ns, r.spans);
  };
  for (const std::vector<bool>& involved :
       {std::vector<bool>{true, false}, std::vector<bool>{false, true}}) {
    const auto channel = run(AlgorithmKind::kChannelRing, involved);
    const auto ring = run(AlgorithmKind::kRing, involved);
    EXPECT_EQ(channel.first, ring.first) << involved[0];
    EXPECT_EQ(channel.second, std::vector<int>(4, 2)) << involved[0];
    for (int64_t x : channel.first) EXPECT_GT(x, 1000) << involved[0];  // data moved
  }
  // Both involved: the flat channel ring over all four, as without involved_dim.
  EXPECT_EQ(run(AlgorithmKind::kChannelRing, {true, true}).first,
            run(AlgorithmKind::kChannelRing, {}).first);
  EXPECT_EQ(run(AlgorithmKind::kChannelRing, {true, true}).second, std::vector<int>(4, 4));
}

// Equal blocks of members on several nodes that are not a sub-grid ({0, 1} of node 0 and
// {2, 3} of node 1 on 4 x 4: NPUs 0, 1, 6, 7) run NCCL's ring rotated inside the blocks per
// channel as a sub-grid does: NPU 0 sends to its node's other member in some channels and across
// to the other node in others (every channel had left each node through the same GPU).
TEST(GroupCollectivesTest, AChannelRingOnEqualBlocksPerNodeRotatesPerChannel) {
  SystemParams p = Params(GroupCollectives::kHierarchical, 2);
  p.preferred_dataset_splits = 4;
  p.active_chunks_per_dimension = 4;
  for (auto& impl : p.impl) impl.assign(1, AlgorithmSpec{AlgorithmKind::kChannelRing});
  ASSERT_TRUE(RunsAsFlatRing(FourByFour(), p, {0, 1, 6, 7}));
  EXPECT_EQ(MembersPerNodeOfEqualBlocks(FourByFour(), nullptr), 4);
  const std::vector<int> blocks = {0, 1, 6, 7}, uneven = {0, 1, 2, 6};
  EXPECT_EQ(MembersPerNodeOfEqualBlocks(FourByFour(), &blocks), 2);
  EXPECT_EQ(MembersPerNodeOfEqualBlocks(FourByFour(), &uneven), 0);
  // What a run records (a timeline's send_to) is where each phase sent: the rotated peer of its
  // channel (it had been the plain ring's next member, 1, on every channel).
  struct Receivers : SystemObserver {
    std::set<int> of_npu0;
    void OnPhaseDone(const PhaseRecord& rec) override {
      if (rec.npu == 0) of_npu0.insert(rec.spec->receiver);
    }
    void OnQueueLength(int, int, Time, int) override {}
  } observed;
  GroupRun r = RunGroup(FourByFour(), p, blocks, &observed);
  for (int64_t x : r.ns) EXPECT_GT(x, 0);
  const auto& sent = r.sent[0];
  EXPECT_TRUE(std::any_of(sent.begin(), sent.end(), [](const auto& m) { return m.first == 1; }));
  EXPECT_TRUE(std::any_of(sent.begin(), sent.end(),
                          [](const auto& m) { return m.first == 6 || m.first == 7; }));
  std::set<int> sent_to;
  for (const auto& [dst, bytes] : sent) sent_to.insert(dst);
  EXPECT_EQ(observed.of_npu0, sent_to);
}

// A group's collectives run on its members only, so they must not move the rotations a world
// collective then follows: the queue round robin (which also picks a ring's direction) and
// roundRobin's dimension order. Members and the others had gone round a world ring in opposite
// directions (stuck), or visited the dimensions in different orders (stuck, or twice as slow).
// After a group all-reduce, every NPU's world all-reduce takes what it takes alone.
TEST(GroupCollectivesTest, AGroupsCollectivesDoNotTurnTheWorldsRotations) {
  struct Case {
    const char* what;
    Topology topo;
    std::vector<int> members;
    GroupCollectives mode;
    InterDimensionPolicy inter;
    std::vector<int> queues;
  };
  const Case cases[] = {
      {"flat group, 2 queues",
       Topology{{RingDimension(8, 100, 100)}},
       {0, 1, 2, 3},
       GroupCollectives::kFlat,
       InterDimensionPolicy::kAscending,
       {2}},
      {"sub-grid group, roundRobin",
       FourByFour(),
       {0, 1, 4, 5},
       GroupCollectives::kHierarchical,
       InterDimensionPolicy::kRoundRobin,
       {1, 1}},
      {"sub-grid group, offlineGreedy, 2 queues",
       FourByFour(),
       {0, 1, 4, 5},
       GroupCollectives::kHierarchical,
       InterDimensionPolicy::kOfflineGreedy,
       {2, 2}},
  };
  for (const Case& c : cases) {
    SystemParams p = Params(c.mode, static_cast<int>(c.topo.dims.size()));
    p.preferred_dataset_splits = 4;
    p.inter_dimension = c.inter;
    p.queues_per_dim = c.queues;
    StatusOr<CollectiveRun> alone = RunOnEveryNpu(c.topo, p, CollectiveType::kAllReduce, kD);
    ASSERT_TRUE(alone.ok()) << alone.status().message();
    Simulation sim;
    FixedDelayNetwork net(sim, c.topo);
    SystemLayer sys(sim, net, p);
    ASSERT_TRUE(sys.AddGroup(1, c.members).ok());
    std::vector<Done> group(c.members.size());
    for (size_t i = 0; i < c.members.size(); ++i) {
      group[i].sim = &sim;
      CollectiveRequest req;
      req.size = 64 << 10;
      req.group = 1;
      ASSERT_TRUE(sys.npu(c.members[i]).StartCollective(req, &group[i], 0).ok()) << c.what;
    }
    sim.Run();
    const Time start = sim.now();
    std::vector<Done> world(sys.num_npus());
    for (int n = 0; n < sys.num_npus(); ++n) {
      world[n].sim = &sim;
      CollectiveRequest req;
      req.size = kD;
      ASSERT_TRUE(sys.npu(n).StartCollective(req, &world[n], 0).ok()) << c.what;
    }
    sim.Run();
    for (int n = 0; n < sys.num_npus(); ++n) {
      ASSERT_EQ(world[n].at.size(), 1u) << c.what << ": NPU " << n << " did not finish";
      EXPECT_EQ((world[n].at[0] - start).WholeNs(), alone->ns[n]) << c.what << ": NPU " << n;
    }
  }
}

// The NPUs a collective runs with (reports' group_size, the critical path's matching), as
// StartCollective runs it: a world call confined by involved_dim runs per part; so does a
// hierarchical sub-grid group's; a flat group runs its one ring over every member.
TEST(GroupCollectivesTest, CollectiveSpanIsWhatRuns) {
  for (GroupCollectives mode : {GroupCollectives::kHierarchical, GroupCollectives::kFlat}) {
    Simulation sim;
    FixedDelayNetwork net(sim, FourByFour());
    SystemLayer sys(sim, net, Params(mode, 2));
    ASSERT_TRUE(sys.AddGroup(1, {0, 1, 4, 5}).ok());
    CollectiveRequest world;
    world.involved_dims = {false, true};  // the columns: NPU 5 runs with 1, 5, 9 and 13
    EXPECT_EQ(sys.npu(5).CollectiveSpan(world).members, 4);
    EXPECT_EQ(sys.npu(5).CollectiveSpan(world).first, 1);
    world.involved_dims.clear();
    EXPECT_EQ(sys.npu(5).CollectiveSpan(world).members, 16);
    EXPECT_EQ(sys.npu(5).CollectiveSpan(world).first, 0);
    CollectiveRequest group;
    group.group = 1;
    group.involved_dims = {true, false};  // the group's rows: NPU 4 runs with 4 and 5
    const bool hierarchical = mode == GroupCollectives::kHierarchical;
    EXPECT_EQ(sys.npu(4).CollectiveSpan(group).members, hierarchical ? 2 : 4);
    EXPECT_EQ(sys.npu(4).CollectiveSpan(group).first, hierarchical ? 4 : 0);
    group.involved_dims.clear();
    EXPECT_EQ(sys.npu(4).CollectiveSpan(group).members, 4);
    EXPECT_EQ(sys.npu(4).CollectiveSpan(group).first, 0);
  }
}

TEST(GroupCollectivesTest, RowAndColumnGroupsRunOnTheirDimensionOnly) {
  // A row {4, 5, 6, 7} spans dimension 0 only: one all-reduce over 4, msg D/4: t0 = 2541,
  // r = 489: 6 (30 + 2541) + 3 * 489 + 30 = 16923.
  GroupRun row = RunGroup(FourByFour(), Params(GroupCollectives::kHierarchical, 2), {4, 5, 6, 7});
  for (int64_t x : row.ns) EXPECT_EQ(x, 16923);
  EXPECT_EQ(row.sent[5], (std::vector<std::pair<int, uint64_t>>(6, {6, kD / 4})));
  // A column {1, 5, 9, 13} spans dimension 1 only: t1(D/4) = 10765:
  // 6 (30 + 10765) + 3 * 489 + 30 = 66267.
  GroupRun col = RunGroup(FourByFour(), Params(GroupCollectives::kHierarchical, 2), {1, 5, 9, 13});
  for (int64_t x : col.ns) EXPECT_EQ(x, 66267);
  EXPECT_EQ(col.sent[5], (std::vector<std::pair<int, uint64_t>>(6, {9, kD / 4})));
}

TEST(GroupCollectivesTest, GroupThatIsNotASubGridRunsTheFlatRing) {
  // {0, 1, 2, 4}: coordinates {0, 1, 2} x {0, 1} would be 6 NPUs, so not a sub-grid: the flat
  // ring 0 -> 1 -> 2 -> 4 -> 0 with the 10 ns hand-off even in hierarchical mode. Both
  // dimensions alike (100 GiB/s, 100 ns), so every hop costs t(D/4) = 2541, r = 489:
  // 6 (10 + 2541) + 3 * 489 + 10 = 16783.
  Topology uniform{{RingDimension(4, 100, 100), RingDimension(4, 100, 100)}};
  GroupRun g = RunGroup(uniform, Params(GroupCollectives::kHierarchical, 2), {0, 1, 2, 4});
  for (int64_t x : g.ns) EXPECT_EQ(x, 16783);
  EXPECT_EQ(g.sent[4], (std::vector<std::pair<int, uint64_t>>(6, {0, kD / 4})));
}

// An all-to-all in that group: as ASTRA-sim, the flat ring (each member sends only to the next,
// which forwards the others' pieces); chosen by an NCCL model (the request carries its
// algorithms, all-to-all direct), NCCL's sends to every member at once: NPU 4 sends one piece of
// D/4 to each of 0, 1 and 2.
TEST(GroupCollectivesTest, AnNcclAllToAllInAFlatGroupSendsToEveryMember) {
  Topology uniform{{RingDimension(4, 100, 100), RingDimension(4, 100, 100)}};
  const SystemParams params = Params(GroupCollectives::kHierarchical, 2);
  std::array<std::vector<AlgorithmSpec>, kNumNativeColl> nccl = params.impl;
  nccl[kNativeAllToAll].assign(2, AlgorithmSpec{AlgorithmKind::kDirect});
  for (bool tuned : {false, true}) {
    Simulation sim;
    FixedDelayNetwork net(sim, uniform);
    SystemLayer sys(sim, net, params);
    const std::vector<int> members = {0, 1, 2, 4};
    ASSERT_TRUE(sys.AddGroup(1, members).ok());
    std::vector<Done> done(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
      done[i].sim = &sim;
      CollectiveRequest req;
      req.type = CollectiveType::kAllToAll;
      req.size = kD;
      req.group = 1;
      if (tuned) req.impl = &nccl;
      ASSERT_TRUE(sys.npu(members[i]).StartCollective(req, &done[i], 0).ok());
    }
    sim.Run();
    for (const Done& d : done) EXPECT_EQ(d.at.size(), 1u);
    std::vector<int> peers;
    for (const auto& [dst, size] : net.sent[4]) {
      EXPECT_EQ(size, kD / 4);
      peers.push_back(dst);
    }
    std::sort(peers.begin(), peers.end());
    if (tuned) {
      EXPECT_EQ(peers, (std::vector<int>{0, 1, 2}));
    } else {
      EXPECT_EQ(peers, std::vector<int>(6, 0));  // ASTRA-sim's ring all-to-all: 6 hops to NPU 0
    }
  }
}

TEST(GroupCollectivesTest, HierarchicalGroupChecksTheDimensionAlgorithm) {
  // halvingDoubling on dimension 0 cannot pair 3 members ({0, 1, 2} x {0}): an error, as for
  // a world collective on 3 NPUs.
  Simulation sim;
  FixedDelayNetwork net(sim, FourByFour());
  SystemParams p = Params(GroupCollectives::kHierarchical, 2);
  p.impl[kNativeAllReduce][0] = AlgorithmSpec{AlgorithmKind::kHalvingDoubling};
  SystemLayer sys(sim, net, p);
  ASSERT_TRUE(sys.AddGroup(1, {0, 1, 2}).ok());
  Done d;
  CollectiveRequest req;
  req.size = kD;
  req.group = 1;
  req.label = "node 3 'ar'";
  Status s = sys.npu(0).StartCollective(req, &d, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 3 'ar'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("power-of-two number of NPUs, got 3"), std::string::npos)
      << s.message();
}

TEST(GroupCollectivesTest, NonMemberIsAnError) {
  // NPU 2 is outside {0, 1, 4, 5}: a sub-grid ring built from its coordinates would hold NPUs
  // that are not in the group, so it is refused (in either mode).
  for (GroupCollectives mode : {GroupCollectives::kFlat, GroupCollectives::kHierarchical}) {
    Simulation sim;
    FixedDelayNetwork net(sim, FourByFour());
    SystemLayer sys(sim, net, Params(mode, 2));
    ASSERT_TRUE(sys.AddGroup(1, {0, 1, 4, 5}).ok());
    Done d;
    CollectiveRequest req;
    req.size = kD;
    req.group = 1;
    req.label = "node 4 'ar'";
    Status s = sys.npu(2).StartCollective(req, &d, 0);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "node 4 'ar': NPU 2 is not a member of communicator group 1");
  }
}

// Starts the all-reduce in group 2 when the one in group 1 ends (a data dependency), and
// records when each ended (token 1: group 1, token 2: group 2).
struct Chain : CollectiveListener {
  SystemLayer* sys = nullptr;
  int npu = 0;
  bool in_group2 = false;
  std::vector<std::pair<uint64_t, int64_t>> done;
  void OnCollectiveDone(uint64_t token) override {
    done.emplace_back(token, sys->sim().now().WholeNs());
    if (token == 1 && in_group2) Start(2);
  }
  void Start(int group) {
    CollectiveRequest req;
    req.size = kD;
    req.group = group;
    Status s = sys->npu(npu).StartCollective(req, this, static_cast<uint64_t>(group));
    EXPECT_TRUE(s.ok()) << s.message();
  }
};

TEST(GroupCollectivesTest, OverlappingGroupsRunInDependencyOrder) {
  // 8 NPUs on one ring (50 GiB/s, 500 ns); group 1 = {0, 1, 2, 3}, group 2 = {2, 3, 4, 5}
  // (flat rings, e = 10). NPUs 2 and 3 all-reduce in group 1, then in group 2; NPUs 4 and 5
  // start group 2 at once. Msg D/4: t = floor(500 + 4882.81) = 5382, r = 489.
  //   Group 1 is a plain ring: S = 7e + 6t + 3r = 33829 on NPUs 0-3.
  // Group 2's ring is 2 -> 3 -> 4 -> 5 -> 2. Message k (0..5) of an NPU is handed off when
  // message k-1 from its sender has arrived and its own message k-1 is sent, and costs
  // e (+ r for k = 1, 2, 3); an arrival takes t more. Paths from NPUs 4 and 5 (start 0) are
  // shorter than S, so the finish is S plus the longest path from NPU 2 or 3 (start S):
  //   NPU 4: message 5 from NPU 3 over 5 hops from NPU 2, + t, + the last hand-off e:
  //          S + 7e + 6t + 3r = 2S = 67658; NPU 5 likewise from NPU 3: 67658.
  //   NPU 2: NPU 5's message 5 (sent 3 hops from NPU 2, arriving t later) and its own
  //          message 5 (4 hops round from itself) are both at S + 6e + 4t + 3r; + e = 56894.
  //   NPU 3: NPU 2's message 5 (arriving t after it is sent) and its own message 5 (5 hops
  //          from NPU 2) are both at S + 6e + 5t + 3r; + e = 62276.
  Simulation sim;
  FixedDelayNetwork net(sim, Topology{{RingDimension(8, 50, 500)}});
  SystemParams p = Params(GroupCollectives::kFlat, 1);
  p.endpoint_delay_ns = 10;
  SystemLayer sys(sim, net, p);
  ASSERT_TRUE(sys.AddGroup(1, {0, 1, 2, 3}).ok());
  ASSERT_TRUE(sys.AddGroup(2, {2, 3, 4, 5}).ok());
  std::vector<Chain> chain(6);
  for (int i = 0; i < 6; ++i) {
    chain[i].sys = &sys;
    chain[i].npu = i;
    chain[i].in_group2 = i >= 2;
  }
  for (int i = 0; i < 6; ++i) chain[i].Start(i < 4 ? 1 : 2);
  sim.Run();
  using Ends = std::vector<std::pair<uint64_t, int64_t>>;
  EXPECT_EQ(chain[0].done, (Ends{{1, 33829}}));
  EXPECT_EQ(chain[1].done, (Ends{{1, 33829}}));
  EXPECT_EQ(chain[2].done, (Ends{{1, 33829}, {2, 56894}}));
  EXPECT_EQ(chain[3].done, (Ends{{1, 33829}, {2, 62276}}));
  EXPECT_EQ(chain[4].done, (Ends{{2, 67658}}));
  EXPECT_EQ(chain[5].done, (Ends{{2, 67658}}));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(sys.npu(i).active_streams(), 0);
}

}  // namespace
}  // namespace orrery
