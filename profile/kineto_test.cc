#include "profile/kineto.h"

#include <gtest/gtest.h>

#include <vector>

#include "profile/job_check.h"
#include "profile/test_traces.h"

namespace orrery {
namespace profile {
namespace {

TEST(Kineto, KeepsGpuOpsRuntimeCallsCpuOpsAndCollectiveArguments) {
  KinetoText k;
  k.rank = 1;
  k.world = 2;
  k.extra_top = "\"deviceProperties\": [{\"name\": \"NVIDIA A100\"}], ";
  k.Kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 40, 200.5, 10.25, 7,
           ", \"Collective name\": \"allreduce\", \"In msg nelems\": 1024, \"dtype\": "
           "\"Float\", \"Process Group Ranks\": \"[0, 1]\"");
  k.Kernel("gemm", 7, 100, 50, 5);
  k.Gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 7, 151, 2, 6, ", \"bytes\": 4096");
  k.Runtime("cudaLaunchKernel", 1, 95, 3, 5);
  k.Runtime("cudaStreamSynchronize", 1, 300, 1, 9);
  k.CpuOp("record_param_comms", 1, 99, 20,
          "\"Collective name\": \"allreduce\", \"Input Dims\": [[1024], []], \"Input type\": "
          "[\"float\", \"\"]");
  // An event whose args come before its cat, and one of a category not kept.
  k.events.push_back(
      "{\"args\": {\"correlation\": 11, \"stream\": 9}, \"ph\": \"X\", \"cat\": \"kernel\", "
      "\"name\": \"late\", \"pid\": 0, \"tid\": 9, \"ts\": 400, \"dur\": 1}");
  k.events.push_back("{\"ph\": \"f\", \"cat\": \"ac2g\", \"id\": 5, \"ts\": 96, \"pid\": 100}");
  StatusOr<KinetoTrace> t = ParseKinetoTrace(k.Json(), "k.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->rank, 1);
  EXPECT_EQ(t->world_size, 2);
  EXPECT_EQ(t->device_name, "NVIDIA A100");
  EXPECT_EQ(t->events, 8u);
  ASSERT_EQ(t->gpu.size(), 4u);  // by start: gemm, memcpy, nccl, late
  EXPECT_EQ(t->names[t->gpu[0].name], "gemm");
  EXPECT_EQ(t->gpu[0].start_ns, 100000);
  EXPECT_EQ(t->gpu[0].end_ns, 150000);
  EXPECT_EQ(t->gpu[1].kind, GpuKind::kMemcpy);
  EXPECT_EQ(t->gpu[1].bytes, 4096);
  EXPECT_TRUE(t->gpu[2].nccl);
  EXPECT_EQ(t->gpu[2].start_ns, 200500);
  EXPECT_EQ(t->gpu[2].end_ns, 210750);
  ASSERT_GE(t->gpu[2].comm, 0);
  const CommArgs& c = t->comms[static_cast<size_t>(t->gpu[2].comm)];
  EXPECT_EQ(c.collective, "allreduce");
  EXPECT_EQ(c.in_nelems, 1024);
  EXPECT_EQ(c.dtype, "Float");
  EXPECT_EQ(c.ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(t->names[t->gpu[3].name], "late");
  EXPECT_EQ(t->gpu[3].stream, 9);
  ASSERT_EQ(t->runtime.size(), 2u);
  EXPECT_EQ(t->runtime[0].kind, RuntimeKind::kLaunch);
  EXPECT_EQ(t->runtime[1].kind, RuntimeKind::kSync);
  ASSERT_EQ(t->cpu.size(), 1u);
  const CommArgs& op = t->comms[static_cast<size_t>(t->cpu[0].comm)];
  EXPECT_EQ(op.input_elems, (std::vector<int64_t>{1024, -1}));
  EXPECT_EQ(op.input_types[0], "float");
}

TEST(Kineto, JsonThatIsNoTraceIsRefusedSayingWhatItLooksLike) {
  StatusOr<KinetoTrace> et =
      ParseKinetoTrace(R"({"schema": "1.0.1", "pid": 1, "nodes": []})", "et.json");
  ASSERT_FALSE(et.ok());
  EXPECT_EQ(et.status().message(),
            "et.json: JSON, but not a trace: it has no 'traceEvents' (its keys: schema, pid, "
            "nodes); it looks like a PyTorch execution trace: give it with --et");
  StatusOr<KinetoTrace> other = ParseKinetoTrace(R"({"a": 1})", "a.json");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("expected a PyTorch profile"), std::string::npos);
  StatusOr<KinetoTrace> number = ParseKinetoTrace("42", "n.json");
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.status().message().find("not a JSON object or array"), std::string::npos);
  StatusOr<KinetoTrace> empty = ParseKinetoTrace("  ", "e.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("e.json: empty file"), std::string::npos);
}

TEST(Kineto, BadEventsAreNamed) {
  KinetoText k;
  k.events.push_back(
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": -3}");
  StatusOr<KinetoTrace> t = ParseKinetoTrace(k.Json(), "k.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("event 'k' has a negative 'dur' (-3000 ns)"),
            std::string::npos)
      << t.status().message();
  KinetoText n;
  n.events.push_back("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"dur\": 3}");
  t = ParseKinetoTrace(n.Json(), "k.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("has no 'ts'"), std::string::npos);
  t = ParseKinetoTrace("{\"traceEvents\": [1, 2]}", "k.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("is not an object (a trace event)"), std::string::npos);
}

TEST(Kineto, DtypeSizesFollowPyTorchsSpellings) {
  EXPECT_EQ(DtypeBytes("Float"), 4);
  EXPECT_EQ(DtypeBytes("BFloat16"), 2);
  EXPECT_EQ(DtypeBytes("c10::Half"), 2);
  EXPECT_EQ(DtypeBytes("Long"), 8);
  EXPECT_EQ(DtypeBytes("unsigned char"), 1);
  EXPECT_EQ(DtypeBytes("signed char"), 1);
  EXPECT_EQ(DtypeBytes("Int"), 4);
  EXPECT_FALSE(DtypeBytes("Quaternion"));
}

std::vector<KinetoTrace> Parse(const std::vector<KinetoText>& texts) {
  std::vector<KinetoTrace> out;
  for (size_t i = 0; i < texts.size(); ++i) {
    StatusOr<KinetoTrace> t = ParseKinetoTrace(texts[i].Json(), "r" + std::to_string(i) + ".json");
    EXPECT_TRUE(t.ok()) << t.status().message();
    if (t.ok()) out.push_back(std::move(*t));
  }
  return out;
}

StatusOr<std::vector<int>> Ranks(const std::vector<KinetoTrace>& traces, bool import) {
  std::vector<const KinetoTrace*> view;
  for (const KinetoTrace& t : traces) view.push_back(&t);
  StatusOr<std::vector<int>> r = RanksOf(view);
  if (!r.ok() || !import) return r;
  if (Status s = CheckNoRankMissing(view, *r); !s.ok()) return s;
  return r;
}

KinetoText Rank(int rank, int world, double start_us = 100) {
  KinetoText k;
  k.rank = rank;
  k.world = world;
  k.Kernel("gemm", 7, start_us, 1, 1);
  return k;
}

TEST(JobCheck, RanksComeFromDistributedInfoElseTheOrder) {
  StatusOr<std::vector<int>> r = Ranks(Parse({Rank(1, 2), Rank(0, 2)}), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<int>{1, 0}));
  KinetoText a = Rank(0, 2), b = Rank(1, 2);
  a.rank = b.rank = -1;
  a.world = b.world = -1;
  r = Ranks(Parse({a, b}), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<int>{0, 1}));
}

TEST(JobCheck, MixedJobsDuplicateAndMissingRanksAreRefused) {
  StatusOr<std::vector<int>> r = Ranks(Parse({Rank(0, 2), Rank(1, 128)}), false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "traces of different jobs: r0.json is a rank of a job of 2 ranks, r1.json of 128 "
            "(distributedInfo.world_size); give the profiles of one run");
  r = Ranks(Parse({Rank(0, 4), Rank(1, 4, 100 + 7200e6)}), false);  // two hours later
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "traces of different jobs: r1.json begins 2.0 hours after r0.json (the ranks of one "
            "run are profiled together); give the profiles of one run");
  r = Ranks(Parse({Rank(1, 4), Rank(1, 4)}), false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "rank 1 is given twice: r0.json and r1.json (distributedInfo.rank); give each rank's "
            "profile once");
  r = Ranks(Parse({Rank(5, 4)}), false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("rank 5 is outside its job of 4 ranks"), std::string::npos);
  r = Ranks(Parse({Rank(0, 8), Rank(2, 8), Rank(5, 8)}), true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "ranks missing: the profiles are ranks [0, 2, 5] of a job of 8 ranks, without ranks "
            "[1, 3, 4]; a Chakra trace set is ranks 0..N-1 without a gap: give the missing "
            "profiles, or import ranks 0..N-1 only, or one rank alone (run it with "
            "--replicate-trace for the whole job)");
  KinetoText unnamed = Rank(0, 2);
  unnamed.rank = -1;
  r = Ranks(Parse({Rank(1, 2), unnamed}), false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("r1.json does not say its rank"), std::string::npos);
  // One rank alone may be any rank (it stands for its job under --replicate-trace).
  r = Ranks(Parse({Rank(5, 8)}), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

}  // namespace
}  // namespace profile
}  // namespace orrery
