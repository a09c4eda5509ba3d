// --jobs end to end: different traces sharing one machine, each on its own NPUs, must give
// exactly what one trace written out for the whole machine gives (each job's sends renumbered
// to its NPUs, its world and groups written as comm groups, idle NPUs running nothing), on
// every backend; and every way to get the jobs file wrong is a named error.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "config/test_files.h"
#include "et_feeder/writer.h"
#include "report/outputs.h"
#include "runner/run.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

constexpr const char* kSystem = kRingTestSystem;

constexpr int kNpus = 8;

// Writes the system and an 8-NPU ring for case `name`; the options run nothing yet.
RunOptions Machine(const std::string& name) {
  RunOptions o;
  o.system_config = TestTmp(name) + ".system.json";
  o.network_config = TestTmp(name) + ".net.yml";
  std::ofstream(o.system_config) << kSystem;
  std::ofstream(o.network_config) << "topology: [ Ring ]\nnpus_count: [ " << kNpus
                                  << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  return o;
}

Node WithGroup(Node n, const std::string& pg) {
  et::SetStringAttr(&n, "pg_name", pg);
  return n;
}

// Job "train", rank r of 4: forward compute (5 + r us), a hand-off from rank 0 to 1 and 2 to 3,
// a tensor-parallel all-gather in group 1 (ranks 0 and 1), the gradient all-reduce over its
// world, an optimizer step. `npu` maps its ranks to NPUs and `world`/`tp` name its groups when
// it is written out for the whole machine ("" and "1" as a job).
std::vector<Node> TrainRank(int r, const std::vector<int>& npu, const std::string& world,
                            const std::string& tp) {
  std::vector<Node> n = {et::MakeCompNode(1, "fwd", 5 + static_cast<uint64_t>(r))};
  if (r % 2 == 0) {
    n.push_back(et::MakeSendNode(2, npu[r + 1], 1 << 18, /*tag=*/3, {1}));
  } else {
    n.push_back(et::MakeRecvNode(2, npu[r - 1], 1 << 18, /*tag=*/3, {1}));
  }
  Node all_reduce = et::MakeCollNode(4, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {3});
  if (!world.empty()) all_reduce = WithGroup(all_reduce, world);
  if (r < 2) {
    n.push_back(
        WithGroup(et::MakeCollNode(3, "tp_gather", ChakraProtoMsg::ALL_GATHER, 1 << 18, {2}), tp));
  } else {
    n.push_back(et::MakeCompNode(3, "wait", 1, {2}));
  }
  n.push_back(all_reduce);
  n.push_back(et::MakeCompNode(5, "optimizer", 7, {4}));
  return n;
}

// Job "serve", rank r of 2: compute, then an all-reduce over its world, twice.
std::vector<Node> ServeRank(int r, const std::string& world) {
  std::vector<Node> n;
  for (int step = 0; step < 2; ++step) {
    const uint64_t id = 1 + 2 * static_cast<uint64_t>(step);
    const uint64_t micros = 3 + static_cast<uint64_t>(r);
    n.push_back(step == 0 ? et::MakeCompNode(id, "decode", micros)
                          : et::MakeCompNode(id, "decode", micros, {id - 1}));
    Node ar = et::MakeCollNode(id + 1, "logits", ChakraProtoMsg::ALL_REDUCE, 1 << 19, {id});
    if (!world.empty()) ar = WithGroup(ar, world);
    n.push_back(ar);
  }
  return n;
}

// The two jobs as --jobs runs them: train on NPUs 6, 4, 7, 5 (rank r on the r-th), serve on the
// lowest free NPUs (0, 1); NPUs 2 and 3 idle.
RunOptions TwoJobs(const std::string& name) {
  RunOptions o = Machine(name);
  std::vector<std::vector<Node>> train, serve;
  for (int r = 0; r < 4; ++r) train.push_back(TrainRank(r, {0, 1, 2, 3}, "", "1"));
  for (int r = 0; r < 2; ++r) serve.push_back(ServeRank(r, ""));
  EXPECT_TRUE(et::WriteRankFiles(TestTmp(name) + ".train", train).ok());
  EXPECT_TRUE(et::WriteRankFiles(TestTmp(name) + ".serve", serve).ok());
  WriteTestFile(name + ".train_groups.json", R"({"1": [0, 1]})");
  // Paths in the jobs file are relative to it.
  o.jobs = WriteTestFile(name + ".jobs.yaml",
                         "jobs:\n"
                         "  - name: train\n"
                         "    workload: " +
                             name +
                             ".train\n"
                             "    npus: [6, 4, 7, 5]\n"
                             "    comm-groups: " +
                             name +
                             ".train_groups.json\n"
                             "  - name: serve\n"
                             "    workload: " +
                             name + ".serve\n");
  o.comm_group_config = "empty";
  return o;
}

// The same two jobs written out as one 8-NPU trace.
RunOptions WrittenOut(const std::string& name) {
  RunOptions o = Machine(name);
  const std::vector<int> train_npus = {6, 4, 7, 5};
  std::vector<std::vector<Node>> all(kNpus);
  for (int r = 0; r < 4; ++r) all[train_npus[r]] = TrainRank(r, train_npus, "2", "3");
  for (int r = 0; r < 2; ++r) all[r] = ServeRank(r, "4");
  EXPECT_TRUE(et::WriteRankFiles(TestTmp(name), all).ok());
  o.workload = TestTmp(name);
  o.comm_group_config =
      WriteTestFile(name + ".groups.json", R"({"2": [6, 4, 7, 5], "3": [6, 4], "4": [0, 1]})");
  return o;
}

TEST(Jobs, TwoJobsEqualTheMachineWrittenOut) {
  for (Backend backend :
       {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware, Backend::kPacket}) {
    RunOptions a = TwoJobs("jobs_two");
    RunOptions b = WrittenOut("jobs_two_written");
    a.backend = b.backend = backend;
    a.record = b.record = true;
    StatusOr<RunResult> ra = RunSimulation(a);
    StatusOr<RunResult> rb = RunSimulation(b);
    const std::string what = "backend " + std::to_string(static_cast<int>(backend));
    ASSERT_TRUE(ra.ok()) << what << ": " << ra.status().message();
    ASSERT_TRUE(rb.ok()) << what << ": " << rb.status().message();
    ASSERT_EQ(ra->num_npus(), kNpus);
    ASSERT_EQ(rb->num_npus(), kNpus);
    for (int i = 0; i < kNpus; ++i) {
      EXPECT_EQ(ra->npus[i].finish, rb->npus[i].finish) << what << " NPU " << i;
      EXPECT_EQ(ra->npus[i].communication, rb->npus[i].communication) << what << " NPU " << i;
      EXPECT_EQ(ra->npus[i].bytes_sent, rb->npus[i].bytes_sent) << what << " NPU " << i;
      EXPECT_EQ(ra->npus[i].bytes_collective, rb->npus[i].bytes_collective) << what;
      EXPECT_EQ(ra->npus[i].nodes_done, rb->npus[i].nodes_done) << what << " NPU " << i;
      ASSERT_EQ(ra->activity[i].size(), rb->activity[i].size()) << what << " NPU " << i;
      for (size_t k = 0; k < ra->activity[i].size(); ++k) {
        EXPECT_EQ(ra->activity[i][k].start, rb->activity[i][k].start) << what << " NPU " << i;
        EXPECT_EQ(ra->activity[i][k].end, rb->activity[i][k].end) << what << " NPU " << i;
        EXPECT_EQ(ra->activity[i][k].peer, rb->activity[i][k].peer) << what << " NPU " << i;
        EXPECT_EQ(ra->activity[i][k].group_size, rb->activity[i][k].group_size) << what;
      }
    }
    EXPECT_EQ(ra->end, rb->end) << what;
    // The idle NPUs ran nothing.
    for (int idle : {2, 3}) {
      EXPECT_EQ(ra->npus[idle].nodes_done, 0u) << what;
      EXPECT_EQ(ra->npus[idle].finish, Time::Zero()) << what;
    }
    // Each job's step time is its slowest NPU's finish.
    ASSERT_EQ(ra->jobs.size(), 2u);
    EXPECT_EQ(ra->jobs[0].name, "train");
    EXPECT_EQ(ra->jobs[0].npus, (std::vector<int>{6, 4, 7, 5}));
    EXPECT_EQ(ra->jobs[1].name, "serve");
    EXPECT_EQ(ra->jobs[1].npus, (std::vector<int>{0, 1}));
    for (const JobResult& j : ra->jobs) {
      Time slowest;
      for (int npu : j.npus) slowest = std::max(slowest, rb->npus[npu].finish);
      EXPECT_EQ(j.finish, slowest) << what << " " << j.name;
      EXPECT_EQ(ra->npus[j.slowest_npu].finish, slowest) << what << " " << j.name;
      EXPECT_GT(j.finish, Time::Zero()) << what;
    }
    EXPECT_EQ(ra->placement, "2 jobs on 8 NPUs: 'train' on NPUs 4-7, 'serve' on NPUs 0-1; 2 idle");
  }
}

// Four jobs naming the same trace share its loaded files: the run equals four copies of the
// trace (--replicate-trace, no group spanning them), NPU by NPU, on both queueing backends.
TEST(Jobs, JobsOfOneTraceEqualItsCopies) {
  for (Backend backend : {Backend::kAnalyticalAware, Backend::kPacket}) {
    RunOptions jobs = Machine("jobs_same");
    std::vector<std::vector<Node>> serve;
    for (int r = 0; r < 2; ++r) serve.push_back(ServeRank(r, ""));
    ASSERT_TRUE(et::WriteRankFiles(TestTmp("jobs_same") + ".serve", serve).ok());
    jobs.jobs = WriteTestFile("jobs_same.jobs.yaml",
                              "jobs:\n  - {workload: jobs_same.serve}\n"
                              "  - {workload: jobs_same.serve}\n"
                              "  - {workload: ./jobs_same.serve, npus: 6-7}\n"
                              "  - {workload: jobs_same.serve}\n");
    RunOptions copies = jobs;
    copies.jobs.clear();
    copies.workload = TestTmp("jobs_same") + ".serve";
    copies.replicate_trace = true;
    copies.dp_groups = "none";
    jobs.backend = copies.backend = backend;
    StatusOr<RunResult> a = RunSimulation(jobs);
    StatusOr<RunResult> b = RunSimulation(copies);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    ASSERT_EQ(a->jobs.size(), 4u);
    EXPECT_EQ(a->jobs[2].npus, (std::vector<int>{6, 7}));
    EXPECT_EQ(a->jobs[3].npus, (std::vector<int>{4, 5}));
    for (int i = 0; i < kNpus; ++i) {
      EXPECT_GT(a->npus[i].nodes_done, 0u) << "NPU " << i;
      EXPECT_EQ(a->npus[i].nodes_done, b->npus[i].nodes_done) << "NPU " << i;
      EXPECT_EQ(a->npus[i].finish, b->npus[i].finish) << "NPU " << i;
      EXPECT_EQ(a->npus[i].bytes_collective, b->npus[i].bytes_collective) << "NPU " << i;
    }
  }
}

TEST(Jobs, SummaryAndReportNameEachJob) {
  RunOptions o = TwoJobs("jobs_report");
  o.record = true;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string summary = SummaryTable(*r);
  EXPECT_NE(summary.find("workload: 2 jobs on 8 NPUs: 'train' on NPUs 4-7, 'serve' on NPUs 0-1; "
                         "2 idle"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("job 'train' (NPUs 4-7): step time " + r->jobs[0].finish.ToHuman() +
                         " (slowest: NPU " + std::to_string(r->jobs[0].slowest_npu) + ")"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("job 'serve' (NPUs 0-1): step time " + r->jobs[1].finish.ToHuman()),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("mean job NPU"), std::string::npos) << summary;
  const std::string path = TestTmp("jobs_report.json");
  ASSERT_TRUE(WriteReportJson(*r, path).ok());
  const std::string json = ReadWholeFile(path);
  EXPECT_NE(json.find("{\"name\": \"train\", \"npus\": [6, 4, 7, 5], \"step_time_ns\": "),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"name\": \"serve\", \"npus\": [0, 1], \"step_time_ns\": "),
            std::string::npos);
  // Every NPU's and collective's entry names its job and rank (null for an idle NPU), in the
  // JSON and the CSV files.
  EXPECT_NE(json.find("{\"npu\": 4, \"job\": \"train\", \"rank\": 1, \"total\": "),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"npu\": 2, \"job\": null, \"rank\": null, \"total\": "), std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"npu\": 1, \"job\": \"serve\", \"rank\": 1, \"node_id\": 2, "
                      "\"name\": \"logits\""),
            std::string::npos)
      << json;
  const std::string csv = TestTmp("jobs_report.csv");
  ASSERT_TRUE(WriteReportCsv(*r, csv).ok());
  const std::string npus = ReadWholeFile(csv + ".npus.csv");
  EXPECT_EQ(npus.rfind("npu,job,rank,total_ns,compute_ns,", 0), 0u) << npus;
  EXPECT_NE(npus.find("\n6,train,0,"), std::string::npos) << npus;
  EXPECT_NE(npus.find("\n2,,,0,"), std::string::npos) << npus;
  const std::string colls = ReadWholeFile(csv + ".collectives.csv");
  EXPECT_EQ(colls.rfind("npu,job,rank,node_id,name,", 0), 0u) << colls;
  EXPECT_NE(colls.find("\n7,train,2,4,grad_sync,ALL_REDUCE,"), std::string::npos) << colls;
  // The timeline names each NPU's job and rank.
  const std::string timeline = TestTmp("jobs_report.trace.json");
  ASSERT_TRUE(WriteChromeTrace(*r, timeline).ok());
  const std::string trace = ReadWholeFile(timeline);
  for (const char* name : {"NPU 4 (train, rank 1)", "NPU 1 (serve, rank 1)", "NPU 2 (idle)"}) {
    EXPECT_NE(trace.find("\"args\":{\"name\":\"" + std::string(name) + "\"}"), std::string::npos)
        << name;
  }
}

TEST(Jobs, AloneRunsEachJobOnItsNpusWithTheOthersRemoved) {
  RunOptions o = TwoJobs("jobs_alone");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(AddJobsAlone(o, &*r).ok());
  // Job 'serve' alone is a jobs file with it alone, on the NPUs the full file gives it.
  RunOptions serve = o;
  serve.jobs = WriteTestFile("jobs_alone.serve.yaml",
                             "jobs:\n  - {name: serve, workload: jobs_alone.serve, npus: 0-1}\n");
  StatusOr<RunResult> s = RunSimulation(serve);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(r->jobs[1].alone.has_value());
  EXPECT_EQ(*r->jobs[1].alone, s->jobs[0].finish);
  ASSERT_TRUE(r->jobs[0].alone.has_value());
  // Sharing never makes a job faster here (the ring's links are shared, not added).
  for (const JobResult& j : r->jobs) EXPECT_GE(j.finish, *j.alone) << j.name;
  EXPECT_NE(
      SummaryTable(*r).find("job 'serve' (NPUs 0-1): step time " + r->jobs[1].finish.ToHuman() +
                            " (slowest: NPU " + std::to_string(r->jobs[1].slowest_npu) +
                            "); alone " + r->jobs[1].alone->ToHuman() + ", +"),
      std::string::npos)
      << SummaryTable(*r);
}

// The error of running `jobs_yaml` (written beside the two jobs' traces) on the machine.
std::string JobsError(const std::string& name, const std::string& jobs_yaml) {
  RunOptions o = TwoJobs(name);
  o.jobs = WriteTestFile(name + ".bad.yaml", jobs_yaml);
  StatusOr<RunResult> r = RunSimulation(o);
  EXPECT_FALSE(r.ok()) << jobs_yaml;
  return r.ok() ? "" : r.status().message();
}

TEST(Jobs, PlacementErrorsNameTheJobAndWhatIsValid) {
  const std::string n = "jobs_err";
  std::string e = JobsError(n, "jobs:\n  - {name: t, workload: " + n + ".train, npus: 0-2}\n");
  EXPECT_NE(
      e.find("job 't': 'npus' lists 3 NPUs (0-2) but the job has 4 rank files (" + TestTmp(n) +
             ".train.0.et .. " + TestTmp(n) + ".train.3.et); expected one NPU per rank"),
      std::string::npos)
      << e;
  e = JobsError(n, "jobs:\n  - {name: t, workload: " + n + ".train, npus: 5-8}\n");
  EXPECT_NE(e.find("job 't': 'npus' '5-8' names NPU 8 (in '5-8'); expected NPU ids in [0, 7] "
                   "(the network's NPUs)"),
            std::string::npos)
      << e;
  e = JobsError(n, "jobs:\n  - {name: t, workload: " + n + ".train, npus: 0-3}\n" +
                       "  - {name: s, workload: " + n + ".serve, npus: 3-4}\n");
  EXPECT_NE(e.find("job 's': 'npus' lists NPU 3, which job 't' runs on; expected NPUs of no "
                   "other job"),
            std::string::npos)
      << e;
  e = JobsError(n, "jobs:\n  - {name: t, workload: " + n + ".train, npus: 1-4}\n" +
                       "  - {name: u, workload: " + n + ".train}\n" +
                       "  - {name: s, workload: " + n + ".serve, npus: 5-6}\n");
  EXPECT_NE(e.find("job 'u' has 4 rank files, but only 2 NPUs are left for it: the network (" +
                   TestTmp(n) +
                   ".net.yml) has 8 NPUs, ids 0 to 7, and the other jobs take "
                   "the rest"),
            std::string::npos)
      << e;
  // A comm-groups file that is not there is named with the jobs file and the job (it had been
  // the path alone).
  e = JobsError(n, "jobs:\n  - {name: t, workload: " + n +
                       ".train, npus: 1-4, comm-groups: /nonexistent/groups.json}\n");
  EXPECT_NE(e.find(": job 't', 'comm-groups': /nonexistent/groups.json: cannot open the file"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(".bad.yaml: job 't'"), std::string::npos) << e;
  // A job without its comm groups: the trace's pg_name names no group.
  e = JobsError(n, "jobs:\n  - {name: t, workload: " + n + ".train, npus: 1-4}\n");
  EXPECT_NE(e.find("NPU 1 (job 't', rank 0) node 3 'tp_gather': pg_name '1' names a "
                   "communicator group that is defined neither in the job's 'comm-groups' file "
                   "nor by a METADATA node of this NPU's trace before it"),
            std::string::npos)
      << e;
  // Rank files 0 and 1, then a gap before 3: the ranks after it would be dropped.
  ASSERT_TRUE(et::WriteRankFiles(TestTmp(n) + ".gap",
                                 {{et::MakeCompNode(1, "c", 1)}, {et::MakeCompNode(1, "c", 1)}})
                  .ok());
  std::ofstream(TestTmp(n) + ".gap.3.et") << "";
  e = JobsError(n, "jobs:\n  - {name: g, workload: " + n + ".gap}\n");
  EXPECT_NE(e.find("job 'g': " + TestTmp(n) + ".gap.2.et is missing, but " + TestTmp(n) +
                   ".gap.3.et exists; the ranks are read from " + TestTmp(n) +
                   ".gap.0.et up to the first missing file, so the rank files must have no gap"),
            std::string::npos)
      << e;
  e = JobsError(n, "jobs:\n  - {name: t, workload: " + n + ".nothing}\n");
  EXPECT_NE(e.find("job 't': there is no " + TestTmp(n) + ".nothing.0.et"), std::string::npos) << e;
}

TEST(Jobs, FlagsThatDoNotMixWithJobsAreRefused) {
  RunOptions o = TwoJobs("jobs_flags");
  o.workload = "x";
  o.replicate_trace = true;
  o.comm_group_config = "groups.json";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string e = r.status().message();
  EXPECT_NE(e.find("--jobs " + o.jobs + " and --workload-configuration x were both given"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("--replicate-trace does not apply with --jobs"), std::string::npos) << e;
  EXPECT_NE(e.find("--comm-group-configuration groups.json does not apply with --jobs " + o.jobs +
                   "; give each job its groups with its 'comm-groups' key"),
            std::string::npos)
      << e;
}

TEST(Jobs, ATraceNamingARankOutsideItsJobIsAnError) {
  const std::string n = "jobs_peer";
  RunOptions o = Machine(n);
  // A 2-rank job whose rank 0 sends to rank 2: NPU 2 exists, but not in the job.
  std::vector<std::vector<Node>> job = {{et::MakeSendNode(1, 2, 4096, 0)},
                                        {et::MakeCompNode(1, "c", 1)}};
  ASSERT_TRUE(et::WriteRankFiles(TestTmp(n) + ".j", job).ok());
  o.jobs =
      WriteTestFile(n + ".jobs.yaml", "jobs:\n  - {name: j, workload: " + n + ".j, npus: 3-4}\n");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "NPU 3 (job 'j', rank 0) node 1 'send': 'comm_dst' is '2'; expected another "
                "rank of the trace in [0, 1] (--jobs keeps sends, receives and groups inside a "
                "job)"),
            std::string::npos)
      << r.status().message();
  // A comm group naming a rank past the job's.
  o.jobs = WriteTestFile(n + ".jobs2.yaml", "jobs:\n  - {name: j, workload: " + n +
                                                ".j, npus: 3-4, comm-groups: " + n + ".g.json}\n");
  WriteTestFile(n + ".g.json", R"({"1": [0, 2]})");
  r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(TestTmp(n) + ".g.json"), std::string::npos)
      << r.status().message();
  EXPECT_NE(
      r.status().message().find("group 1, member 2, is '2'; expected a rank of job 'j' in [0, 2)"),
      std::string::npos)
      << r.status().message();
}

// A job's groups are named in the job's words: its comm-groups file's id and the job's name,
// not the system layer's id (job 'b''s group 7 had been "communicator group 2").
TEST(Jobs, AJobsGroupsAreNamedByJobAndId) {
  const std::string n = "jobs_group_names";
  RunOptions o = Machine(n);
  std::vector<std::vector<Node>> ranks(2);
  for (int r = 0; r < 2; ++r) {
    Node c =
        et::MakeCollNode(1, r == 0 ? "ar" : "ag",
                         r == 0 ? ChakraProtoMsg::ALL_REDUCE : ChakraProtoMsg::ALL_GATHER, 1 << 20);
    et::SetStringAttr(&c, "pg_name", "7");
    ranks[r] = {c};
  }
  ASSERT_TRUE(et::WriteRankFiles(TestTmp(n) + ".mis", ranks).ok());
  ASSERT_TRUE(et::WriteRankFiles(TestTmp(n) + ".fine", {{et::MakeCompNode(1, "c", 1)}}).ok());
  WriteTestFile(n + ".g.json", R"({"7": [0, 1]})");
  o.jobs = WriteTestFile(n + ".jobs.yaml", "jobs:\n  - {name: a, workload: " + n +
                                               ".fine}\n  - {name: b, workload: " + n +
                                               ".mis, npus: 4-5, comm-groups: " + n + ".g.json}\n");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("collectives do not line up among communicator group 7 of "
                                      "job 'b'"),
            std::string::npos)
      << r.status().message();
}

TEST(Jobs, AStuckJobIsNamedByJobAndRank) {
  const std::string n = "jobs_stuck";
  RunOptions o = Machine(n);
  // Rank 1 waits for a message rank 0 never sends; the other job finishes.
  std::vector<std::vector<Node>> stuck = {{et::MakeCompNode(1, "c", 1)},
                                          {et::MakeRecvNode(1, 0, 4096, 0)}};
  ASSERT_TRUE(et::WriteRankFiles(TestTmp(n) + ".stuck", stuck).ok());
  ASSERT_TRUE(et::WriteRankFiles(TestTmp(n) + ".fine", {{et::MakeCompNode(1, "c", 1)}}).ok());
  o.jobs = WriteTestFile(n + ".jobs.yaml", "jobs:\n  - {name: fine, workload: " + n +
                                               ".fine}\n  - {name: s, workload: " + n +
                                               ".stuck, npus: 5-6}\n");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_FALSE(r.ok());
  const std::string e = r.status().message();
  EXPECT_NE(e.find("the simulation cannot finish: 1 of 8 NPUs are stuck"), std::string::npos) << e;
  EXPECT_NE(e.find("NPU 6 (job 's', rank 1)"), std::string::npos) << e;
}

}  // namespace
}  // namespace orrery
