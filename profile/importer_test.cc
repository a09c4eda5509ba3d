#include "profile/importer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "et_feeder/trace.h"
#include "profile/et_import.h"
#include "profile/execution_trace.h"
#include "profile/import_common.h"
#include "profile/test_traces.h"

namespace orrery {
namespace profile {
namespace {

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// One rank of a 2-rank job: a compute stream (7) and an NCCL stream (40), launched by thread 1.
//   gemm1   [100, 110]  launched at  90 (the stream's first op)
//   gemm2   [110, 130]  launched at  95 (queued behind gemm1)
//   nccl    [135, 160]  launched at 105 (all-reduce of 1024 floats over both ranks)
//   gemm3   [200, 210]  launched at 190 (after gemm2 ended: host-bound)
//   memcpy  [215, 220]  launched at 211 (host-bound)
//   gemm4   [240, 245]  launched at 212; nothing on another stream explains its gap
KinetoText TwoStreamRank() {
  KinetoText k;
  k.rank = 0;
  k.world = 2;
  k.Kernel("gemm1", 7, 100, 10, 1);
  k.Kernel("gemm2", 7, 110, 20, 2);
  k.Kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 40, 135, 25, 3,
           ", \"Collective name\": \"allreduce\", \"In msg nelems\": 1024, \"dtype\": "
           "\"Float\", \"Process Group Ranks\": \"[0, 1]\"");
  k.Kernel("gemm3", 7, 200, 10, 4);
  k.Gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 7, 215, 5, 5);
  k.Kernel("gemm4", 7, 240, 5, 6);
  const double launches[] = {90, 95, 105, 190, 211, 212};
  for (int c = 1; c <= 6; ++c) k.Runtime("cudaLaunchKernel", 1, launches[c - 1], 2, c);
  return k;
}

struct Loaded {
  ImportResult result;
  et::Trace trace = et::Trace::Empty("");
};

Loaded Import(const KinetoText& k, const std::string& name, ImportOptions o = {}) {
  StatusOr<KinetoTrace> t = ParseKinetoTrace(k.Json(), name + ".json");
  EXPECT_TRUE(t.ok()) << t.status().message();
  std::vector<KinetoTrace> traces;
  traces.push_back(std::move(*t));
  o.output_prefix = Tmp(name);
  StatusOr<ImportResult> r =
      ImportKinetoTraces(traces, {k.rank < 0 ? 0 : k.rank}, k.world < 0 ? 1 : k.world, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  Loaded l;
  l.result = std::move(*r);
  StatusOr<et::Trace> tr = et::Trace::Load(et::RankTracePath(o.output_prefix, 0));
  EXPECT_TRUE(tr.ok()) << tr.status().message();
  l.trace = std::move(*tr);
  return l;
}

uint32_t ByName(const et::Trace& t, std::string_view name) {
  for (uint32_t i = 0; i < t.size(); ++i) {
    if (t.name(i) == name) return i;
  }
  ADD_FAILURE() << "no node " << name;
  return 0;
}

// The time the host chain releases node i: the sum of the durations of the chain's nodes up to
// and including its host parent (the chain starts at the first GPU op, 100 us).
int64_t ReleaseUs(const et::Trace& t, uint32_t i) {
  for (uint32_t p : t.parents(i)) {
    if (!t.is_cpu_op(p).value_or(false)) continue;
    int64_t sum = 0;
    for (uint32_t h = p;;) {
      sum += static_cast<int64_t>(t.duration_micros(h));
      uint32_t prev = UINT32_MAX;
      for (uint32_t q : t.parents(h)) {
        if (t.is_cpu_op(q).value_or(false)) prev = q;
      }
      if (prev == UINT32_MAX) break;
      h = prev;
    }
    return 100 + sum;
  }
  return -1;
}

bool DependsOn(const et::Trace& t, uint32_t child, uint32_t parent) {
  for (uint32_t p : t.parents(child)) {
    if (p == parent) return true;
  }
  return false;
}

TEST(Importer, GpuOpsRunInStreamOrderReleasedWhenTheProfileShowsTheHostLetThem) {
  const Loaded l = Import(TwoStreamRank(), "two_stream");
  const et::Trace& t = l.trace;
  const uint32_t g1 = ByName(t, "gemm1"), g2 = ByName(t, "gemm2"), g3 = ByName(t, "gemm3"),
                 g4 = ByName(t, "gemm4"), cp = ByName(t, "Memcpy DtoD (Device -> Device)"),
                 nccl = ByName(t, "ncclKernel_AllReduce_RING_LL_Sum_float");
  // Stream order.
  EXPECT_TRUE(DependsOn(t, g2, g1));
  EXPECT_TRUE(DependsOn(t, g3, g2));
  EXPECT_TRUE(DependsOn(t, cp, g3));
  EXPECT_TRUE(DependsOn(t, g4, cp));
  // Released by the host at their measured starts: a stream's first op, host-bound ops, and an
  // op whose gap nothing explains.
  EXPECT_EQ(ReleaseUs(t, g1), 100);
  EXPECT_EQ(ReleaseUs(t, nccl), 135);
  EXPECT_EQ(ReleaseUs(t, g3), 200);
  EXPECT_EQ(ReleaseUs(t, cp), 215);
  EXPECT_EQ(ReleaseUs(t, g4), 240);
  EXPECT_EQ(ReleaseUs(t, g2), -1);  // queued: its stream predecessor alone orders it
  // PyTorch's collective sync: the NCCL stream waits for the compute op launched before it.
  EXPECT_TRUE(DependsOn(t, nccl, g2));
  // Durations as measured, the collective's size and type from its arguments, world group.
  EXPECT_EQ(t.duration_micros(g2), 20u);
  EXPECT_EQ(t.type(nccl), et::NodeType::kCommColl);
  EXPECT_EQ(t.comm_type(nccl), et::CollectiveType::kAllReduce);
  EXPECT_EQ(t.comm_size(nccl), 4096u);
  EXPECT_FALSE(t.pg_name(nccl).has_value());
  EXPECT_EQ(t.is_cpu_op(nccl), false);
  EXPECT_EQ(t.is_cpu_op(g1), false);
  ASSERT_EQ(l.result.ranks.size(), 1u);
  const RankImport& r = l.result.ranks[0];
  EXPECT_EQ(r.compute, 4u);
  EXPECT_EQ(r.memory, 1u);
  EXPECT_EQ(r.collectives, 1u);
  EXPECT_EQ(r.collectives_by_type.at("ALL_REDUCE"), 1u);
  EXPECT_EQ(r.nodes, t.size());
}

// A kernel name that is not UTF-8 (a JSON parser that passes bytes through lets it in) is
// written with U+FFFD for its bad bytes: Chakra's strings must be UTF-8, and the trace written
// loads (Import checks that it does).
TEST(Importer, NamesThatAreNotUtf8AreWrittenAsValidUtf8) {
  KinetoText k;
  k.Kernel("gemm_\xff\xfe_tn", 7, 100, 10, 1);
  k.Runtime("cudaLaunchKernel", 1, 90, 2, 1);
  const Loaded l = Import(k, "not_utf8");
  ByName(l.trace, "gemm_\xef\xbf\xbd\xef\xbf\xbd_tn");
}

TEST(Importer, AGapThatEndsAsAnotherStreamsOpEndsWaitsForThatOp) {
  KinetoText k;
  k.rank = 0;
  k.world = 1;
  k.Kernel("a", 7, 100, 10, 1);
  k.Kernel("side", 20, 100, 50, 2);  // ends at 150
  k.Kernel("b", 7, 152, 10, 3);      // launched long before; starts 2 us after side ends
  k.Runtime("cudaLaunchKernel", 1, 90, 1, 1);
  k.Runtime("cudaLaunchKernel", 1, 91, 1, 2);
  k.Runtime("cudaLaunchKernel", 1, 92, 1, 3);
  const Loaded l = Import(k, "inferred");
  const et::Trace& t = l.trace;
  EXPECT_TRUE(DependsOn(t, ByName(t, "b"), ByName(t, "side")));
  EXPECT_EQ(l.result.ranks[0].inferred_deps, 1u);
}

// A profile whose times contradict a wait between streams: the all-reduce starts at 151, before
// the call that launched it (250), so PyTorch's collective sync would make it wait for the memcpy
// launched before that call, which ran at 182 and whose own gap ends as the all-reduce ends.
// Both waits would close a cycle; the contradicted one is left out, counted, and the trace loads
// (found by the kineto_trace fuzzer).
TEST(Importer, AWaitBetweenStreamsThatTheTimesContradictIsLeftOut) {
  KinetoText k;
  k.rank = 0;
  k.world = 2;
  k.Kernel("gemm", 7, 110, 40, 1);
  k.Kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 40, 151, 30, 2,
           ", \"Collective name\": \"allreduce\", \"In msg nelems\": 1024, \"dtype\": "
           "\"Float\", \"Process Group Ranks\": \"[0, 1]\"");
  k.Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 7, 182, 3, 3);
  k.Runtime("cudaLaunchKernel", 1, 104, 4, 1);
  k.Runtime("cudaLaunchKernel", 1, 250, 3, 2);
  k.Runtime("cudaMemcpyAsync", 1, 130, 2, 3);
  const Loaded l = Import(k, "contradicted");  // checks that the written trace loads
  const et::Trace& t = l.trace;
  const uint32_t nccl = ByName(t, "ncclKernel_AllReduce_RING_LL_Sum_float"),
                 cp = ByName(t, "Memcpy DtoH (Device -> Pinned)");
  EXPECT_FALSE(DependsOn(t, nccl, cp));
  EXPECT_TRUE(DependsOn(t, cp, nccl));  // the gap's inferred wait agrees with the times
  const RankImport& r = l.result.ranks[0];
  EXPECT_EQ(r.contradicted_waits, 1u);
  EXPECT_EQ(r.event_deps, 0u);
  EXPECT_EQ(r.inferred_deps, 1u);
}

// An execution trace whose call tree contradicts its ids: 'add' (id 5, thread 11) is a child of
// 'relu' (3), so the tree runs it before 'mm' (4); it reads the tensor 'mm' writes, a wait for
// another thread's writer that would point the other way and close a cycle. The waits for
// tensors are left out, with a note naming the two operators, and the trace loads (found by the
// execution_trace fuzzer).
TEST(Importer, AnExecutionTraceWhoseTreeContradictsItsIdsImportsWithoutACycle) {
  const std::string tensor = R"([9, 10, 0, 16, 4, "cuda:0"])";
  auto op = [&](int id, const std::string& name, int parent, int tid, const std::string& in,
                const std::string& out) {
    return "{\"id\": " + std::to_string(id) + ", \"name\": \"" + name +
           "\", \"ctrl_deps\": " + std::to_string(parent) + ", \"inputs\": {\"values\": [" + in +
           "], \"shapes\": [" + (in.empty() ? "" : "[4, 4]") + "], \"types\": [" +
           (in.empty() ? "" : "\"Tensor(float)\"") + "]}, \"outputs\": {\"values\": [" + out +
           "], \"shapes\": [" + (out.empty() ? "" : "[4, 4]") + "], \"types\": [" +
           (out.empty() ? "" : "\"Tensor(float)\"") +
           "]}, \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": " +
           std::to_string(id) +
           "}, {\"name\": \"tid\", \"type\": \"uint64\", \"value\": " + std::to_string(tid) + "}]}";
  };
  const std::string text =
      "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1, \"time\": \"\", \"start_ts\": 0, "
      "\"finish_ts\": 1, \"nodes\": [" +
      op(1, "[pytorch|profiler|execution_trace|process]", 1, 0, "", "") + ", " +
      op(2, "[pytorch|profiler|execution_trace|thread]", 1, 10, "", "") + ", " +
      op(3, "aten::relu", 2, 10, "", "") + ", " + op(4, "aten::mm", 2, 10, "", tensor) + ", " +
      op(5, "aten::add", 3, 11, tensor, "") + "]}";
  const std::string path = Tmp("tree_and_ids.json");
  std::ofstream(path) << text;
  StatusOr<ExecutionTrace> et = LoadExecutionTrace(path);
  ASSERT_TRUE(et.ok()) << et.status().message();
  std::vector<ExecutionTrace> ets;
  ets.push_back(std::move(*et));
  ImportOptions o;
  o.output_prefix = Tmp("tree_and_ids");
  StatusOr<ImportResult> r = ImportExecutionTraces(ets, {}, {0}, 1, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("node 4 'aten::mm' runs after node 5 'aten::add' in its call tree"),
            std::string::npos)
      << r->notes[0];
  StatusOr<et::Trace> t = et::Trace::Load(et::RankTracePath(o.output_prefix, 0));
  ASSERT_TRUE(t.ok()) << t.status().message();
  const uint32_t mm = ByName(*t, "aten::mm"), add = ByName(*t, "aten::add");
  EXPECT_TRUE(DependsOn(*t, mm, add));  // the tree's order
  EXPECT_FALSE(DependsOn(*t, add, mm));
}

TEST(Importer, SynchronisationsMakeTheHostWaitForTheGpu) {
  KinetoText k;
  k.rank = 0;
  k.world = 1;
  k.Kernel("long", 7, 100, 100, 1);  // ends at 200
  k.Kernel("after", 7, 230, 5, 2);   // launched after the sync returned
  k.Runtime("cudaLaunchKernel", 1, 95, 2, 1);
  k.Runtime("cudaDeviceSynchronize", 1, 110, 91, 9);  // waits until 201
  k.Runtime("cudaLaunchKernel", 1, 220, 2, 2);
  const Loaded l = Import(k, "sync");
  const et::Trace& t = l.trace;
  const uint32_t after = ByName(t, "after");
  // The host node that releases `after` waits for `long`, then runs 230 - 200 = 30 us.
  bool found = false;
  for (uint32_t p : t.parents(after)) {
    if (!t.is_cpu_op(p).value_or(false)) continue;
    EXPECT_TRUE(DependsOn(t, p, ByName(t, "long")));
    EXPECT_EQ(t.duration_micros(p), 30u);
    found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(l.result.ranks[0].sync_deps, 1u);
}

TEST(Importer, GroupsGoToAJsonFileOrAMetadataNode) {
  // Ranks 0..3 of a job of 4; an all-gather over ranks {0, 1}.
  std::vector<KinetoTrace> traces;
  for (int r = 0; r < 4; ++r) {
    KinetoText k;
    k.rank = r;
    k.world = 4;
    k.Kernel("ncclDevKernel_AllGather_RING_LL", 40, 100, 5, 1,
             std::string(", \"Collective name\": \"allgather\", \"In msg nelems\": 8, \"dtype\": "
                         "\"BFloat16\", \"Process Group Ranks\": \"") +
                 (r < 2 ? "[0, 1]" : "[2, 3]") + "\"");
    StatusOr<KinetoTrace> t = ParseKinetoTrace(k.Json(), "r" + std::to_string(r));
    ASSERT_TRUE(t.ok()) << t.status().message();
    traces.push_back(std::move(*t));
  }
  ImportOptions o;
  o.output_prefix = Tmp("groups/json");
  StatusOr<ImportResult> r = ImportKinetoTraces(traces, {0, 1, 2, 3}, 4, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->groups, (std::map<int, std::vector<int>>{{1, {0, 1}}, {2, {2, 3}}}));
  std::ifstream in(r->comm_groups_path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "{\"1\": [0, 1], \"2\": [2, 3]}\n");
  StatusOr<et::Trace> t3 = et::Trace::Load(et::RankTracePath(o.output_prefix, 3));
  ASSERT_TRUE(t3.ok()) << t3.status().message();
  const uint32_t ag = ByName(*t3, "ncclDevKernel_AllGather_RING_LL");
  EXPECT_EQ(t3->pg_name(ag), "2");
  EXPECT_EQ(t3->comm_size(ag), 16u);
  EXPECT_EQ(t3->comm_type(ag), et::CollectiveType::kAllGather);
  for (uint32_t i = 0; i < t3->size(); ++i) EXPECT_NE(t3->type(i), et::NodeType::kMetadata);

  o.output_prefix = Tmp("groups/metadata");
  o.groups = ImportOptions::Groups::kMetadata;
  r = ImportKinetoTraces(traces, {0, 1, 2, 3}, 4, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->comm_groups_path.empty());
  StatusOr<et::Trace> m = et::Trace::Load(et::RankTracePath(o.output_prefix, 0));
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->type(0), et::NodeType::kMetadata);
  EXPECT_EQ(
      m->metadata_inputs(0),
      "['[{\"pg_name\": \"1\", \"ranks\": [0, 1]}, {\"pg_name\": \"2\", \"ranks\": [2, 3]}]']");
}

// A group with ranks that are not imported runs over the whole job, its size scaled so that each
// rank moves the same bytes: an all-gather over g of D bytes each sends (g-1)D, over w (w-1)D'.
TEST(Importer, AGroupOfRanksNotImportedWidensToTheJobKeepingEachRanksBytes) {
  KinetoText k;
  k.rank = 0;
  k.world = 128;
  k.Kernel("ncclDevKernel_AllGather", 40, 100, 5, 1,
           ", \"Collective name\": \"allgather\", \"In msg nelems\": 127000, \"dtype\": \"Byte\", "
           "\"Process Group Ranks\": \"[0, 1, 2, 3]\"");
  k.Kernel("ncclDevKernel_AllReduce", 40, 200, 5, 2,
           ", \"Collective name\": \"allreduce\", \"In msg nelems\": 1016, \"dtype\": \"Float\", "
           "\"Process Group Ranks\": \"[0, 1, 2, 3]\"");
  const Loaded l = Import(k, "widened");
  const et::Trace& t = l.trace;
  EXPECT_EQ(t.comm_size(ByName(t, "ncclDevKernel_AllGather")), 127000u * 3 / 127);
  // all-reduce: 2(g-1)/g D = 2(w-1)/w D'  ->  D' = 4064 * (3/4) / (127/128) = 3072.
  EXPECT_EQ(t.comm_size(ByName(t, "ncclDevKernel_AllReduce")), 3072u);
  EXPECT_FALSE(t.pg_name(ByName(t, "ncclDevKernel_AllGather")).has_value());
  ASSERT_FALSE(l.result.notes.empty());
  EXPECT_NE(l.result.notes[0].find("runs over the whole simulated job"), std::string::npos);
}

TEST(Importer, ACollectiveWithoutTypeOrSizeIsAnErrorNamingTheKernel) {
  KinetoText k;
  k.rank = 0;
  k.world = 2;
  k.Kernel("ncclDevKernel_SendRecv", 40, 100, 5, 1);
  StatusOr<KinetoTrace> t = ParseKinetoTrace(k.Json(), "sr.json");
  ASSERT_TRUE(t.ok());
  std::vector<KinetoTrace> traces;
  traces.push_back(std::move(*t));
  ImportOptions o;
  o.output_prefix = Tmp("sendrecv");
  StatusOr<ImportResult> r = ImportKinetoTraces(traces, {0}, 2, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sr.json: NCCL kernel 'ncclDevKernel_SendRecv' at 100 us "
                                      "(correlation 1): its collective type is not recorded"),
            std::string::npos)
      << r.status().message();
}

// Rounding carried along a run keeps the sum within half a microsecond of the exact sum.
TEST(Importer, RoundingCarriesTheRemainder) {
  std::mt19937 rng(3);
  for (int run = 0; run < 100; ++run) {
    int64_t carry = 0, exact = 0, written = 0;
    for (int i = 0; i < 1000; ++i) {
      const int64_t d = static_cast<int64_t>(rng() % 5000);  // 0 to 5 us
      exact += d;
      written += RoundCarrying(d, &carry) * 1000;
      ASSERT_LE(std::llabs(written - exact), 500) << "after " << i << " durations";
    }
  }
}

}  // namespace
}  // namespace profile
}  // namespace orrery
