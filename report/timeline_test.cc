// The timelines (timeline.cc): the Chrome trace as real viewers read it, and Chakra's
// timeline_visualizer input as its documented columns and its source read it.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/test_files.h"
#include "report/outputs.h"
#include "report/recorded_run.h"
#include "tests/test_case.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

// The bundled example's Chrome trace: valid JSON, one named process per NPU, "X" events sorted
// by time and never overlapping within a thread; and what real viewers need of it: pids from 1
// (Perfetto treats pid 0 as the idle process; tracerbench drops it), every tid unique over the
// file and no pid (Perfetto takes a tid met in two processes for one thread; a tid equal to its
// pid is drawn as the process's main thread), a "cat" on every event (tracerbench fails without
// one), and slices that touch meeting exactly in the doubles JavaScript viewers add ("ts" +
// "dur" had passed the next "ts" by a rounding step: Chrome DevTools dropped such slices).
TEST(Timeline, BundledExampleIsAWellFormedChromeTrace) {
  RunOptions o;
  o.workload = "examples/dp_step/dp_step";
  o.system_config = "examples/dp_step/system.json";
  o.network_config = "examples/dp_step/network.yml";
  o.memory_config = "examples/dp_step/memory.json";
  o.record = true;
  StatusOr<RunResult> r = RunSimulation(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // One sample per queue and instant, the last length (another queue's change between two of
  // one queue's had kept both).
  for (int npu = 0; npu < r->num_npus(); ++npu) {
    std::set<std::pair<int64_t, int>> seen;
    for (const QueueSample& q : r->queues[npu]) {
      EXPECT_TRUE(seen.emplace(q.t.ps(), q.queue).second)
          << "NPU " << npu << " queue " << q.queue << " at " << q.t.ps() << " ps twice";
    }
  }
  const std::string path = TestTmp("dp_step.trace.json");
  ASSERT_TRUE(WriteChromeTrace(*r, path).ok());
  const YAML::Node doc = YAML::LoadFile(path);  // JSON is YAML: a parse error throws
  const YAML::Node events = doc["traceEvents"];
  ASSERT_TRUE(events.IsSequence());
  std::map<int, std::string> processes;
  std::map<int, int> process_of_tid;  // every tid any event names -> its pid
  std::map<std::pair<int, int>, double> track_end;
  // Per thread, the slices' (ts, end) as a viewer reads them, in doubles, and in whole ns.
  std::map<int, std::vector<std::pair<double, double>>> slices;
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> slices_ns;
  double last_ts = -1;
  int complete = 0, chunks = 0, counters = 0, on_path = 0;
  for (const YAML::Node& e : events) {
    const std::string ph = e["ph"].as<std::string>();
    const int pid = e["pid"].as<int>();
    const int tid = e["tid"].as<int>();
    EXPECT_GE(pid, 1);
    ASSERT_TRUE(e["cat"].IsDefined()) << ph << " " << e["name"].as<std::string>();
    EXPECT_FALSE(e["cat"].as<std::string>().empty());
    const auto [it, added] = process_of_tid.emplace(tid, pid);
    EXPECT_EQ(it->second, pid) << "tid " << tid << " in two processes";
    if (ph == "M") {
      if (e["name"].as<std::string>() == "process_name") {
        processes[pid] = e["args"]["name"].as<std::string>();
      }
      continue;
    }
    if (ph == "C") {  // a queue-length counter
      EXPECT_GE(e["ts"].as<double>(), last_ts) << "events must be sorted by time";
      last_ts = e["ts"].as<double>();
      EXPECT_GE(e["args"]["streams"].as<int>(), 0);
      ++counters;
      continue;
    }
    ASSERT_EQ(ph, "X");
    if (e["cat"].as<std::string>() == "critical path") {
      ++on_path;
      EXPECT_TRUE(e["args"]["npu"].IsDefined());
    } else if (e["cat"].as<std::string>() == "chunk") {
      ++chunks;
      EXPECT_TRUE(e["args"]["algorithm"].IsDefined());
      EXPECT_GT(e["args"]["bytes"].as<uint64_t>(), 0u);
    } else {
      ++complete;
    }
    const double ts = e["ts"].as<double>();
    const double dur = e["dur"].as<double>();
    EXPECT_GE(ts, last_ts) << "events must be sorted by time";
    EXPECT_GE(dur, 0);
    last_ts = ts;
    const auto key = std::make_pair(pid, tid);
    auto end = track_end.find(key);
    if (end != track_end.end()) {
      EXPECT_GE(ts, end->second) << "overlap on process " << pid << " thread " << tid << " at "
                                 << ts << " (" << e["name"].as<std::string>() << ")";
    }
    track_end[key] = ts + dur;
    slices[tid].emplace_back(ts, ts + dur);
    slices_ns[tid].emplace_back(std::llround(ts * 1000), std::llround((ts + dur) * 1000));
    EXPECT_TRUE(e["args"]["node_id"].IsDefined());
  }
  for (const auto& [tid, pid] : process_of_tid) {
    EXPECT_EQ(processes.count(tid), 0u) << "tid " << tid << " is also a pid";
  }
  // Slices of a thread that touch in whole ns touch in the viewer's doubles too (or, where no
  // double lands on the next start, end a ulp before it; never after).
  int touching = 0, meeting = 0;
  for (const auto& [tid, s] : slices) {
    for (size_t i = 1; i < s.size(); ++i) {
      if (slices_ns[tid][i - 1].second != slices_ns[tid][i].first) continue;
      ++touching;
      meeting += s[i - 1].second == s[i].first;
      EXPECT_LE(s[i - 1].second, s[i].first) << "thread " << tid << " at " << s[i].first;
    }
  }
  EXPECT_GT(touching, 10);
  EXPECT_GE(meeting, touching * 0.95) << meeting << " of " << touching;
  ASSERT_EQ(processes.size(), 9u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(processes[i + 1], "NPU " + std::to_string(i));
  EXPECT_EQ(processes[9], "critical path");
  EXPECT_EQ(on_path, static_cast<int>(r->critical_path.size()));
  EXPECT_GT(on_path, 1);
  size_t nodes = 0;
  for (const auto& a : r->activity) nodes += a.size();
  EXPECT_EQ(complete, static_cast<int>(nodes));
  EXPECT_GT(complete, 100);
  size_t phases = 0, samples = 0;
  for (const auto& p : r->phases) phases += p.size();
  for (const auto& q : r->queues) samples += q.size();
  EXPECT_EQ(chunks, static_cast<int>(phases));
  EXPECT_GT(chunks, 0);
  EXPECT_EQ(counters, static_cast<int>(samples));
}
// A slice's "dur" such that "ts" + "dur" is, in doubles, exactly the end's own "ts": 100 ns to
// 300 ns is 0.1 + 0.2 µs, whose double sum is 0.30000000000000004, not 0.3; so "dur" is a
// double just below 0.2, written in full (0.1 + 0.19999999999999998 == 0.3). Over many spans the
// sum never passes the end, lands on it exactly for nearly all (not when every sum from that start
// is a tie rounding to even: 1 ns to 14 ns), and the text still reads as the whole ns (as Perfetto
// rounds µs x 1000).
TEST(Timeline, SliceEndsMeetTheNextStartExactly) {
  EXPECT_FALSE(0.1 + 0.2 == 0.3);
  const std::string d03 = TimelineDurationText(Time::FromNs(100), Time::FromNs(300));
  EXPECT_NE(d03, "0.200");
  EXPECT_TRUE(0.1 + std::strtod(d03.c_str(), nullptr) == 0.3) << d03;
  EXPECT_EQ(TimelineDurationText(Time::FromNs(5000), Time::FromNs(48000)), "43.000");
  EXPECT_EQ(TimelineDurationText(Time::FromNs(7), Time::FromNs(7)), "0.000");
  auto us = [](int64_t ns) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                  static_cast<long long>(ns % 1000));
    return std::strtod(buf, nullptr);
  };
  // 0.001 + 0.013: no double lands on 0.014 (every sum is a tie, rounded to an even neighbour).
  const double tie =
      std::strtod(TimelineDurationText(Time::FromNs(1), Time::FromNs(14)).c_str(), nullptr);
  EXPECT_LT(us(1) + tie, us(14));
  EXPECT_EQ(std::llround(tie * 1000), 13);
  uint64_t x = 12345;  // a fixed linear congruential sequence
  int plain = 0, exact = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t start = static_cast<int64_t>((x >> 11) % (int64_t{1} << (i % 45)));
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t span = static_cast<int64_t>((x >> 11) % (int64_t{1} << (i % 37)));
    const std::string dur = TimelineDurationText(Time::FromNs(start), Time::FromNs(start + span));
    const double d = std::strtod(dur.c_str(), nullptr);
    const double ts = us(start), end = us(start + span);
    ASSERT_LE(ts + d, end) << start << " + " << span << ": " << dur;
    ASSERT_EQ(std::llround(d * 1000), span) << start << " + " << span << ": " << dur;
    exact += ts + d == end;
    plain += dur.size() >= 4 && dur[dur.size() - 4] == '.';
  }
  EXPECT_GT(exact, n - n / 100);  // measured: 99.5%
  EXPECT_GT(plain, n / 2);        // most spans need no more than their 3 decimals
}
// The lines of `text` that contain `needle`, in order.
std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == ',') line.pop_back();  // the Chrome trace's separators
    if (line.find(needle) != std::string::npos) out.push_back(line);
    begin = end + 1;
  }
  return out;
}
// A Chrome trace's text with every "tid":N replaced by "tid":"<its thread's name>" (a process's
// own tid, which names no thread, by "process").
std::string NamedThreads(const std::string& text) {
  std::map<std::string, std::string> name_of;
  for (const YAML::Node& e : YAML::Load(text)["traceEvents"]) {
    if (e["ph"].as<std::string>() == "M" && e["name"].as<std::string>() == "thread_name") {
      name_of[e["tid"].as<std::string>()] = e["args"]["name"].as<std::string>();
    }
  }
  std::string out;
  size_t from = 0;
  for (size_t at = text.find("\"tid\":"); at != std::string::npos;
       at = text.find("\"tid\":", from)) {
    const size_t digits = at + 6, end = text.find_first_not_of("0123456789", digits);
    const auto name = name_of.find(text.substr(digits, end - digits));
    out += text.substr(from, digits - from) + "\"" +
           (name == name_of.end() ? "process" : name->second) + "\"";
    from = end;
  }
  return out + text.substr(from);
}
// --timeline-npus: the timelines show those NPUs as the full ones do, and no other; chunk
// phases are kept for them only; the run and its report are the same.
TEST(Timeline, ShowsOnlyTheNpusAsked) {
  RunOptions o = WriteTestCase("shown", MixedGraphRanks(), kRingTestSystem, "Ring");
  o.record = true;
  StatusOr<RunResult> all = RunSimulation(o);
  ASSERT_TRUE(all.ok()) << all.status().message();
  o.timeline_npus = "1,3";
  StatusOr<RunResult> some = RunSimulation(o);
  ASSERT_TRUE(some.ok()) << some.status().message();
  EXPECT_EQ(some->end, all->end);
  ASSERT_EQ(some->phases.size(), 4u);
  for (size_t npu : {0u, 2u}) EXPECT_TRUE(some->phases[npu].empty()) << npu;
  for (size_t npu : {1u, 3u}) {
    EXPECT_FALSE(all->phases[npu].empty()) << npu;
    EXPECT_EQ(some->phases[npu].size(), all->phases[npu].size()) << npu;
  }
  const std::string chrome_all = TestTmp("shown.all.json"), chrome_some = TestTmp("shown.json");
  ASSERT_TRUE(WriteChromeTrace(*all, chrome_all).ok());
  ASSERT_TRUE(WriteChromeTrace(*some, chrome_some).ok());
  // Thread ids are numbered over the processes shown, so lines are compared with each tid
  // replaced by its thread's name.
  const std::string a = NamedThreads(ReadWholeFile(chrome_all));
  const std::string b = NamedThreads(ReadWholeFile(chrome_some));
  for (const char* npu : {"\"pid\":2,", "\"pid\":4,"}) {  // NPUs 1 and 3
    EXPECT_FALSE(LinesWith(b, npu).empty()) << npu;
    EXPECT_EQ(LinesWith(b, npu), LinesWith(a, npu)) << npu;
  }
  for (const char* npu : {"\"pid\":1,", "\"pid\":3,"}) {  // NPUs 0 and 2
    EXPECT_FALSE(LinesWith(a, npu).empty()) << npu;
    EXPECT_TRUE(LinesWith(b, npu).empty()) << npu;
  }
  // The critical path (process 5, after the NPUs) is kept whole.
  EXPECT_FALSE(LinesWith(b, "\"cat\":\"critical path\"").empty());
  EXPECT_EQ(LinesWith(b, "\"pid\":5,"), LinesWith(a, "\"pid\":5,"));
  EXPECT_TRUE(YAML::LoadFile(chrome_some)["traceEvents"].IsSequence());
  const std::string chakra_all = TestTmp("shown.all.txt"), chakra_some = TestTmp("shown.txt");
  ASSERT_TRUE(WriteChakraTimeline(*all, chakra_all).ok());
  ASSERT_TRUE(WriteChakraTimeline(*some, chakra_some).ok());
  const std::string c = ReadWholeFile(chakra_all), d = ReadWholeFile(chakra_some);
  EXPECT_EQ(LinesWith(d, "sys->id="), [&] {
    std::vector<std::string> kept;
    for (const std::string& l : LinesWith(c, "sys->id=")) {
      if (l.find("sys->id=1,") != std::string::npos || l.find("sys->id=3,") != std::string::npos) {
        kept.push_back(l);
      }
    }
    return kept;
  }());
  EXPECT_FALSE(LinesWith(d, "sys->id=3,").empty());
  const std::string report_all = TestTmp("shown.all.report.json");
  const std::string report_some = TestTmp("shown.report.json");
  ASSERT_TRUE(WriteReportJson(*all, report_all).ok());
  ASSERT_TRUE(WriteReportJson(*some, report_some).ok());
  EXPECT_EQ(ReadWholeFile(report_all), ReadWholeFile(report_some));
  o.timeline_npus = "1,4";
  StatusOr<RunResult> bad = RunSimulation(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(
      bad.status().message().find("--timeline-npus '1,4' names NPU 4; expected NPU ids in [0, 3]"),
      std::string::npos)
      << bad.status().message();
}
TEST(Timeline, ChakraVisualizerLinesPairIssueAndCallback) {
  const RunResult r = MixedRun();
  const std::string path = TestTmp("mixed.timeline.txt");
  ASSERT_TRUE(WriteChakraTimeline(r, path).ok());
  const std::string text = ReadWholeFile(path);
  EXPECT_NE(text.find("issue,sys->id=0, tick=0, node->id=1, node->name=fwd (COMP_NODE)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("callback,sys->id=1, tick=68031, node->id=4, node->name=recv"),
            std::string::npos)
      << text;
  // At 5000 ns fwd ends before the collective starts.
  EXPECT_LT(text.find("callback,sys->id=0, tick=5000, node->id=1"),
            text.find("issue,sys->id=0, tick=5000, node->id=2"));
}
// Chakra's timeline_visualizer (mlcommons/chakra, src/timeline_visualizer/timeline_visualizer.py)
// reads the columns USER_GUIDE.md documents, "issue,<dummy_str>=npu_id,<dummy_str>=curr_cycle,
// <dummy_str>=node_id,<dummy_str>=node_name" (and "callback,..."): it splits a line at ',',
// takes each column's text after its '=' (split("=")[1]), reads npu, cycle and node id as ints,
// and places the node by substrings of its name (get_tid: MEM_LOAD_NODE or MEM_STORE_NODE with
// LOCAL_MEMORY, then with REMOTE_MEMORY; COMP_NODE; COMM_SEND_NODE, COMM_RECV_NODE or
// COMM_COLL_NODE; anything else stops it: "Node type cannot be identified from send"). Every line
// here is read the same way and placed as its node's type says, names with ',' and '=' and
// type words in them included; metadata nodes, which it cannot place, are left out.
TEST(Timeline, ChakraVisualizerReadsEveryLine) {
  RunResult r = MixedRun();
  auto add = [&](uint64_t id, const char* name, et::NodeType type, Track track) {
    NodeRecord n;
    n.id = id;
    n.name = name;
    n.type = type;
    n.track = track;
    n.start = Time::FromNs(200000 + 10 * id);
    n.end = Time::FromNs(200005 + 10 * id);
    r.activity[1].push_back(n);
  };
  add(90, "w,=COMP_NODE x", et::NodeType::kMemLoad, Track::kMemory);
  add(91, "kernel COMM_SEND_NODE", et::NodeType::kComp, Track::kGpu);
  add(92, "store LOCAL_MEMORY", et::NodeType::kMemStore, Track::kMemory);
  add(93, "pg", et::NodeType::kMetadata, Track::kCpu);
  const std::string path = TestTmp("visualizer.txt");
  ASSERT_TRUE(WriteChakraTimeline(r, path).ok());
  std::istringstream in(ReadWholeFile(path));
  enum Tid { kLocalMemory = 1, kRemoteMemory, kComp, kComm };
  auto has = [](const std::string& s, const char* w) { return s.find(w) != std::string::npos; };
  auto get_tid = [&](const std::string& name) {
    const bool mem = has(name, "MEM_LOAD_NODE") || has(name, "MEM_STORE_NODE");
    if (mem && has(name, "LOCAL_MEMORY")) return kLocalMemory;
    if (mem && has(name, "REMOTE_MEMORY")) return kRemoteMemory;
    if (has(name, "COMP_NODE")) return kComp;
    if (has(name, "COMM_SEND_NODE") || has(name, "COMM_RECV_NODE") || has(name, "COMM_COLL_NODE")) {
      return kComm;
    }
    return Tid{};
  };
  std::map<std::pair<int, uint64_t>, const NodeRecord*> node;
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    for (const NodeRecord& a : r.activity[npu]) node[{npu, a.id}] = &a;
  }
  std::map<std::pair<int, uint64_t>, std::string> issued;  // (npu, id) -> name, until callback
  std::set<std::pair<int, uint64_t>> seen;
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::vector<std::string> cols;
    for (size_t b = 0, e; b <= line.size(); b = e + 1) {
      e = std::min(line.find(',', b), line.size());
      cols.push_back(line.substr(b, e - b));
    }
    ASSERT_EQ(cols.size(), 5u) << line;
    ASSERT_TRUE(cols[0] == "issue" || cols[0] == "callback") << line;
    std::vector<std::string> value;
    for (size_t c = 1; c < 5; ++c) {
      ASSERT_EQ(std::count(cols[c].begin(), cols[c].end(), '='), 1) << line;
      value.push_back(cols[c].substr(cols[c].find('=') + 1));
    }
    const int npu = std::stoi(value[0]);
    const uint64_t id = std::stoull(value[2]);
    EXPECT_GE(std::stoll(value[1]), 0) << line;
    const auto key = std::make_pair(npu, id);
    ASSERT_TRUE(node.count(key)) << line;
    if (cols[0] == "issue") {
      EXPECT_TRUE(issued.emplace(key, value[3]).second) << line;
      continue;
    }
    ASSERT_TRUE(issued.count(key)) << "callback before its issue: " << line;
    const Tid tid = get_tid(issued[key]);
    issued.erase(key);
    seen.insert(key);
    switch (node[key]->type) {
      case et::NodeType::kComp:
        EXPECT_EQ(tid, kComp) << line;
        break;
      case et::NodeType::kMemLoad:
      case et::NodeType::kMemStore:
        EXPECT_EQ(tid, kRemoteMemory) << line;  // Orrery's memory nodes are remote memory
        break;
      default:
        EXPECT_EQ(tid, kComm) << line;
    }
  }
  EXPECT_TRUE(issued.empty());
  EXPECT_EQ(seen.size(), node.size() - 1);  // all but the metadata node
  EXPECT_EQ(seen.count({1, 93}), 0u);
  EXPECT_EQ(lines, 2 * static_cast<int>(seen.size()));
  EXPECT_EQ(ChakraTimelineName("w,=COMP_NODE x", et::NodeType::kMemLoad),
            "w;:COMP_node x (MEM_LOAD_NODE REMOTE_MEMORY)");
  EXPECT_EQ(ChakraTimelineName("store LOCAL_MEMORY", et::NodeType::kMemStore),
            "store LOCAL_memory (MEM_STORE_NODE REMOTE_MEMORY)");
}
// A backend with output queues (packet) adds its port statistics to the JSON report and a
// "deepest queues" line to the summary; the analytical backends show neither.
// The threads of process `pid` in a Chrome trace: their names in sort order, each name's tid, and
// the tid of each slice by its name (the last of a name).
struct Threads {
  std::vector<std::string> sorted;
  std::map<std::string, int> tid;
  std::map<std::string, int> slices;
};
Threads ThreadsOf(const std::string& path, int pid) {
  Threads t;
  std::map<int, std::string> name_of;
  std::map<int, int> sort_of;
  for (const YAML::Node& e : YAML::LoadFile(path)["traceEvents"]) {
    if (e["pid"].as<int>() != pid) continue;
    const std::string ph = e["ph"].as<std::string>(), name = e["name"].as<std::string>();
    if (ph == "M" && name == "thread_name") {
      name_of[e["tid"].as<int>()] = e["args"]["name"].as<std::string>();
    } else if (ph == "M" && name == "thread_sort_index") {
      sort_of[e["tid"].as<int>()] = e["args"]["sort_index"].as<int>();
    } else if (ph == "X") {
      t.slices[name] = e["tid"].as<int>();
    }
  }
  std::map<int, std::string> by_sort;
  for (const auto& [tid, name] : name_of) {
    t.tid[name] = tid;
    by_sort[sort_of[tid]] = name;
  }
  for (const auto& [sort, name] : by_sort) t.sorted.push_back(name);
  return t;
}
// Collectives overlap on one NPU with communication-slots > 1: each takes its own thread of
// the communication track (one thread's slices overlapping was drawn wrong by Perfetto). A node
// that takes no time is issued before its callback.
TEST(Timeline, OverlappingNodesTakeLanesAndInstantNodesIssueFirst) {
  RunResult r = MixedRun();
  auto node = [](uint64_t id, const char* name, int64_t start, int64_t end) {
    NodeRecord n;
    n.id = id;
    n.name = name;
    n.track = Track::kComm;
    n.type = et::NodeType::kCommColl;
    n.start = Time::FromNs(start);
    n.end = Time::FromNs(end);
    return n;
  };
  r.activity[2].push_back(node(90, "first", 50000, 60000));
  r.activity[2].push_back(node(91, "second", 55000, 70000));
  r.activity[2].push_back(node(92, "instant", 70000, 70000));
  const std::string trace = TestTmp("lanes.trace.json");
  ASSERT_TRUE(WriteChromeTrace(r, trace).ok());
  // NPU 2 is process 3; its threads by name, in the order they sort.
  Threads t = ThreadsOf(trace, 3);
  ASSERT_EQ(t.sorted.size(), 4u);
  EXPECT_EQ(t.sorted[0], "GPU compute");
  EXPECT_EQ(t.sorted[1], "communication");
  EXPECT_EQ(t.sorted[2], "communication 2");
  EXPECT_EQ(t.sorted[3], "chunks 0");  // the all-reduce's 4 chunks, one at a time
  EXPECT_EQ(t.slices["first"], t.tid["communication"]);
  EXPECT_EQ(t.slices["second"], t.tid["communication 2"]);
  EXPECT_EQ(t.slices["instant"], t.tid["communication"]);
  // 995 receives at once on NPU 3: as many lanes, "receives 0" to "receives 994", sorted after
  // its other tracks' (each a thread of its own: they had run into other ranges' numbers).
  for (int k = 0; k < 995; ++k) {
    NodeRecord n = node(1000 + k, "recv", 1000, 2000);
    n.track = Track::kRecv;
    n.type = et::NodeType::kCommRecv;
    r.activity[3].push_back(n);
  }
  ASSERT_TRUE(WriteChromeTrace(r, trace).ok());
  t = ThreadsOf(trace, 4);
  ASSERT_EQ(t.sorted.size(), 3u + 995u) << t.sorted.front();
  EXPECT_EQ(t.sorted[2], "receives 0");
  EXPECT_EQ(t.sorted[996], "receives 994");
  EXPECT_EQ(t.sorted[997], "chunks 0");
  EXPECT_EQ(t.tid.size(), t.sorted.size());
  const std::string many = ReadWholeFile(trace);
  EXPECT_EQ(many.find("remote memory 1"), std::string::npos);
  const std::string chakra = TestTmp("lanes.timeline.txt");
  ASSERT_TRUE(WriteChakraTimeline(r, chakra).ok());
  const std::string lines = ReadWholeFile(chakra);
  const size_t issue = lines.find("issue,sys->id=2, tick=70000, node->id=92");
  ASSERT_NE(issue, std::string::npos) << lines;
  EXPECT_LT(issue, lines.find("callback,sys->id=2, tick=70000, node->id=92"));
  // The node that ended at 70000 after running still calls back before that issue.
  EXPECT_LT(lines.find("callback,sys->id=2, tick=70000, node->id=91"), issue);
}
}  // namespace
}  // namespace orrery
