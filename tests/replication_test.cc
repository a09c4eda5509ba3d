// --replicate-trace end to end: a trace of N ranks run as K copies must give exactly what the
// same job written out for K·N NPUs gives (the copies' sends and groups renumbered by hand),
// on every backend; and every way to get it wrong is a named error.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
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

// The case's files for `ranks`, on a Ring of `npus` NPUs (ranks.size() unless replicated).
RunOptions Case(const std::string& name, const std::vector<std::vector<Node>>& ranks, int npus,
                const std::string& groups_json = "") {
  RunOptions o = WriteTestCase(name, ranks, kSystem, "Ring");
  std::ofstream(o.network_config) << "topology: [ Ring ]\nnpus_count: [ " << npus
                                  << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  if (!groups_json.empty()) {
    o.comm_group_config = TestTmp(name) + ".groups.json";
    std::ofstream(o.comm_group_config) << groups_json;
  }
  return o;
}

Node WithGroup(Node n, const std::string& pg) {
  et::SetStringAttr(&n, "pg_name", pg);
  return n;
}

// The results that must agree between a replicated run and the written-out job; with `events`,
// the events too (both simulated every NPU).
void ExpectSameRun(const RunResult& replicated, const RunResult& written, const std::string& what,
                   bool events = true) {
  ASSERT_EQ(replicated.num_npus(), written.num_npus()) << what;
  for (int i = 0; i < written.num_npus(); ++i) {
    const NpuStats& a = replicated.npus[i];
    const NpuStats& b = written.npus[i];
    EXPECT_EQ(a.finish, b.finish) << what << " NPU " << i;
    EXPECT_EQ(a.gpu_compute, b.gpu_compute) << what << " NPU " << i;
    EXPECT_EQ(a.communication, b.communication) << what << " NPU " << i;
    EXPECT_EQ(a.bytes_sent, b.bytes_sent) << what << " NPU " << i;
    EXPECT_EQ(a.bytes_collective, b.bytes_collective) << what << " NPU " << i;
    EXPECT_EQ(a.nodes_done, b.nodes_done) << what << " NPU " << i;
  }
  EXPECT_EQ(replicated.end, written.end) << what;
  if (events) {
    EXPECT_EQ(replicated.events, written.events) << what;
  }
}

// Runs a replicated case and the same job written out: both must run, and agree.
// Both simulate every NPU (--exact) and agree event for event; the replicated run with its
// symmetry shortcut (runner/symmetry.h), when it has one, agrees too.
void ExpectSameAsWrittenOut(const RunOptions& replicated, const RunOptions& written,
                            const std::string& what) {
  RunOptions exact = replicated, written_exact = written;
  exact.exact = written_exact.exact = true;
  StatusOr<RunResult> ra = RunSimulation(exact);
  StatusOr<RunResult> rb = RunSimulation(written_exact);
  StatusOr<RunResult> shortcut = RunSimulation(replicated);
  ASSERT_TRUE(ra.ok()) << what << ": " << ra.status().message();
  ASSERT_TRUE(rb.ok()) << what << ": " << rb.status().message();
  ASSERT_TRUE(shortcut.ok()) << what << ": " << shortcut.status().message();
  ExpectSameRun(*ra, *rb, what);
  ExpectSameRun(*shortcut, *rb, what + " (shortcut: " + shortcut->shortcut + ")", false);
}

// Rank r of copy c of a data-parallel job: forward compute that differs per rank (5 + r us), a
// pipeline hand-off from rank 0 to 1 and 2 to 3, the gradient all-reduce (world), then an
// optimizer step. `offset` is c·N: written out, copy c's peers are NPUs offset + rank.
std::vector<Node> DataParallelRank(int rank, int offset) {
  std::vector<Node> r = {et::MakeCompNode(1, "fwd", 5 + static_cast<uint64_t>(rank))};
  if (rank % 2 == 0) {
    r.push_back(et::MakeSendNode(2, offset + rank + 1, 1 << 18, /*tag=*/3, {1}));
  } else {
    r.push_back(et::MakeRecvNode(2, offset + rank - 1, 1 << 18, /*tag=*/3, {1}));
  }
  r.push_back(et::MakeCollNode(3, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {2}));
  r.push_back(et::MakeCompNode(4, "optimizer", 7, {3}));
  return r;
}

TEST(ReplicateTrace, DataParallelCopiesEqualTheJobWrittenOut) {
  constexpr int kRanks = 4, kCopies = 3;
  std::vector<std::vector<Node>> trace, written;
  for (int r = 0; r < kRanks; ++r) trace.push_back(DataParallelRank(r, 0));
  for (int c = 0; c < kCopies; ++c) {
    for (int r = 0; r < kRanks; ++r) written.push_back(DataParallelRank(r, c * kRanks));
  }
  for (Backend backend :
       {Backend::kAnalyticalUnaware, Backend::kAnalyticalAware, Backend::kPacket}) {
    RunOptions a = Case("rep_dp", trace, kRanks * kCopies);
    a.backend = backend;
    a.replicate_trace = true;
    a.record = true;
    RunOptions b = Case("rep_dp_written", written, kRanks * kCopies);
    b.backend = backend;
    StatusOr<RunResult> ra = RunSimulation(a);
    StatusOr<RunResult> rb = RunSimulation(b);
    ASSERT_TRUE(ra.ok()) << ra.status().message();
    ASSERT_TRUE(rb.ok()) << rb.status().message();
    ExpectSameRun(*ra, *rb, BackendName(backend));
    EXPECT_EQ(ra->placement,
              "trace of 4 ranks run as 3 copies on 12 NPUs; data-parallel groups: world");
    EXPECT_EQ(rb->placement, "");
    // The world all-reduce spans all 12 NPUs, and copy 2's hand-off goes from NPU 8 to 9.
    bool saw_all_reduce = false, saw_send = false;
    for (const NodeRecord& n : ra->activity[8]) {
      if (n.collective) {
        saw_all_reduce = true;
        EXPECT_EQ(n.group_size, 12);
      }
      if (n.type == et::NodeType::kCommSend) {
        saw_send = true;
        EXPECT_EQ(n.peer, 9);
      }
    }
    EXPECT_TRUE(saw_all_reduce && saw_send);
  }
}

// A hybrid job: tensor-parallel pairs all-reduce activations, data-parallel pairs all-reduce
// gradients. Traced on 4 ranks: TP groups {0,1} (pg 1) and {2,3} (pg 2), DP groups {0,2} (pg 3)
// and {1,3} (pg 4). Run as 2 copies with --dp-groups 3,4, the TP groups stay in each copy and
// the DP groups double: {0,2,4,6} and {1,3,5,7}, as in the 8-rank job written out.
std::vector<Node> HybridRank(int rank, const std::string& tp, const std::string& dp) {
  return {et::MakeCompNode(1, "fwd", 4 + static_cast<uint64_t>(rank)),
          WithGroup(et::MakeCollNode(2, "tp_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 19, {1}), tp),
          et::MakeCompNode(3, "bwd", 9, {2}),
          WithGroup(et::MakeCollNode(4, "dp_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {3}), dp)};
}

TEST(ReplicateTrace, TensorParallelGroupsStayInTheirCopyDataParallelGroupsSpanThemAll) {
  std::vector<std::vector<Node>> trace = {HybridRank(0, "1", "3"), HybridRank(1, "1", "4"),
                                          HybridRank(2, "2", "3"), HybridRank(3, "2", "4")};
  // Written out: copy 1's TP pairs get groups 5 and 6.
  std::vector<std::vector<Node>> written = trace;
  written.push_back(HybridRank(0, "5", "3"));
  written.push_back(HybridRank(1, "5", "4"));
  written.push_back(HybridRank(2, "6", "3"));
  written.push_back(HybridRank(3, "6", "4"));
  RunOptions a = Case("rep_hybrid", trace, 8, R"({"1": [0, 1], "2": [2, 3], "3": [0, 2],
                                                  "4": [1, 3]})");
  a.replicate_trace = true;
  a.dp_groups = "3,4";
  RunOptions b = Case("rep_hybrid_written", written, 8,
                      R"({"1": [0, 1], "2": [2, 3], "5": [4, 5], "6": [6, 7],
                          "3": [0, 2, 4, 6], "4": [1, 3, 5, 7]})");
  StatusOr<RunResult> ra = RunSimulation(a);
  StatusOr<RunResult> rb = RunSimulation(b);
  ASSERT_TRUE(ra.ok()) << ra.status().message();
  ASSERT_TRUE(rb.ok()) << rb.status().message();
  ExpectSameRun(*ra, *rb, "comm-group file", /*events=*/ra->shortcut.empty());
  EXPECT_TRUE(ra->warnings.empty()) << ra->warnings.front();

  // The same groups declared by a PyTorch METADATA node (process_group:init) in every rank.
  const std::string pgs =
      R"([{"pg_name": "1", "ranks": [0, 1]}, {"pg_name": "2", "ranks": [2, 3]},)"
      R"( {"pg_name": "3", "ranks": [0, 2]}, {"pg_name": "4", "ranks": [1, 3]}])";
  std::vector<std::vector<Node>> with_metadata = trace;
  for (auto& rank : with_metadata) {
    rank.insert(rank.begin(), et::MakeMetadataNode(100, "process_group:init", pgs));
    et::AddDataDeps(&rank[1], {100});
  }
  RunOptions m = Case("rep_hybrid_metadata", with_metadata, 8);
  m.replicate_trace = true;
  m.dp_groups = "3,4";
  StatusOr<RunResult> rm = RunSimulation(m);
  ASSERT_TRUE(rm.ok()) << rm.status().message();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(rm->npus[i].finish, rb->npus[i].finish) << "METADATA groups, NPU " << i;
  }

  // Without --dp-groups 3,4, the DP groups stay in their copies too: a different run, in which
  // the gradient all-reduce has half the members.
  a.dp_groups = "";
  StatusOr<RunResult> in_copies = RunSimulation(a);
  ASSERT_TRUE(in_copies.ok()) << in_copies.status().message();
  EXPECT_LT(in_copies->end, ra->end);
}

TEST(ReplicateTrace, NoDataParallelGroupsMakesIndependentJobs) {
  // --dp-groups none: each copy's world all-reduce runs on its own 4 NPUs, as two jobs with
  // groups {0..3} and {4..7} would.
  constexpr int kRanks = 4;
  std::vector<std::vector<Node>> trace, written;
  for (int r = 0; r < kRanks; ++r) trace.push_back(DataParallelRank(r, 0));
  for (int c = 0; c < 2; ++c) {
    for (int r = 0; r < kRanks; ++r) {
      std::vector<Node> rank = DataParallelRank(r, c * kRanks);
      et::SetStringAttr(&rank[2], "pg_name", c == 0 ? "1" : "2");
      written.push_back(rank);
    }
  }
  RunOptions a = Case("rep_none", trace, 8);
  a.replicate_trace = true;
  a.dp_groups = "none";
  RunOptions b = Case("rep_none_written", written, 8, R"({"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]})");
  StatusOr<RunResult> ra = RunSimulation(a);
  StatusOr<RunResult> rb = RunSimulation(b);
  ASSERT_TRUE(ra.ok()) << ra.status().message();
  ASSERT_TRUE(rb.ok()) << rb.status().message();
  ExpectSameRun(*ra, *rb, "--dp-groups none", /*events=*/ra->shortcut.empty());
  EXPECT_EQ(ra->placement,
            "trace of 4 ranks run as 2 copies on 8 NPUs; data-parallel groups: none "
            "(independent jobs)");
}

TEST(ReplicateTrace, OneCopyIsTheOrdinaryRun) {
  std::vector<std::vector<Node>> trace;
  for (int r = 0; r < 4; ++r) trace.push_back(DataParallelRank(r, 0));
  RunOptions a = Case("rep_one", trace, 4);
  StatusOr<RunResult> plain = RunSimulation(a);
  a.replicate_trace = true;
  StatusOr<RunResult> one = RunSimulation(a);
  ASSERT_TRUE(plain.ok() && one.ok());
  ExpectSameRun(*one, *plain, "one copy");
}

TEST(ReplicateTrace, ReportsNameEachNpusCopyAndRank) {
  // 2 copies of 4 ranks: NPU 6 is rank 2 of copy 1, in the JSON and CSV reports and the timeline.
  std::vector<std::vector<Node>> trace;
  for (int r = 0; r < 4; ++r) trace.push_back(DataParallelRank(r, 0));
  RunOptions o = Case("rep_names", trace, 8);
  o.replicate_trace = true;
  o.record = true;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string path = TestTmp("rep_names");
  ASSERT_TRUE(WriteReportJson(*r, path + ".json").ok());
  const std::string json = ReadWholeFile(path + ".json");
  EXPECT_NE(json.find("{\"npu\": 6, \"copy\": 1, \"rank\": 2, \"total\": "), std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"npu\": 3, \"copy\": 0, \"rank\": 3, \"node_id\": 3, "
                      "\"name\": \"grad_sync\""),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("\"job\""), std::string::npos) << json;
  ASSERT_TRUE(WriteReportCsv(*r, path).ok());
  const std::string npus = ReadWholeFile(path + ".npus.csv");
  EXPECT_EQ(npus.rfind("npu,copy,rank,total_ns,compute_ns,", 0), 0u) << npus;
  EXPECT_NE(npus.find("\n5,1,1,"), std::string::npos) << npus;
  const std::string colls = ReadWholeFile(path + ".collectives.csv");
  EXPECT_EQ(colls.rfind("npu,copy,rank,node_id,name,", 0), 0u) << colls;
  EXPECT_NE(colls.find("\n7,1,3,3,grad_sync,ALL_REDUCE,"), std::string::npos) << colls;
  ASSERT_TRUE(WriteChromeTrace(*r, path + ".trace.json").ok());
  const std::string timeline = ReadWholeFile(path + ".trace.json");
  for (const char* name : {"NPU 0 (copy 0, rank 0)", "NPU 6 (copy 1, rank 2)"}) {
    EXPECT_NE(timeline.find("\"args\":{\"name\":\"" + std::string(name) + "\"}"), std::string::npos)
        << name;
  }
  // Without --replicate-trace, the entries are as before: no copy, no rank.
  RunOptions plain = Case("rep_names_plain", trace, 4);
  plain.record = true;
  StatusOr<RunResult> p = RunSimulation(plain);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(WriteReportCsv(*p, path + ".plain").ok());
  EXPECT_EQ(ReadWholeFile(path + ".plain.npus.csv").rfind("npu,total_ns,", 0), 0u);
}

std::string ErrorOf(const RunOptions& o) {
  StatusOr<RunResult> r = RunSimulation(o);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(ReplicateTrace, ANetworkThatIsNotAWholeNumberOfCopiesIsNamed) {
  std::vector<std::vector<Node>> trace;
  for (int r = 0; r < 4; ++r) trace.push_back(DataParallelRank(r, 0));
  RunOptions o = Case("rep_six", trace, 6);
  o.replicate_trace = true;
  const std::string p = TestTmp("rep_six");
  EXPECT_EQ(ErrorOf(o), "--replicate-trace: the network (" + p + ".net.yml) has 6 NPUs, not a " +
                            "whole number of copies of the trace's 4 rank files (" + p +
                            ".0.et .. " + p + ".3.et, and no " + p +
                            ".4.et); expected a network of a multiple of 4 NPUs (4, 8, 12, ...)");
  // More rank files than NPUs.
  o = Case("rep_more", trace, 2);
  o.replicate_trace = true;
  EXPECT_NE(ErrorOf(o).find("the trace has at least 3 rank files"), std::string::npos);
  // No rank 0 file.
  o.workload = TestTmp("rep_no_such_trace");
  EXPECT_NE(ErrorOf(o).find("--replicate-trace: there is no " + o.workload + ".0.et"),
            std::string::npos);
}

TEST(ReplicateTrace, FlagsAndPeersOutsideTheTraceAreNamed) {
  std::vector<std::vector<Node>> trace;
  for (int r = 0; r < 4; ++r) trace.push_back(DataParallelRank(r, 0));
  RunOptions o = Case("rep_flags", trace, 8);
  o.dp_groups = "world";
  EXPECT_EQ(ErrorOf(o),
            "--dp-groups 'world' applies only with --replicate-trace (it says which "
            "communicator groups span every copy of the trace)");
  o.replicate_trace = true;
  o.dp_groups = "wrold";
  EXPECT_NE(ErrorOf(o).find("--dp-groups: item 1 of 'wrold' is 'wrold'; expected 'world', "
                            "'none', or a comma list of communicator group ids (1 to 999999999)"),
            std::string::npos);

  // A send to rank 4 of a 4-rank trace: the copies' peers are the trace's ranks.
  trace[2][1] = et::MakeSendNode(2, /*peer=*/4, 1 << 18, 3, {1});
  o = Case("rep_peer", trace, 8);
  o.replicate_trace = true;
  EXPECT_NE(ErrorOf(o).find("NPU 2 (copy 0, rank 2) node 2 'send': 'comm_dst' is '4'; expected "
                            "another rank of the trace in [0, 3] (--replicate-trace keeps sends, "
                            "receives and groups inside a copy)"),
            std::string::npos);

  // A broadcast rooted at rank 4 of a 4-rank trace (on 8 NPUs, NPU 4 exists: in copy 1).
  std::vector<std::vector<Node>> rooted(
      4, {et::MakeCollNode(1, "bcast", ChakraProtoMsg::BROADCAST, 4096)});
  for (auto& rank : rooted) et::SetIntAttr(&rank[0], "comm_src", 4);
  o = Case("rep_root", rooted, 8);
  o.replicate_trace = true;
  EXPECT_NE(ErrorOf(o).find("node 1 'bcast': 'comm_src' (the root) is '4'; expected a rank of "
                            "the trace in [0, 3] (--replicate-trace keeps sends, receives and "
                            "groups inside a copy)"),
            std::string::npos);
  // Rooted at rank 2, every copy broadcasts from NPU 2 (the root of a data-parallel group is in
  // copy 0), as the 8-rank job written out with comm_src 2 does.
  for (auto& rank : rooted) rank[0] = et::MakeCollNode(1, "bcast", ChakraProtoMsg::BROADCAST, 4096);
  for (auto& rank : rooted) et::SetIntAttr(&rank[0], "comm_src", 2);
  o = Case("rep_root2", rooted, 8);
  o.replicate_trace = true;
  std::vector<std::vector<Node>> rooted8(8, rooted[0]);
  RunOptions w = Case("rep_root2_written", rooted8, 8);
  ExpectSameAsWrittenOut(o, w, "broadcast from rank 2");

  // A comm-group file naming a rank the trace does not have.
  trace[2][1] = et::MakeSendNode(2, 3, 1 << 18, 3, {1});
  o = Case("rep_group", trace, 8, R"({"1": [0, 5]})");
  o.replicate_trace = true;
  const std::string error = ErrorOf(o);
  EXPECT_NE(error.find(o.comm_group_config), std::string::npos) << error;
  EXPECT_NE(error.find("5"), std::string::npos) << error;
}

TEST(ReplicateTrace, ADataParallelGroupNoOneDefinesIsAWarning) {
  std::vector<std::vector<Node>> trace;
  for (int r = 0; r < 4; ++r) trace.push_back(DataParallelRank(r, 0));
  RunOptions o = Case("rep_warn", trace, 8);
  o.replicate_trace = true;
  o.dp_groups = "world,7";
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "--dp-groups names communicator group 7, which neither --comm-group-configuration nor "
            "a METADATA node of the trace defines; no collective ran in it");
  // Defined (in the comm-group file) but named by no node of the trace: the copies ran
  // independently there, which --dp-groups did not ask for (it had been silent).
  o.dp_groups = "world,9";
  o.comm_group_config = WriteTestFile("rep_warn.groups.json", R"({"9": [0, 1]})");
  r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "--dp-groups names communicator group 9, which no node of the trace names "
            "(pg_name); no collective ran in it, so the copies ran independently there");
}

TEST(ReplicateTrace, AStuckCopyNamesItsNpusAndRanks) {
  // Rank 1 waits for a message rank 0 never sends: in copy 1 (NPUs 2 and 3) that is NPU 3
  // waiting for NPU 2.
  std::vector<std::vector<Node>> trace(2);
  trace[0] = {et::MakeCompNode(1, "fwd", 5)};
  trace[1] = {et::MakeRecvNode(1, /*peer=*/0, 4096, /*tag=*/1)};
  RunOptions o = Case("rep_stuck", trace, 4);
  o.replicate_trace = true;
  const std::string error = ErrorOf(o);
  EXPECT_NE(error.find("NPU 3 (copy 1, rank 1) node 1 'recv': running since 0 ns, waiting to "
                       "receive from NPU 2 (tag 1, 4096 B)"),
            std::string::npos)
      << error;
}

TEST(ReplicateTrace, AGapInTheRankFilesIsNamed) {
  std::vector<std::vector<Node>> trace;
  for (int r = 0; r < 8; ++r) trace.push_back({et::MakeCompNode(1, "fwd", 1)});
  RunOptions o = Case("rep_gap", trace, 6);
  std::remove((o.workload + ".3.et").c_str());
  o.replicate_trace = true;
  EXPECT_EQ(ErrorOf(o), "--replicate-trace: " + o.workload + ".3.et is missing, but " + o.workload +
                            ".4.et exists; the ranks are read from " + o.workload +
                            ".0.et up to the first missing file, so the rank files must have no "
                            "gap");
}

// A job traced with data-parallel degree 1 has data-parallel groups of one rank; run as copies,
// each spans them. In a comm-group file, as by METADATA nodes, --dp-groups may name such groups:
// ranks {0, 1} are a tensor-parallel pair (group 1) and each its own DP group (2 and 3); as 4
// copies that is the 8-rank job with DP groups {0, 2, 4, 6} and {1, 3, 5, 7}.
TEST(ReplicateTrace, OneRankDataParallelGroupsSpanTheCopies) {
  std::vector<std::vector<Node>> trace = {HybridRank(0, "1", "2"), HybridRank(1, "1", "3")};
  RunOptions a = Case("rep_dp1", trace, 8, R"({"1": [0, 1], "2": [0], "3": [1]})");
  a.replicate_trace = true;
  a.dp_groups = "2,3";
  std::vector<std::vector<Node>> written;
  for (int c = 0; c < 4; ++c) {
    const std::string tp = std::to_string(10 + c);
    written.push_back(HybridRank(0, tp, "2"));
    written.push_back(HybridRank(1, tp, "3"));
  }
  RunOptions b = Case("rep_dp1_written", written, 8,
                      R"({"10": [0, 1], "11": [2, 3], "12": [4, 5], "13": [6, 7],
                          "2": [0, 2, 4, 6], "3": [1, 3, 5, 7]})");
  ExpectSameAsWrittenOut(a, b, "one-rank DP groups");
  // A one-rank group that is not data-parallel is still refused.
  a.dp_groups = "2";
  EXPECT_NE(ErrorOf(a).find("group 3 has 1 member; expected at least 2 NPUs (or 1, for a "
                            "data-parallel group --dp-groups names"),
            std::string::npos);
}

// METADATA process groups (PyTorch's process_group:init) are read with checked numbers, with or
// without copies: a member listed twice, a group number or a rank past int, a negative rank.
TEST(ReplicateTrace, BadMetadataGroupsAreNamedNotRun) {
  struct Bad {
    const char* inputs;
    const char* expected;
  } kBad[] = {
      {R"([{"pg_name": "1", "ranks": [0, 1, 1]}])", "more than once; expected each member once"},
      {R"([{"pg_name": "4294967297", "ranks": [0, 1]}])",
       "METADATA: pg_name '4294967297' is not a communicator group number; expected 0 to "
       "999999999"},
      {R"([{"pg_name": "1", "ranks": [0, 4294967297]}])",
       "METADATA: process group 1's rank is '4294967297'; expected a rank in [0, 1]"},
      {R"([{"pg_name": "1", "ranks": [-1, 1]}])",
       "METADATA: process group 1's rank is '-1'; expected a rank in [0, 1]"},
  };
  for (const Bad& bad : kBad) {
    std::vector<std::vector<Node>> trace(2);
    for (auto& rank : trace) {
      rank = {et::MakeMetadataNode(1, "process_group:init", bad.inputs),
              WithGroup(et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 4096, {1}), "1")};
    }
    for (bool copies : {false, true}) {
      RunOptions o = Case("rep_meta", trace, copies ? 4 : 2);
      o.replicate_trace = copies;
      const std::string error = ErrorOf(o);
      EXPECT_NE(error.find(bad.expected), std::string::npos) << bad.inputs << "\n" << error;
      EXPECT_NE(error.find("node 1 'process_group:init'"), std::string::npos) << error;
    }
  }
}

// A METADATA dict is read by its keys, in any order and with either quote; a group named by
// no number (PyTorch may hash names) is left out, not read from another key's digits. Before,
// 'pg_size': 2 after a pg_name of 'default_pg' defined group 2, and 'ranks' before 'pg_name'
// gave each group the next dict's ranks.
TEST(ReplicateTrace, MetadataDictsAreReadByKey) {
  auto run = [](const std::string& inputs, const char* pg) {
    std::vector<std::vector<Node>> trace(4);
    for (auto& rank : trace) {
      rank = {et::MakeMetadataNode(1, "process_group:init", inputs),
              WithGroup(et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 4096, {1}), pg)};
    }
    return Case("rep_meta_keys", trace, 4);
  };
  RunOptions o =
      run(R"([{'ranks': [0, 1, 2, 3], 'pg_name': '1'}, {'ranks': [], 'pg_name': '2'}])", "1");
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Python's and JSON's escapes in strings, tuples, None and True, other dicts (int keys, sets,
  // nested options) and a trailing comma are all read past, as PyTorch may write them.
  for (
      const char* inputs : {
          R"([[{"pg_name": "1", "pg_desc": "my \"tp\" g{roup", "ranks": [0, 1, 2, 3,]}]])",
          R"([[{'pg_name': '1', 'pg_desc': 'it\'s', 'shape': (2, 2), 'x': None, 'y': True,)"
          R"( 'opts': {'timeout': 5}, 'ranks': (0, 1, 2, 3)}], {0: 'x'}, {5, 6}, "}{"])",
          // Chakra's PyTorch converter: str() of PyTorch's inputs, a list of one JSON string
          // (it had been passed over as one string: no group, and the collective's pg_name
          // then named an undefined group).
          R"(['[{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", )"
          R"("pg_size": 4, "ranks": []}, {"pg_name": "1", "pg_desc": "tp", "pg_size": 4, )"
          R"("ranks": [0, 1, 2, 3]}]'])",
          R"(["[{\"pg_name\": \"1\", \"pg_desc\": \"it's \\\"tp\\\"\", \"ranks\": [0, 1, 2, 3]}]"])",
      }) {
    r = RunSimulation(run(inputs, "1"));
    EXPECT_TRUE(r.ok()) << inputs << "\n" << r.status().message();
  }
  // Bare values with brackets or strings inside (a call's repr, bytes), and dicts nested
  // 100000 deep before the group (read in one pass: each nested dict had been scanned again).
  std::string deep(100000, '{');
  for (int k = 0; k < 100000; ++k) deep += "'k': 1}";
  for (const std::string& inputs :
       {std::string(
            R"([{'pg_name': '1', 'timeout': datetime.timedelta(seconds=1800), )"
            R"('device': device(type='cuda', index=0), 'tag': b'x}', 'ranks': [0, 1, 2, 3]}])"),
        "[" + deep + R"(, {'pg_name': '1', 'ranks': [0, 1, 2, 3]}])"}) {
    r = RunSimulation(run(inputs, "1"));
    EXPECT_TRUE(r.ok()) << inputs.substr(0, 200) << "\n" << r.status().message();
  }
  // Other metadata is no process group's: it is left alone.
  r = RunSimulation(run(R"([{'step': 3, 'shape': (1, 2)}])", "0"));
  EXPECT_TRUE(r.ok()) << r.status().message();
  // A string left open before a group is named (the groups after it had been dropped without a
  // word); a group defined twice with other members is named with both.
  o = run(R"(["open, {'pg_name': '1', 'ranks': [0, 1, 2, 3]}])", "1");
  EXPECT_NE(ErrorOf(o).find("METADATA: a string at offset 1 is not closed"), std::string::npos)
      << ErrorOf(o);
  // A bracket that closes another inside a group (the group had been dropped, and the run
  // blamed a missing definition); a group nested in another is part of its description.
  o = run(R"([{'pg_name': '1', 'ranks': [0, 1]]}])", "1");
  EXPECT_NE(ErrorOf(o).find("METADATA: a ']' at offset 33 does not close the '{' at offset 1, "
                            "inside a process group's dict"),
            std::string::npos)
      << ErrorOf(o);
  r = RunSimulation(
      run(R"([{'pg_name': '1', 'ranks': [0, 1, 2, 3], 'sub': {'pg_name': '7', 'x': 1}}])", "1"));
  EXPECT_TRUE(r.ok()) << r.status().message();
  // Under --replicate-trace (groups placed per copy) a redefinition is checked as well.
  {
    std::vector<std::vector<Node>> trace(2);
    for (int rank = 0; rank < 2; ++rank) {
      trace[rank] = {
          et::MakeMetadataNode(1, "process_group:init",
                               rank == 0 ? R"([{'pg_name': '1', 'ranks': [0]}])"
                                         : R"([{'pg_name': '1', 'ranks': [0, 1]}])"),
          WithGroup(et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 4096, {1}), "1")};
    }
    RunOptions copies = Case("rep_meta_redefined", trace, 4);
    copies.replicate_trace = true;
    copies.dp_groups = "none";
    EXPECT_NE(ErrorOf(copies).find("communicator group 1 (NPUs) is [0, 1] here, but [0] where it "
                                   "was defined first"),
              std::string::npos)
        << ErrorOf(copies);
  }
  o = run(R"([{'pg_name': '1', 'ranks': [0, 1]}, {'pg_name': '1', 'ranks': [0, 1, 2, 3]}])", "1");
  EXPECT_NE(ErrorOf(o).find("METADATA: process group 1 is [0, 1, 2, 3] here, but [0, 1] where it "
                            "was defined first"),
            std::string::npos)
      << ErrorOf(o);
  o = run(R"([{"pg_name": "default_pg", "pg_desc": "x9", "pg_size": 2, "ranks": [0, 1]}])", "2");
  EXPECT_NE(ErrorOf(o).find("pg_name '2' names a communicator group that is defined neither"),
            std::string::npos)
      << ErrorOf(o);
  o = run(R"([{"pg_name": "1", "pg_size": 4}])", "1");
  EXPECT_NE(ErrorOf(o).find("METADATA: process group 1 has no 'ranks'"), std::string::npos)
      << ErrorOf(o);
  o = run(R"([{"pg_name": "1", "ranks": [0, x1]}])", "1");
  EXPECT_NE(ErrorOf(o).find("METADATA: process group 1's rank is 'x1'"), std::string::npos)
      << ErrorOf(o);
}

TEST(ReplicateTrace, ANegativeRootIsNamed) {
  std::vector<std::vector<Node>> trace(
      2, {et::MakeCollNode(1, "bcast", ChakraProtoMsg::BROADCAST, 4096)});
  for (auto& rank : trace) et::SetIntAttr(&rank[0], "comm_src", -5);
  RunOptions o = Case("rep_negroot", trace, 2);
  EXPECT_NE(ErrorOf(o).find("node 1 'bcast': 'comm_src' (the root) is '-5'; expected an NPU id "
                            "in [0, 1], or none for the group's first member"),
            std::string::npos);
  o = Case("rep_negroot4", trace, 4);
  o.replicate_trace = true;
  EXPECT_NE(
      ErrorOf(o).find("'comm_src' (the root) is '-5'; expected a rank of the trace in [0, 1]"),
      std::string::npos);
}

// Real PyTorch traces declare single-rank process groups (a data-parallel degree of 1); a
// collective in one runs on that NPU alone and finishes, it does not wait for anybody.
TEST(ReplicateTrace, AOneRankMetadataGroupRunsAlone) {
  std::vector<std::vector<Node>> trace(2);
  for (int r = 0; r < 2; ++r) {
    const std::string pg = std::to_string(r + 1);
    trace[r] = {
        et::MakeMetadataNode(1, "process_group:init",
                             R"([{"pg_name": "1", "ranks": [0]}, {"pg_name": "2", "ranks": [1]}])"),
        WithGroup(et::MakeCollNode(2, "ar", ChakraProtoMsg::ALL_REDUCE, 4096, {1}), pg)};
  }
  for (bool copies : {false, true}) {
    RunOptions o = Case("rep_one_rank_group", trace, copies ? 4 : 2);
    o.replicate_trace = copies;
    o.dp_groups = copies ? "none" : "";
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (const NpuStats& n : r->npus) EXPECT_EQ(n.nodes_done, 2u);
  }
}

}  // namespace
}  // namespace orrery
