// Scheduling policies, with expected times derived by hand from system/README.md over a test
// network that delivers every message after exactly `latency + size / bandwidth` (whole ns) on
// the lowest dimension its ends differ in: no contention, so a phase takes the same time whatever
// else runs, and each schedule below is a sum of phase times.
//
// Ring phase times (n NPUs, input D, e = 10 ns hand-off, r(m) = 3 * floor(m / 1600)):
//   all-reduce     AR(D) = 2(n-1)(e + t(D/n)) + (n-1) r(D/n) + e
//   reduce-scatter RS(D) = (n-1)(e + t(D/n) + r(D/n)) + e
//   all-gather     AG(D) = (n-1)(e + t(D)) + e
#include "system/scheduling.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "system/collective_engine.h"
#include "system/test_network.h"

namespace orrery {
namespace {

// When each collective (by token) finished on one NPU, in ns.
struct DoneByToken : CollectiveListener {
  Simulation* sim = nullptr;
  std::map<uint64_t, int64_t> at;
  void OnCollectiveDone(uint64_t token) override { at[token] = sim->now().WholeNs(); }
};

constexpr int64_t kE = 10;
int64_t T(const Dimension& d, uint64_t bytes) {
  return (d.latency + Bytes(bytes) / d.bandwidth).WholeNs();
}
int64_t R(uint64_t bytes) { return 3 * static_cast<int64_t>(static_cast<double>(bytes) / 1600); }
int64_t AR(const Dimension& d, uint64_t D) {
  const int64_t n = d.npus;
  const uint64_t m = D / n;
  return 2 * (n - 1) * (kE + T(d, m)) + (n - 1) * R(m) + kE;
}
int64_t RS(const Dimension& d, uint64_t D) {
  const int64_t n = d.npus;
  const uint64_t m = D / n;
  return (n - 1) * (kE + T(d, m) + R(m)) + kE;
}
int64_t AG(const Dimension& d, uint64_t D) { return (d.npus - 1) * (kE + T(d, D)) + kE; }

SystemParams Params(int splits, bool local_bw_aware, int dims) {
  SystemParams p;
  p.preferred_dataset_splits = splits;
  p.active_chunks_per_dimension = 1;
  p.local_bw_aware = local_bw_aware;
  p.endpoint_delay_ns = 10;
  p.local_mem_bw_bytes_per_ns = 1600;
  for (auto& impl : p.impl) impl.assign(dims, AlgorithmSpec{AlgorithmKind::kRing});
  return p;
}

struct Coll {
  CollectiveType type = CollectiveType::kAllReduce;
  uint64_t size = 0;
  int priority = 0;  // EXPLICIT
};

// Starts `colls` in order at time 0 on every NPU (token = position) and returns NPU 0's finish
// times; checks that every NPU agrees (the schedule is symmetric).
std::vector<int64_t> RunAll(const Topology& topo, const SystemParams& params,
                            const std::vector<Coll>& colls) {
  Simulation sim;
  FixedDelayNetwork net(sim, topo);
  SystemLayer sys(sim, net, params);
  std::vector<DoneByToken> done(topo.num_npus());
  for (int i = 0; i < topo.num_npus(); ++i) {
    done[i].sim = &sim;
    for (size_t c = 0; c < colls.size(); ++c) {
      CollectiveRequest req;
      req.type = colls[c].type;
      req.size = colls[c].size;
      req.explicit_priority = colls[c].priority;
      EXPECT_TRUE(sys.npu(i).StartCollective(req, &done[i], c).ok());
    }
  }
  sim.Run();
  std::vector<int64_t> out;
  for (size_t c = 0; c < colls.size(); ++c) {
    EXPECT_EQ(done[0].at.count(c), 1u) << "collective " << c << " did not finish";
    out.push_back(done[0].at.count(c) ? done[0].at[c] : -1);
    for (int i = 1; i < topo.num_npus(); ++i) EXPECT_EQ(done[i].at[c], out.back()) << "NPU " << i;
  }
  return out;
}

TEST(ServedBeforeTest, EachPolicyComparesItsKeyThenPriority) {
  const WaitingStream big_old{/*priority=*/5, /*phase_bytes=*/4096, /*phases_left=*/1};
  const WaitingStream small_new{/*priority=*/1, /*phase_bytes=*/512, /*phases_left=*/3};
  EXPECT_TRUE(ServedBefore(IntraDimensionPolicy::kFifo, big_old, small_new));
  EXPECT_FALSE(ServedBefore(IntraDimensionPolicy::kFifo, small_new, big_old));
  EXPECT_TRUE(ServedBefore(IntraDimensionPolicy::kSmallestFirst, small_new, big_old));
  EXPECT_FALSE(ServedBefore(IntraDimensionPolicy::kSmallestFirst, big_old, small_new));
  EXPECT_TRUE(ServedBefore(IntraDimensionPolicy::kLessRemainingPhaseFirst, big_old, small_new));
  // Equal keys fall back to the priority; equal everything keeps arrival order.
  const WaitingStream same_size_high{9, 4096, 1};
  EXPECT_TRUE(ServedBefore(IntraDimensionPolicy::kSmallestFirst, same_size_high, big_old));
  EXPECT_FALSE(ServedBefore(IntraDimensionPolicy::kSmallestFirst, big_old, big_old));
}

// 1-D ring of 4, two all-reduces A then B of 2 chunks each (active-chunks 1): a chunk of
// 512 KiB takes c = AR(512 KiB). Chunk A0 starts at once; the policy orders A1, B0, B1.
class PriorityTest : public ::testing::Test {
 protected:
  Topology topo{{RingDimension(4, 50, 500)}};
  const int64_t c = AR(topo.dims[0], 512 * 1024);
};

TEST_F(PriorityTest, FifoRunsTheOlderCollectiveFirst) {
  SystemParams p = Params(2, false, 1);
  p.scheduling = SchedulingPolicy::kFifo;
  auto t = RunAll(topo, p,
                  {{CollectiveType::kAllReduce, 1 << 20}, {CollectiveType::kAllReduce, 1 << 20}});
  EXPECT_EQ(t[0], 2 * c);  // A0, A1
  EXPECT_EQ(t[1], 4 * c);  // then B0, B1
}

TEST_F(PriorityTest, LifoLetsTheNewerCollectivePassWaitingChunks) {
  SystemParams p = Params(2, false, 1);
  p.scheduling = SchedulingPolicy::kLifo;
  auto t = RunAll(topo, p,
                  {{CollectiveType::kAllReduce, 1 << 20}, {CollectiveType::kAllReduce, 1 << 20}});
  EXPECT_EQ(t[1], 3 * c);  // A0 (already running), B0, B1
  EXPECT_EQ(t[0], 4 * c);  // A1 last
}

TEST_F(PriorityTest, ExplicitFollowsCommPriority) {
  SystemParams p = Params(2, false, 1);
  p.scheduling = SchedulingPolicy::kExplicit;
  auto high_second =
      RunAll(topo, p,
             {{CollectiveType::kAllReduce, 1 << 20, 1}, {CollectiveType::kAllReduce, 1 << 20, 7}});
  EXPECT_EQ(high_second[1], 3 * c);
  EXPECT_EQ(high_second[0], 4 * c);
  auto high_first =
      RunAll(topo, p,
             {{CollectiveType::kAllReduce, 1 << 20, 7}, {CollectiveType::kAllReduce, 1 << 20, 1}});
  EXPECT_EQ(high_first[0], 2 * c);
  EXPECT_EQ(high_first[1], 4 * c);
}

TEST(IntraDimensionTest, SmallestFirstServesASmallCollectiveBeforeABigOne) {
  // FIFO priorities; A = 1 MiB (2 chunks of a = AR(512 KiB)), B = 128 KiB (2 chunks of
  // b = AR(64 KiB)). FIFO: A0 A1 B0 B1. smallestFirst: A0 runs, then B0 B1 (smaller) pass A1.
  Topology topo{{RingDimension(4, 50, 500)}};
  const int64_t a = AR(topo.dims[0], 512 * 1024), b = AR(topo.dims[0], 64 * 1024);
  SystemParams p = Params(2, false, 1);
  p.scheduling = SchedulingPolicy::kFifo;
  const std::vector<Coll> colls = {{CollectiveType::kAllReduce, 1 << 20},
                                   {CollectiveType::kAllReduce, 128 * 1024}};
  auto fifo = RunAll(topo, p, colls);
  EXPECT_EQ(fifo[0], 2 * a);
  EXPECT_EQ(fifo[1], 2 * a + 2 * b);
  p.intra_dimension = IntraDimensionPolicy::kSmallestFirst;
  auto smallest = RunAll(topo, p, colls);
  EXPECT_EQ(smallest[1], a + 2 * b);
  EXPECT_EQ(smallest[0], 2 * a + 2 * b);
}

TEST(IntraDimensionTest, LessRemainingPhaseFirstFinishesStartedCollectives) {
  // 4 x 2 machine, dim 0 slow (10 GiB/s), dim 1 fast (200 GiB/s); localBWAware, one queue per
  // dimension, one chunk per collective (1 MiB), LIFO priorities: A < B < C.
  // Each chunk: RS on dim 0 (a = RS(1 MiB)), AR on dim 1 (b = AR(256 KiB)), AG on dim 0
  // (g = AG(256 KiB)); here b < g and b < a.
  Topology topo{{RingDimension(4, 10, 500), RingDimension(2, 200, 100)}};
  const uint64_t D = 1 << 20;
  const int64_t a = RS(topo.dims[0], D), b = AR(topo.dims[1], D / 4), g = AG(topo.dims[0], D / 4);
  ASSERT_LT(b, g);
  ASSERT_LT(b, a);
  SystemParams p = Params(1, true, 2);
  p.scheduling = SchedulingPolicy::kLifo;
  const std::vector<Coll> colls(3, Coll{CollectiveType::kAllReduce, D});
  // FIFO (by priority): dim 0 runs A.RS [0,a], C.RS [a,2a], B.RS [2a,3a]; the AG phases arrive
  // while a reduce-scatter runs and wait behind newer collectives: C.AG [3a,3a+g],
  // B.AG [3a+g,3a+2g], A.AG [3a+2g,3a+3g].
  auto fifo = RunAll(topo, p, colls);
  EXPECT_EQ(fifo[0], 3 * a + 3 * g);
  EXPECT_EQ(fifo[1], 3 * a + 2 * g);
  EXPECT_EQ(fifo[2], 3 * a + g);
  // lessRemainingPhaseFirst: an AG (1 phase left) passes a waiting RS (3 left): A.RS [0,a],
  // C.RS [a,2a], A.AG [2a,2a+g], C.AG [2a+g,2a+2g], then B: RS, AR, AG.
  p.intra_dimension = IntraDimensionPolicy::kLessRemainingPhaseFirst;
  auto lrpf = RunAll(topo, p, colls);
  EXPECT_EQ(lrpf[0], 2 * a + g);
  EXPECT_EQ(lrpf[2], 2 * a + 2 * g);
  EXPECT_EQ(lrpf[1], 2 * a + 2 * g + a + b + g);
}

TEST(InterDimensionSchedulerTest, AscendingKeepsTheDimensionOrder) {
  InterDimensionScheduler s(InterDimensionPolicy::kAscending, {1.0, 1.0, 1.0});
  EXPECT_EQ(s.NextOrder(CollectiveType::kAllReduce, false, 1024, {0, 1, 2}, {2, 2, 2}),
            (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.NextOrder(CollectiveType::kAllGather, false, 1024, {0, 2}, {2, 2}),
            (std::vector<int>{2, 0}));
}

TEST(InterDimensionSchedulerTest, RoundRobinRotatesPerChunk) {
  InterDimensionScheduler s(InterDimensionPolicy::kRoundRobin, {1.0, 1.0, 1.0});
  const std::vector<int> active = {0, 1, 2}, sizes = {2, 2, 2};
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 64, active, sizes),
            (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 64, active, sizes),
            (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 64, active, sizes),
            (std::vector<int>{2, 0, 1}));
  // A chunk on one dimension does not advance the rotation.
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 64, {1}, {2}),
            (std::vector<int>{1}));
  // All-gather: the descending order, rotated (4th multi-dimension chunk: rotation 0).
  EXPECT_EQ(s.NextOrder(CollectiveType::kAllGather, false, 64, active, sizes),
            (std::vector<int>{2, 1, 0}));
}

TEST(InterDimensionSchedulerTest, OfflineGreedyGivesTheBiggestShareToTheLeastLoaded) {
  // Two dimensions of 4 NPUs; dim 0 costs 4 ns/B, dim 1 1 ns/B. Reduce-scatter chunks of 1024 B:
  // the first dimension sends 1024 * 3/4 = 768 B, the second 256 * 3/4 = 192 B.
  InterDimensionScheduler s(InterDimensionPolicy::kOfflineGreedy, {4.0, 1.0});
  const std::vector<int> active = {0, 1}, sizes = {4, 4};
  // Chunk 1: loads 0, 0 -> (0, 1); load = (768 * 4, 192 * 1) = (3072, 192).
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 1024, active, sizes),
            (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(s.load()[0], 3072);
  EXPECT_DOUBLE_EQ(s.load()[1], 192);
  // Chunk 2: dim 1 less loaded -> (1, 0); load = (3072 + 192 * 4, 192 + 768) = (3840, 960).
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 1024, active, sizes),
            (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(s.load()[0], 3840);
  EXPECT_DOUBLE_EQ(s.load()[1], 960);
  // Chunks 3, 4: dim 1 stays less loaded (1728, then 2496 < 4608, 5376) -> (1, 0) both times,
  // where roundRobin would alternate.
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 1024, active, sizes),
            (std::vector<int>{1, 0}));
  EXPECT_EQ(s.NextOrder(CollectiveType::kReduceScatter, false, 1024, active, sizes),
            (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(s.load()[0], 3840 + 2 * 768);
  EXPECT_DOUBLE_EQ(s.load()[1], 960 + 2 * 768);
  // An all-gather puts the least-loaded dimension last (it carries p times the input there):
  // loads (5376, 2496) -> (0, 1).
  EXPECT_EQ(s.NextOrder(CollectiveType::kAllGather, false, 256, active, sizes),
            (std::vector<int>{0, 1}));
}

// 4 x 4 machine, dim 0 slow (10 GiB/s), dim 1 fast (100 GiB/s); a reduce-scatter of 2 MiB in
// two chunks of C = 1 MiB, one queue per dimension. Phase times: A0 = RS on dim 0 of C,
// A1 = RS on dim 0 of C/4, B0 = RS on dim 1 of C, B1 = RS on dim 1 of C/4.
class InterDimensionRunTest : public ::testing::Test {
 protected:
  Topology topo{{RingDimension(4, 10, 500), RingDimension(4, 100, 500)}};
  const uint64_t C = 1 << 20;
  const int64_t A0 = RS(topo.dims[0], C), A1 = RS(topo.dims[0], C / 4);
  const int64_t B0 = RS(topo.dims[1], C), B1 = RS(topo.dims[1], C / 4);
  const std::vector<Coll> colls = {{CollectiveType::kReduceScatter, 2 * C}};
};

TEST_F(InterDimensionRunTest, AscendingQueuesBothChunksOnTheSlowDimension) {
  // c0: dim 0 [0, A0], dim 1 [A0, A0+B1]; c1: dim 0 [A0, 2A0], dim 1 [2A0, 2A0+B1].
  ASSERT_LT(B1, A0);
  SystemParams p = Params(2, false, 2);
  EXPECT_EQ(RunAll(topo, p, colls)[0], 2 * A0 + B1);
}

TEST_F(InterDimensionRunTest, RoundRobinAndOfflineGreedyStartTheSecondChunkOnTheFastDimension) {
  // c0 order (0, 1), c1 order (1, 0): dim 0 runs c0 [0, A0] while dim 1 runs c1 [0, B0]; at A0
  // c1 takes dim 0 with C/4 [A0, A0+A1] and c0 dim 1 with C/4 [A0, A0+B1].
  ASSERT_LT(B0, A0);
  ASSERT_LT(B1, A1);
  for (InterDimensionPolicy policy :
       {InterDimensionPolicy::kRoundRobin, InterDimensionPolicy::kOfflineGreedy}) {
    SystemParams p = Params(2, false, 2);
    p.inter_dimension = policy;
    EXPECT_EQ(RunAll(topo, p, colls)[0], A0 + A1);
  }
  EXPECT_LT(A0 + A1, 2 * A0 + B1);  // better than ascending
}

TEST_F(InterDimensionRunTest, FourChunksOfflineGreedyKeepsFeedingTheFastDimension) {
  // A reduce-scatter of 4 MiB in four chunks of C. Orders: roundRobin (0,1), (1,0), (0,1),
  // (1,0); offlineGreedy (0,1), then (1,0) three times (dimension 1 stays the less loaded, see
  // OfflineGreedyGivesTheBiggestShareToTheLeastLoaded).
  ASSERT_LT(3 * B0, A0);
  ASSERT_LT(B1, A1);
  const std::vector<Coll> four = {{CollectiveType::kReduceScatter, 4 * C}};
  SystemParams p = Params(4, false, 2);
  // Ascending: dimension 0 runs the four full chunks back to back, the last then crosses dim 1.
  EXPECT_EQ(RunAll(topo, p, four)[0], 4 * A0 + B1);
  // roundRobin: dim 0 runs c0 [0, A0], then c2 (full size, queued before c1 and c3 came back
  // from dim 1) [A0, 2A0], then c1 and c3 with C/4: 2A0 + 2A1.
  p.inter_dimension = InterDimensionPolicy::kRoundRobin;
  EXPECT_EQ(RunAll(topo, p, four)[0], 2 * A0 + 2 * A1);
  // offlineGreedy: dim 1 runs c1, c2, c3 (3 B0 < A0) while dim 0 runs c0; then dim 0 reduces
  // the three quarter-size remainders: A0 + 3A1.
  p.inter_dimension = InterDimensionPolicy::kOfflineGreedy;
  EXPECT_EQ(RunAll(topo, p, four)[0], A0 + 3 * A1);
}

TEST_F(InterDimensionRunTest, TwoDimensionalAllReduceBeatsAscending) {
  // localBWAware all-reduce of 2 MiB in two chunks of C; one queue per dimension serves both
  // halves. X0 / X1 = all-reduce of C/4 on dim 0 / 1, G0 = all-gather of C/4 on dim 0.
  const int64_t X0 = AR(topo.dims[0], C / 4), X1 = AR(topo.dims[1], C / 4);
  const int64_t G0 = AG(topo.dims[0], C / 4);
  ASSERT_LT(B0, A0);
  ASSERT_LT(X1, X0);
  ASSERT_LT(X1, A0);
  ASSERT_LT(X1, G0);
  const std::vector<Coll> ar = {{CollectiveType::kAllReduce, 2 * C}};
  // Ascending: both chunks RS(0), AR(1), AG(0). Dim 0: c0.RS [0, A0], c1.RS [A0, 2A0]; c0.AR on
  // dim 1 ends at A0+X1 but c0.AG waits for dim 0 until 2A0 [2A0, 2A0+G0]; c1.AR [2A0, 2A0+X1],
  // c1.AG [2A0+G0, 2A0+2G0].
  SystemParams p = Params(2, true, 2);
  EXPECT_EQ(RunAll(topo, p, ar)[0], 2 * A0 + 2 * G0);
  // roundRobin / offlineGreedy: c1 goes RS(1), AR(0), AG(1). Dim 0: c0.RS [0, A0]; dim 1:
  // c1.RS [0, B0]. At A0: c0.AR on dim 1 [A0, A0+X1], c1.AR on dim 0 [A0, A0+X0]; then
  // c0.AG on dim 0 [A0+X0, A0+X0+G0] and c1.AG on dim 1 (shorter).
  for (InterDimensionPolicy policy :
       {InterDimensionPolicy::kRoundRobin, InterDimensionPolicy::kOfflineGreedy}) {
    p.inter_dimension = policy;
    EXPECT_EQ(RunAll(topo, p, ar)[0], A0 + X0 + G0);
  }
  EXPECT_LT(A0 + X0 + G0, 2 * A0 + 2 * G0);
}

}  // namespace
}  // namespace orrery
