// Breakdowns, collective statistics, reports and the critical path, against hand-derived
// values (the timelines: timeline_test.cc).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "config/test_files.h"
#include "et_feeder/writer.h"
#include "report/breakdown.h"
#include "report/outputs.h"
#include "report/recorded_run.h"
#include "tests/test_case.h"
namespace orrery {
namespace {
using ChakraProtoMsg::Node;
// NPU 0: compute = fwd [0, 5000) + kernel [5000, 105000) = 105000; communication = all-reduce
//   [5000, 48000) + send [48000, 68031) = 63031, all of it under the kernel: overlapped 63031,
//   exposed 0, overlap 100 %, idle 0.
// NPU 1: compute 5000; communication = all-reduce + receive [48000, 68031) = 63031, none
//   overlapped: exposed 63031, overlap 0 %, idle 0.
// NPU 2: total 48000, compute 5000, communication 43000 exposed.
TEST(Breakdown, ComputeOverlappingACollective) {
  const RunResult r = MixedRun();
  ASSERT_EQ(r.num_npus(), 4);
  const NpuBreakdown& b0 = r.breakdown[0];
  EXPECT_EQ(b0.total.WholeNs(), 105000);
  EXPECT_EQ(b0.compute.WholeNs(), 105000);
  EXPECT_EQ(b0.communication.WholeNs(), 63031);
  EXPECT_EQ(b0.overlapped.WholeNs(), 63031);
  EXPECT_EQ(b0.exposed.WholeNs(), 0);
  EXPECT_EQ(b0.idle.WholeNs(), 0);
  EXPECT_DOUBLE_EQ(b0.overlap_percent(), 100.0);
  const NpuBreakdown& b1 = r.breakdown[1];
  EXPECT_EQ(b1.total.WholeNs(), 68031);
  EXPECT_EQ(b1.compute.WholeNs(), 5000);
  EXPECT_EQ(b1.communication.WholeNs(), 63031);
  EXPECT_EQ(b1.exposed.WholeNs(), 63031);
  EXPECT_EQ(b1.idle.WholeNs(), 0);
  EXPECT_DOUBLE_EQ(b1.overlap_percent(), 0.0);
  const NpuBreakdown& b2 = r.breakdown[2];
  EXPECT_EQ(b2.total.WholeNs(), 48000);
  EXPECT_EQ(b2.exposed.WholeNs(), 43000);
}
TEST(Breakdown, IdleIsWhatNothingCovers) {
  const std::vector<Activity> a = {
      {0, Track::kGpu, Time::FromNs(0), Time::FromNs(10)},
      {1, Track::kComm, Time::FromNs(5), Time::FromNs(20)},   // 5 ns under compute
      {2, Track::kRecv, Time::FromNs(15), Time::FromNs(25)},  // merges with the send
  };
  const NpuBreakdown b = BreakdownOf(a, Time::FromNs(40));
  EXPECT_EQ(b.compute.WholeNs(), 10);
  EXPECT_EQ(b.communication.WholeNs(), 20);
  EXPECT_EQ(b.overlapped.WholeNs(), 5);
  EXPECT_EQ(b.exposed.WholeNs(), 15);
  EXPECT_EQ(b.idle.WholeNs(), 15);  // 40 - |[0, 25)|
  EXPECT_DOUBLE_EQ(b.overlap_percent(), 25.0);
}
// nccl-tests: all-reduce of S = 1 MiB in t = 43000 ns on n = 4:
// algbw = 1048576 / 43000 ns = 24.3855 GB/s; busbw = algbw * 2 * 3 / 4 = 36.578 GB/s.
TEST(CollectiveStats, AlgorithmAndBusBandwidthAsNcclTests) {
  const RunResult r = MixedRun();
  const std::vector<CollectiveStat> c = CollectiveStats(r);
  ASSERT_EQ(c.size(), 4u);
  for (const CollectiveStat& s : c) {
    EXPECT_EQ(s.type, et::CollectiveType::kAllReduce);
    EXPECT_EQ(s.group_size, 4);
    EXPECT_EQ(s.bytes, 1u << 20);
    EXPECT_EQ((s.end - s.start).WholeNs(), 43000);
    EXPECT_NEAR(s.alg_bw_gbps, 1048576.0 / 43000.0, 1e-9);
    EXPECT_NEAR(s.bus_bw_gbps, 1048576.0 / 43000.0 * 1.5, 1e-9);
  }
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(et::CollectiveType::kAllGather, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(et::CollectiveType::kBroadcast, 8), 1.0);
}
// The system layer's view of MixedRun's all-reduce: 4 chunks (preferred-dataset-splits) of
// 256 KiB, one all-reduce phase each on the one ring queue, one at a time
// (active-chunks-per-dimension 1): back to back from 5000 to 48000 ns, inside the collective
// node. The queue holds all 4 from 5000 ns and drains one by one to 0 at 48000 ns.
TEST(Timeline, ChunkPhasesAndQueueLengths) {
  const RunResult r = MixedRun();
  ASSERT_EQ(r.phases.size(), 4u);
  for (int npu = 0; npu < 4; ++npu) {
    const auto& phases = r.phases[npu];
    ASSERT_EQ(phases.size(), 4u) << "NPU " << npu;
    EXPECT_EQ(phases.front().started.WholeNs(), 5000);
    EXPECT_EQ(phases.back().ended.WholeNs(), 48000);
    for (size_t i = 0; i < phases.size(); ++i) {
      const ChunkPhaseRecord& c = phases[i];
      EXPECT_EQ(c.node_id, 2u);
      EXPECT_EQ(c.num_phases, 1);
      EXPECT_EQ(c.type, CollectiveType::kAllReduce);
      EXPECT_STREQ(c.algorithm, "ring");
      EXPECT_EQ(c.bytes, (1u << 20) / 4);
      EXPECT_EQ(c.ring_size, 4);
      EXPECT_EQ(c.receiver, (npu + 1) % 4);
      EXPECT_EQ(c.queued.WholeNs(), 5000);
      if (i > 0) {
        EXPECT_EQ(c.started, phases[i - 1].ended) << "back to back";
      }
    }
    const auto& q = r.queues[npu];
    ASSERT_EQ(q.size(), 5u);
    for (int k = 0; k < 5; ++k) {
      EXPECT_EQ(q[k].queue, 0);
      EXPECT_EQ(q[k].length, 4 - k);
      EXPECT_EQ(q[k].t, k == 0 ? Time::FromNs(5000) : phases[k - 1].ended);
    }
  }
  const std::vector<QueueStat> stats = QueueStats(r);
  ASSERT_EQ(stats.size(), 4u);
  EXPECT_EQ(stats[0].max_length, 4);
  // Time-weighted over the 105000 ns step: 4, 3, 2, 1 streams during the four chunks.
  double area = 0;
  for (int k = 0; k < 4; ++k) {
    area += (4 - k) * (r.phases[0][k].ended - r.phases[0][k].started).Ns();
  }
  EXPECT_NEAR(stats[0].mean_length, area / 105000.0, 1e-9);
  const std::string json = TestTmp("mixed.queues.json");
  ASSERT_TRUE(WriteReportJson(r, json).ok());
  const YAML::Node doc = YAML::LoadFile(json);
  ASSERT_EQ(doc["queues"].size(), 4u);
  EXPECT_EQ(doc["queues"][1]["npu"].as<int>(), 1);
  EXPECT_EQ(doc["queues"][1]["max_length"].as<int>(), 4);
  EXPECT_EQ(doc["queues"][1]["samples"][0][0].as<int64_t>(), 5000);
  EXPECT_EQ(doc["queues"][1]["samples"][4][1].as<int>(), 0);
  const std::string prefix = TestTmp("mixed.queues");
  ASSERT_TRUE(WriteReportCsv(r, prefix).ok());
  EXPECT_NE(ReadWholeFile(prefix + ".queues.csv").find("npu,queue,time_ns,length\n0,0,5000,4\n"),
            std::string::npos);
}
// What `orrery` keeps when it writes only a report (no chunk phases) and what a sweep keeps
// (neither phases nor queue lengths): the same run, the same activity, critical path and report
// sections that do not need them, byte for byte.
TEST(Timeline, ChunkPhasesAndQueueLengthsAreKeptOnlyWhenAsked) {
  RunOptions o = WriteTestCase("kept", MixedGraphRanks(), kRingTestSystem, "Ring");
  o.record = true;
  StatusOr<RunResult> all = RunSimulation(o);
  ASSERT_TRUE(all.ok()) << all.status().message();
  o.record_chunk_phases = false;
  StatusOr<RunResult> report = RunSimulation(o);
  ASSERT_TRUE(report.ok()) << report.status().message();
  o.record_queue_lengths = false;
  StatusOr<RunResult> sweep = RunSimulation(o);
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  auto count = [](const auto& per_npu) {
    size_t n = 0;
    for (const auto& v : per_npu) n += v.size();
    return n;
  };
  EXPECT_EQ(count(all->phases), 16u);
  EXPECT_EQ(count(report->phases), 0u);
  EXPECT_EQ(count(report->queues), count(all->queues));
  EXPECT_GT(count(all->queues), 0u);
  EXPECT_EQ(count(sweep->phases), 0u);
  EXPECT_EQ(count(sweep->queues), 0u);
  for (const StatusOr<RunResult>* r : {&report, &sweep}) {
    EXPECT_EQ((*r)->end, all->end);
    EXPECT_EQ(count((*r)->activity), count(all->activity));
    ASSERT_EQ((*r)->critical_path.size(), all->critical_path.size());
  }
  const std::string a = TestTmp("kept.all.json"), b = TestTmp("kept.report.json");
  ASSERT_TRUE(WriteReportJson(*all, a).ok());
  ASSERT_TRUE(WriteReportJson(*report, b).ok());
  EXPECT_EQ(ReadWholeFile(a), ReadWholeFile(b));
  ASSERT_TRUE(WriteReportCsv(*all, TestTmp("kept.all")).ok());
  ASSERT_TRUE(WriteReportCsv(*report, TestTmp("kept.report")).ok());
  for (const char* f : {".npus.csv", ".collectives.csv", ".queues.csv", ".critical_path.csv"}) {
    EXPECT_EQ(ReadWholeFile(TestTmp("kept.all") + f), ReadWholeFile(TestTmp("kept.report") + f))
        << f;
  }
}
TEST(Report, JsonAndCsvCarryTheBreakdown) {
  const RunResult r = MixedRun();
  const std::string json = TestTmp("mixed.report.json");
  ASSERT_TRUE(WriteReportJson(r, json).ok());
  const YAML::Node doc = YAML::LoadFile(json);
  EXPECT_EQ(doc["step_time_ns"].as<int64_t>(), 105000);
  EXPECT_EQ(doc["npus"][1]["exposed_communication"].as<int64_t>(), 63031);
  EXPECT_EQ(doc["npus"][0]["overlap_percent"].as<double>(), 100.0);
  EXPECT_EQ(doc["collectives"].size(), 4u);
  EXPECT_EQ(doc["collectives"][0]["type"].as<std::string>(), "ALL_REDUCE");
  EXPECT_EQ(doc["collectives"][0]["duration"].as<int64_t>(), 43000);
  EXPECT_GT(doc["links"].size(), 0u);  // the default backend is congestion-aware
  EXPECT_EQ(doc["network_model"].as<std::string>(), "analytical-aware, store-and-forward");
  EXPECT_NE(SummaryTable(r).find("\n  network: analytical-aware, store-and-forward\n"),
            std::string::npos);
  const std::string prefix = TestTmp("mixed.report");
  ASSERT_TRUE(WriteReportCsv(r, prefix).ok());
  const std::string npus = ReadWholeFile(prefix + ".npus.csv");
  EXPECT_NE(npus.find("\n1,68031,5000,0,63031,63031,0,0,0,0\n"), std::string::npos) << npus;
  EXPECT_NE(ReadWholeFile(prefix + ".collectives.csv")
                .find(",ALL_REDUCE,all,4,1048576,5000,48000,43000,"),
            std::string::npos);
}
TEST(Report, SameRunSameBytes) {
  const RunResult a = MixedRun();
  const RunResult b = MixedRun();
  ASSERT_TRUE(WriteChromeTrace(a, TestTmp("a.json")).ok());
  ASSERT_TRUE(WriteChromeTrace(b, TestTmp("b.json")).ok());
  EXPECT_EQ(ReadWholeFile(TestTmp("a.json")), ReadWholeFile(TestTmp("b.json")));
  EXPECT_EQ(SummaryTable(a), SummaryTable(b));
}
// The mean NPU of a run whose NPUs add up past the end of simulated time (int64 picoseconds):
// four NPUs of 5e18 ps each sum to 2e19. The mean is 5e18 ps = 5e9 ms, not the saturated sum
// divided by four (2305843009.214 ms).
TEST(Report, SummaryMeanDoesNotSaturate) {
  RunResult r = MixedRun();
  ASSERT_EQ(r.num_npus(), 4);
  const Time long_time = Time::FromPs(5'000'000'000'000'000'000);
  for (int i = 0; i < 4; ++i) {
    r.npus[i].finish = long_time;
    r.breakdown[i] = NpuBreakdown{};
    r.breakdown[i].total = long_time;
    r.breakdown[i].communication = long_time;
    r.breakdown[i].exposed = long_time;
  }
  r.end = long_time;
  const std::string summary = SummaryTable(r);
  for (const char* row : {"total", "communication", "exposed communication"}) {
    const size_t at = summary.find(std::string("\n  ") + row + " ");
    ASSERT_NE(at, std::string::npos) << row << " in\n" << summary;
    const std::string line = summary.substr(at + 1, summary.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find("5000000000.000 5000000000.000"), std::string::npos) << line;
  }
}
// With nccl-model, the summary lists NCCL's choice for each distinct collective, alike ones on one
// line; without, nothing.
TEST(Report, SummaryListsNcclChoices) {
  RunResult r = MixedRun();
  EXPECT_EQ(SummaryTable(r).find("NCCL choices"), std::string::npos);
  NcclTunedCollective c;
  c.type = CollectiveType::kAllReduce;
  c.size = 1024;
  c.group_size = 8;
  c.choice = "ring/LL";
  c.predicted = Time::FromNs(25880);
  r.nccl_choices.push_back(c);
  const std::string summary = SummaryTable(r);
  EXPECT_NE(summary.find("NCCL choices (nccl-model), each collective alone:\n"
                         "    " +
                         std::string(CollectiveTypeName(CollectiveType::kAllReduce)) +
                         " 1024 B on 8 NPUs: ring/LL, 25.880 us\n"),
            std::string::npos)
      << summary;
  // Another group with the same choice and time (a copy's) shares the line; one of another
  // size gets its own.
  c.group = 7;
  r.nccl_choices.push_back(c);
  c.size = 2048;
  r.nccl_choices.push_back(c);
  const std::string shared = SummaryTable(r);
  EXPECT_NE(shared.find(" 1024 B on 8 NPUs: ring/LL, 25.880 us (x2)\n    " +
                        std::string(CollectiveTypeName(CollectiveType::kAllReduce)) +
                        " 2048 B on 8 NPUs: ring/LL, 25.880 us\n"),
            std::string::npos)
      << shared;
}
TEST(Report, PortStatisticsWhenTheBackendHasQueues) {
  RunResult r = MixedRun();
  ASSERT_GE(r.links.size(), 2u);
  EXPECT_EQ(SummaryTable(r).find("deepest queues"), std::string::npos);
  LinkStats::Port port;
  port.max_queue_bytes = 8192;
  port.mean_queue_bytes = 1500;
  port.paused = r.end;  // held by flow control for the whole run: 100%
  r.links[1].port = port;
  const std::string summary = SummaryTable(r);
  EXPECT_NE(summary.find("deepest queues: " + r.links[1].name +
                         " max 8.19 KB (mean 1.5 KB, paused 100.0%)"),
            std::string::npos)
      << summary;
  const std::string json = TestTmp("ports.report.json");
  ASSERT_TRUE(WriteReportJson(r, json).ok());
  const YAML::Node doc = YAML::LoadFile(json);
  EXPECT_EQ(doc["links"][1]["max_queue_bytes"].as<uint64_t>(), 8192u);
  EXPECT_EQ(doc["links"][1]["drops"].as<uint64_t>(), 0u);
  EXPECT_FALSE(doc["links"][0]["max_queue_bytes"].IsDefined());
  // The CSV report has the same columns (it had left them out), empty for a link without a port.
  ASSERT_TRUE(WriteReportCsv(r, TestTmp("ports")).ok());
  const std::string csv = ReadWholeFile(TestTmp("ports.links.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "link,bytes,busy_ns,utilisation,max_queue_bytes,mean_queue_bytes,pause_ns,drops");
  EXPECT_NE(csv.find("\n" + r.links[1].name + "," + std::to_string(r.links[1].bytes) + "," +
                     std::to_string(r.links[1].busy.WholeNs())),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",8192,1500," + std::to_string(r.end.WholeNs()) + ",0\n"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",,,,\n"), std::string::npos) << csv;
  // Queue depths over time become counters of one more process in the timeline.
  r.port_queues.push_back(
      QueueSeries{"sw0->npu3", {{Time::FromNs(1000), 8192}, {Time::FromNs(2000), 0}}});
  const std::string trace = TestTmp("ports.trace.json");
  ASSERT_TRUE(WriteChromeTrace(r, trace).ok());
  const std::string text = ReadWholeFile(trace);
  // Process 5, after the 4 NPUs (the critical path is then 6), on its own tid.
  const size_t counter =
      text.find(R"({"ph":"C","name":"sw0->npu3","cat":"network queue","pid":5,)");
  ASSERT_NE(counter, std::string::npos) << text.substr(0, 2000);
  EXPECT_EQ(text.substr(text.find(",\"ts\":", counter), 35),
            R"(,"ts":1.000,"args":{"bytes":8192}},)");
  EXPECT_NE(text.find(R"("name":"process_name","pid":6,)"), std::string::npos);
  EXPECT_NE(text.find(R"("args":{"name":"network queues, bytes"})"), std::string::npos);
  const YAML::Node parsed = YAML::LoadFile(trace);
  EXPECT_GT(parsed["traceEvents"].size(), 2u);
}
// Every critical path runs from 0 to the step time without a gap or an overlap.
void ExpectWholeStep(const RunResult& r) {
  ASSERT_FALSE(r.critical_path.empty());
  Time t;
  for (const CriticalPathStep& s : r.critical_path) {
    EXPECT_EQ(s.start, t) << "NPU " << s.npu << " node " << s.node_id;
    EXPECT_LT(s.start, s.end);
    t = s.end;
  }
  EXPECT_EQ(t, r.end);
  const CriticalPathTotals totals = CriticalPathTotalsOf(r);
  EXPECT_EQ(totals.total, Time::FromNs(r.end.WholeNs()));
  EXPECT_EQ(totals.compute + totals.cpu + totals.communication + totals.memory, totals.total);
}
// Times in ps (the packet backend's): a duration printed beside its ends is their difference,
// and the critical path's parts add up to its total and the step time, in whole ns. Each had
// been truncated on its own (a segment of [5000.7, 105000.6] ns printed 99999 beside 5000 and
// 105000; the parts summed short of the total).
TEST(Report, DurationsAreTheDifferencesOfTheirPrintedEnds) {
  RunResult r = MixedRun();
  ASSERT_EQ(r.critical_path.size(), 2u);
  r.critical_path[0].end = r.critical_path[1].start = r.critical_path[0].end + Time::FromPs(700);
  r.critical_path[1].end = r.end = r.end + Time::FromPs(600);
  const CriticalPathTotals totals = CriticalPathTotalsOf(r);
  EXPECT_EQ(totals.compute + totals.cpu + totals.communication + totals.memory, totals.total);
  EXPECT_EQ(totals.total, Time::FromNs(r.end.WholeNs()));
  const std::string path = TestTmp("durations.json");
  ASSERT_TRUE(WriteReportJson(r, path).ok());
  const YAML::Node doc = YAML::LoadFile(path);
  const YAML::Node cp = doc["critical_path"];
  int64_t sum = 0;
  for (const YAML::Node& seg : cp["segments"]) {
    EXPECT_EQ(seg["duration"].as<int64_t>(), seg["end"].as<int64_t>() - seg["start"].as<int64_t>());
    sum += seg["duration"].as<int64_t>();
  }
  EXPECT_EQ(sum, doc["step_time_ns"].as<int64_t>());
  EXPECT_EQ(cp["total"].as<int64_t>(), sum);
  EXPECT_EQ(cp["compute"].as<int64_t>() + cp["cpu"].as<int64_t>() +
                cp["communication"].as<int64_t>() + cp["memory"].as<int64_t>(),
            sum);
  for (const YAML::Node& c : doc["collectives"]) {
    EXPECT_EQ(c["duration"].as<int64_t>(), c["end"].as<int64_t>() - c["start"].as<int64_t>());
  }
  // The timeline's critical-path track: each slice ends where the next begins (a slice's dur had
  // been its own span truncated, 1 ns short of the next ts), and the last at the step time.
  const std::string trace = TestTmp("durations.trace.json");
  ASSERT_TRUE(WriteChromeTrace(r, trace).ok());
  const YAML::Node events = YAML::LoadFile(trace)["traceEvents"];
  std::vector<std::pair<int64_t, int64_t>> slices;  // (ts, dur) in ns
  for (const YAML::Node& e : events) {
    if (e["cat"] && e["cat"].as<std::string>() == "critical path") {
      slices.emplace_back(std::llround(e["ts"].as<double>() * 1000),
                          std::llround(e["dur"].as<double>() * 1000));
    }
  }
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].first + slices[0].second, slices[1].first);
  EXPECT_EQ(slices[1].first + slices[1].second, r.end.WholeNs());
  // The summary's table, in whole ns as its step time (105000.6 ns had read 105.001 there).
  r.breakdown[0].total = r.breakdown[0].total + Time::FromPs(600);
  const std::string summary = SummaryTable(r);
  EXPECT_NE(summary.find("105.000"), std::string::npos) << summary;
  EXPECT_EQ(summary.find(".001"), std::string::npos) << summary;
}
// MixedRun: NPU 0's 100 us kernel after fwd bounds the step (105 us); nothing else is on it.
TEST(CriticalPath, MixedRunIsBoundByTheLongKernel) {
  const RunResult r = MixedRun();
  ExpectWholeStep(r);
  ASSERT_EQ(r.critical_path.size(), 2u);
  EXPECT_EQ(r.critical_path[0].name, "fwd");
  EXPECT_EQ(r.critical_path[0].link, PathLink::kStart);
  EXPECT_EQ(r.critical_path[1].name, "long_kernel");
  EXPECT_EQ(r.critical_path[1].link, PathLink::kDependency);
  EXPECT_EQ(r.critical_path[1].from_node_id, 1u);
  EXPECT_NE(SummaryTable(r).find("\n  critical path: GPU compute 100.0% (2 nodes on NPU 0)\n"),
            std::string::npos)
      << SummaryTable(r);
}
// 4 NPUs: fwd (5 us; 20 us on the straggler, NPU 2) -> 1 MiB all-reduce behind a 3 us launch
// floor -> bwd (10 us on NPU 0, 1 us on the others). NPU 0 ends last, but nobody's all-reduce
// can end before NPU 2 joins it at 23 us: the path is NPU 2's fwd [0, 20 us) and launch floor
// [20, 23 us), then NPU 0's all-reduce from 23 us and its bwd.
TEST(CriticalPath, GoesThroughTheStragglerAndItsLaunchFloor) {
  std::vector<std::vector<Node>> ranks(4);
  for (int i = 0; i < 4; ++i) {
    ranks[i] = {et::MakeCompNode(1, "fwd", i == 2 ? 20 : 5),
                et::MakeCollNode(2, "grad_sync", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1}),
                et::MakeCompNode(3, "bwd", i == 0 ? 10 : 1, {2})};
  }
  const RunResult r = RecordedRun("straggler", ranks, R"(, "collective-launch-latency": 3000)");
  ExpectWholeStep(r);
  const std::vector<CriticalPathStep>& p = r.critical_path;
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].npu, 2);
  EXPECT_EQ(p[0].name, "fwd");
  EXPECT_EQ(p[0].link, PathLink::kStart);
  EXPECT_EQ(p[0].end, Time::FromNs(20000));
  EXPECT_EQ(p[1].npu, 2);
  EXPECT_EQ(p[1].name, "grad_sync");
  EXPECT_EQ(p[1].link, PathLink::kDependency);
  EXPECT_EQ(p[1].end, Time::FromNs(23000));
  EXPECT_EQ(p[2].npu, 0);
  EXPECT_EQ(p[2].name, "grad_sync");
  EXPECT_EQ(p[2].link, PathLink::kCollective);
  EXPECT_EQ(p[2].from_npu, 2);
  EXPECT_EQ(p[2].from_node_id, 2u);
  EXPECT_EQ(p[3].npu, 0);
  EXPECT_EQ(p[3].name, "bwd");
  EXPECT_EQ(p[3].end - p[3].start, Time::FromNs(10000));
  const CriticalPathTotals t = CriticalPathTotalsOf(r);
  EXPECT_EQ(t.compute, Time::FromNs(30000));
  EXPECT_EQ(t.communication, r.end - Time::FromNs(30000));
  EXPECT_EQ(t.npus, (std::vector<int>{0, 2}));
  EXPECT_EQ(t.nodes, 4);
}
// NPU 1 posts its receive at once; NPU 0 sends after 30 us of compute. The path is NPU 0's
// compute, the message (on NPU 1, from the send), NPU 1's 2 us of compute.
TEST(CriticalPath, GoesThroughALateSend) {
  std::vector<std::vector<Node>> ranks(2);
  ranks[0] = {et::MakeCompNode(1, "produce", 30),
              et::MakeSendNode(2, /*peer=*/1, 1 << 20, /*tag=*/5, {1})};
  ranks[1] = {et::MakeRecvNode(7, /*peer=*/0, 1 << 20, /*tag=*/5, {}),
              et::MakeCompNode(8, "consume", 2, {7})};
  const RunResult r = RecordedRun("late_send", ranks);
  ExpectWholeStep(r);
  const std::vector<CriticalPathStep>& p = r.critical_path;
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].npu, 0);
  EXPECT_EQ(p[0].name, "produce");
  EXPECT_EQ(p[1].npu, 1);
  EXPECT_EQ(p[1].node_id, 7u);
  EXPECT_EQ(p[1].start, Time::FromNs(30000));
  EXPECT_EQ(p[1].link, PathLink::kMessage);
  EXPECT_EQ(p[1].from_npu, 0);
  EXPECT_EQ(p[1].from_node_id, 2u);
  EXPECT_EQ(p[2].name, "consume");
  EXPECT_EQ(p[2].start, r.end - Time::FromNs(2000));
}
// Two independent kernels on one GPU slot: the second (by id) waits for the first's slot.
TEST(CriticalPath, NamesTheWaitForABusySlot) {
  std::vector<std::vector<Node>> ranks(2);
  for (auto& r : ranks) r = {et::MakeCompNode(1, "first", 10), et::MakeCompNode(2, "second", 5)};
  const RunResult r = RecordedRun("slot", ranks);
  ExpectWholeStep(r);
  const std::vector<CriticalPathStep>& p = r.critical_path;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].name, "first");
  EXPECT_EQ(p[1].name, "second");
  EXPECT_EQ(p[1].link, PathLink::kSlot);
  EXPECT_EQ(p[1].from_node_id, 1u);
  EXPECT_EQ(CriticalPathTotalsOf(r).slot_waits, 1);
  // The report carries it: JSON, CSV and a process of the timeline.
  const std::string json = TestTmp("slot.report.json");
  ASSERT_TRUE(WriteReportJson(r, json).ok());
  const YAML::Node doc = YAML::LoadFile(json);
  EXPECT_EQ(doc["critical_path"]["total"].as<int64_t>(), 15000);
  EXPECT_EQ(doc["critical_path"]["compute"].as<int64_t>(), 15000);
  EXPECT_EQ(doc["critical_path"]["slot_waits"].as<int>(), 1);
  EXPECT_EQ(doc["critical_path"]["segments"][1]["after"].as<std::string>(), "slot");
  EXPECT_EQ(doc["critical_path"]["segments"][1]["after_node_id"].as<uint64_t>(), 1u);
  ASSERT_TRUE(WriteReportCsv(r, TestTmp("slot.report")).ok());
  EXPECT_EQ(ReadWholeFile(TestTmp("slot.report.critical_path.csv")),
            "npu,node_id,name,kind,start_ns,end_ns,duration_ns,after,after_npu,after_node_id\n"
            "0,1,first,GPU compute,0,10000,10000,start,,\n"
            "0,2,second,GPU compute,10000,15000,5000,slot,0,1\n");
  ASSERT_TRUE(WriteChromeTrace(r, TestTmp("slot.trace.json")).ok());
  const std::string trace = ReadWholeFile(TestTmp("slot.trace.json"));
  EXPECT_NE(trace.find(R"("args":{"name":"critical path"})"), std::string::npos);
  EXPECT_NE(trace.find(R"({"ph":"X","name":"NPU 0: second","cat":"critical path","pid":3,)"),
            std::string::npos)
      << trace;
}
// A dependency through a node that takes no time (metadata) is still a dependency: "second"
// waits for "first" through "meta", not for its slot.
TEST(CriticalPath, DependencyThroughMetadata) {
  std::vector<std::vector<Node>> ranks(2);
  for (auto& r : ranks) {
    r = {et::MakeCompNode(1, "first", 10),
         et::MakeNode(2, "meta", ChakraProtoMsg::METADATA_NODE, {1}),
         et::MakeCompNode(3, "second", 5, {2})};
  }
  const RunResult r = RecordedRun("through_meta", ranks);
  ExpectWholeStep(r);
  const std::vector<CriticalPathStep>& p = r.critical_path;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].name, "second");
  EXPECT_EQ(p[1].link, PathLink::kDependency);
  EXPECT_EQ(p[1].from_node_id, 1u);
}
}  // namespace
}  // namespace orrery
