#include "report/outputs.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json.h"
#include "report/breakdown.h"

namespace orrery {

namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Microseconds with nanosecond precision, as Chrome traces want ("ts", "dur").
std::string Us(Time t) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, t.ps() / 1000000,
                (t.ps() / 1000) % 1000);
  return buf;
}
// A slice's duration as its ends print (each in whole ns): ts + dur is the printed end, as in
// the report and the Chakra timeline (the picosecond span truncated on its own could be 1 ns
// short, leaving gaps in the critical path's track).
std::string UsBetween(Time start, Time end) {
  return Us(Time::FromNs(end.WholeNs() - start.WholeNs()));
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string Ns(Time t) { return std::to_string(t.WholeNs()); }
// A span's whole ns as its ends print (end_ns - start_ns), so that durations printed beside their
// ends agree with them and the critical path's add up to the step time (the picosecond span
// truncated on its own could be 1 ns off).
std::string NsBetween(Time start, Time end) {
  return std::to_string(end.WholeNs() - start.WholeNs());
}

Status Save(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  f << text;
  f.close();
  if (!f) return Status::Error(path + ": write failed: " + std::strerror(errno));
  return Status::Ok();
}

// Text written to a file as it is made, about 1 MiB at a time, so that a report of millions
// of rows is not first built whole in memory (GPT-3 175B on 128 NPUs: an 80 MB report).
class FileWriter {
 public:
  explicit FileWriter(const std::string& path) : path_(path), f_(path, std::ios::binary) {}
  bool opened() const { return static_cast<bool>(f_); }
  FileWriter& operator+=(const std::string& text) {
    buffer_ += text;
    if (buffer_.size() >= (1u << 20)) Flush();
    return *this;
  }
  Status Close() {
    Flush();
    f_.close();
    if (!f_) return Status::Error(path_ + ": write failed: " + std::strerror(errno));
    return Status::Ok();
  }

 private:
  void Flush() {
    f_ << buffer_;
    buffer_.clear();
  }
  std::string path_;
  std::ofstream f_;
  std::string buffer_;
};

// With --jobs or --replicate-trace: each NPU's job (index into r.jobs) or copy, and its rank
// there; owner -1 for an idle NPU. Empty otherwise.
struct NpuPlace {
  int owner = -1;
  int rank = -1;
};
std::vector<NpuPlace> NpuPlaces(const RunResult& r) {
  std::vector<NpuPlace> of;
  if (r.copy_ranks > 0) {
    // Copy c's rank k is NPU (k / I)·I·copies + c·I + k mod I (I = copy_ranks: contiguous).
    const int interleave = r.copy_interleave > 0 ? r.copy_interleave : r.copy_ranks;
    const int copies = r.num_npus() / r.copy_ranks;
    for (int npu = 0; npu < r.num_npus(); ++npu) {
      of.push_back({(npu / interleave) % copies,
                    npu / (interleave * copies) * interleave + npu % interleave});
    }
  } else if (!r.jobs.empty()) {
    of.resize(r.num_npus());
    for (size_t j = 0; j < r.jobs.size(); ++j) {
      for (size_t rank = 0; rank < r.jobs[j].npus.size(); ++rank) {
        of[r.jobs[j].npus[rank]] = {static_cast<int>(j), static_cast<int>(rank)};
      }
    }
  }
  return of;
}

// What the owner is called in reports: "job" (--jobs) or "copy" (--replicate-trace).
const char* OwnerKind(const RunResult& r) { return r.copy_ranks > 0 ? "copy" : "job"; }

// The owner as a JSON value: the job's name, or the copy's number.
std::string OwnerJson(const RunResult& r, int owner) {
  return r.copy_ranks > 0 ? std::to_string(owner) : JsonString(r.jobs[owner].name);
}

// The `"job": .., "rank": ..` (or `"copy": ..`) members of NPU `npu`'s JSON entry (null for an
// idle NPU), after a comma; "" without jobs or copies.
std::string PlaceJson(const RunResult& r, const std::vector<NpuPlace>& of, int npu) {
  if (of.empty()) return "";
  const NpuPlace& p = of[npu];
  const std::string owner = std::string(", \"") + OwnerKind(r) + "\": ";
  if (p.owner < 0) return owner + "null, \"rank\": null";
  return owner + OwnerJson(r, p.owner) + ", \"rank\": " + std::to_string(p.rank);
}

// The `job,rank` (or `copy,rank`) fields of NPU `npu`'s CSV row (empty for an idle NPU), after a
// comma; "" without jobs or copies.
std::string PlaceCsv(const RunResult& r, const std::vector<NpuPlace>& of, int npu) {
  if (of.empty()) return "";
  const NpuPlace& p = of[npu];
  if (p.owner < 0) return ",,";
  const std::string owner =
      r.copy_ranks > 0 ? std::to_string(p.owner) : CsvField(r.jobs[p.owner].name);
  return "," + owner + "," + std::to_string(p.rank);
}

// NPU `npu`'s name in the timeline: "NPU 4", "NPU 4 (train, rank 1)", "NPU 4 (idle)" or
// "NPU 13 (copy 1, rank 5)".
std::string NpuName(const RunResult& r, const std::vector<NpuPlace>& of, int npu) {
  std::string name = "NPU " + std::to_string(npu);
  if (of.empty()) return name;
  const NpuPlace& p = of[npu];
  if (p.owner < 0) return name + " (idle)";
  const std::string owner =
      r.copy_ranks > 0 ? "copy " + std::to_string(p.owner) : r.jobs[p.owner].name;
  return name + " (" + owner + ", rank " + std::to_string(p.rank) + ")";
}

Status NeedsRecording(const RunResult& r) {
  if (static_cast<int>(r.activity.size()) != r.num_npus()) {
    return Status::Error("internal: the run was not recorded (RunOptions::record)");
  }
  return Status::Ok();
}

constexpr int kTidCpu = 1, kTidGpu = 2, kTidComm = 3, kTidMemory = 4, kTidRecv = 10,
              kTidChunks = 1000;
// Threads of lanes, in ranges that do not meet: receive lanes from kTidRecv (past 989 of them,
// from kTidManyReceives), chunk lanes from kTidChunks (past 98999, from kTidManyChunks), and the
// second and later lanes of a track whose nodes overlap (communication-slots > 1, and the like)
// at kTidMoreLanes + 100000 x (its first lane's thread) + lane.
constexpr int kTidMoreLanes = 1000000, kTidManyReceives = 2000000, kTidManyChunks = 3000000;

std::string CollectiveLabel(const NodeRecord& a) {
  return a.collective ? et::CollectiveTypeName(*a.collective) : "";
}

// What a critical-path segment's node was doing.
const char* PathKind(const CriticalPathStep& s) {
  switch (s.type) {
    case et::NodeType::kCommColl:
      if (s.track == Track::kComm) return "collective";
      break;
    case et::NodeType::kCommSend:
      return "send";
    case et::NodeType::kCommRecv:
      return "receive";
    default:
      break;
  }
  return TrackName(s.track);
}

}  // namespace

Status WriteChromeTrace(const RunResult& r, const std::string& path) {
  if (Status s = NeedsRecording(r); !s.ok()) return s;
  // Each event is kept as where its text comes from, and its text is made as it is written:
  // a timeline of millions of events (GPT-3 175B on 128 NPUs: 10 million, 1.3 GB) is then not
  // held twice in memory.
  enum class Kind : uint8_t { kNode, kChunk, kQueue, kPortQueue, kPath };
  struct Ev {
    int64_t ts;
    int pid;
    int tid;
    Kind kind;
    const void* record;            // NodeRecord, ChunkPhaseRecord, QueueSample, ...
    const void* series = nullptr;  // kPortQueue: its QueueSeries
  };
  std::vector<Ev> events;
  std::vector<std::string> meta;
  // With --jobs or --replicate-trace, each NPU's process names its job or copy and its rank:
  // "NPU 4 (train, rank 1)", "NPU 13 (copy 1, rank 5)".
  const std::vector<NpuPlace> place_of = NpuPlaces(r);
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    if (!r.TimelineShows(npu)) continue;
    const std::string pid = std::to_string(npu);
    const std::string name = NpuName(r, place_of, npu);
    meta.push_back(R"({"ph":"M","name":"process_name","pid":)" + pid +
                   R"(,"tid":0,"args":{"name":)" + JsonString(name) + "}}");
    meta.push_back(R"({"ph":"M","name":"process_sort_index","pid":)" + pid +
                   R"(,"tid":0,"args":{"sort_index":)" + pid + "}}");
    // Nodes of one track may overlap (receives; collectives with communication-slots > 1): each
    // takes the first lane of its track free at its start (records come in completion order,
    // so a lane's nodes never overlap), and a lane is a thread.
    std::map<int, std::vector<int64_t>> lane_end;  // per first lane's thread
    // tid -> (name, sort index), as lanes are taken; a track's lanes sort together, in the order
    // CPU, GPU compute, communication, remote memory, receives, chunks.
    std::map<int, std::pair<std::string, int64_t>> threads;
    for (const NodeRecord& a : r.activity[npu]) {
      int base = kTidComm;
      const char* track = "communication";
      switch (a.track) {
        case Track::kCpu:
          base = kTidCpu;
          track = "CPU";
          break;
        case Track::kGpu:
          base = kTidGpu;
          track = "GPU compute";
          break;
        case Track::kComm:
          break;
        case Track::kMemory:
          base = kTidMemory;
          track = "remote memory";
          break;
        case Track::kRecv:
          base = kTidRecv;
          track = "receives";
          break;
      }
      std::vector<int64_t>& ends = lane_end[base];
      size_t lane = 0;
      while (lane < ends.size() && ends[lane] > a.start.ps()) ++lane;
      if (lane == ends.size()) ends.push_back(0);
      ends[lane] = a.end.ps();
      const int l = static_cast<int>(std::min<size_t>(lane, 99999));
      int tid = base;
      std::string name = track;
      if (base == kTidRecv) {
        tid = lane < 990 ? kTidRecv + l : kTidManyReceives + l;
        name += " " + std::to_string(lane);
      } else if (lane > 0) {
        tid = kTidMoreLanes + 100000 * base + l;
        name += " " + std::to_string(lane + 1);
      }
      const int64_t order = base == kTidRecv ? 5 : base;
      threads.emplace(
          tid, std::make_pair(std::move(name), order * 1000000 + static_cast<int64_t>(lane)));
      events.push_back(Ev{a.start.ps(), npu, tid, Kind::kNode, &a});
    }
    // Chunk phases of collectives: the system layer's view, one lane per concurrent stream.
    if (npu < static_cast<int>(r.phases.size())) {
      std::vector<const ChunkPhaseRecord*> phases;
      for (const ChunkPhaseRecord& c : r.phases[npu]) phases.push_back(&c);
      std::stable_sort(phases.begin(), phases.end(),
                       [](const ChunkPhaseRecord* a, const ChunkPhaseRecord* b) {
                         return a->started < b->started;
                       });
      std::vector<int64_t> chunk_lane_end;
      for (const ChunkPhaseRecord* c : phases) {
        size_t lane = 0;
        while (lane < chunk_lane_end.size() && chunk_lane_end[lane] > c->started.ps()) ++lane;
        if (lane == chunk_lane_end.size()) chunk_lane_end.push_back(0);
        chunk_lane_end[lane] = c->ended.ps();
        const int tid = lane < 99000 ? kTidChunks + static_cast<int>(lane)
                                     : kTidManyChunks + static_cast<int>(lane);
        threads.emplace(tid, std::make_pair("chunks " + std::to_string(lane),
                                            6 * int64_t{1000000} + static_cast<int64_t>(lane)));
        events.push_back(Ev{c->started.ps(), npu, tid, Kind::kChunk, c});
      }
    }
    // Queue lengths as counters (HTA's augmented counters).
    if (npu < static_cast<int>(r.queues.size())) {
      for (const QueueSample& q : r.queues[npu]) {
        events.push_back(Ev{q.t.ps(), npu, 0, Kind::kQueue, &q});
      }
    }
    for (const auto& [tid, thread] : threads) {
      const auto& [name, sort] = thread;
      meta.push_back(R"({"ph":"M","name":"thread_name","pid":)" + pid + R"(,"tid":)" +
                     std::to_string(tid) + R"(,"args":{"name":")" + name + "\"}}");
      meta.push_back(R"({"ph":"M","name":"thread_sort_index","pid":)" + pid + R"(,"tid":)" +
                     std::to_string(tid) + R"(,"args":{"sort_index":)" + std::to_string(sort) +
                     "}}");
    }
  }
  // Output-queue depths (packet backend) as counters of one more process, after the NPUs.
  if (!r.port_queues.empty()) {
    const int qpid = r.num_npus();
    const std::string pid = std::to_string(qpid);
    meta.push_back(R"({"ph":"M","name":"process_name","pid":)" + pid +
                   R"(,"tid":0,"args":{"name":"network queues, bytes"}})");
    meta.push_back(R"({"ph":"M","name":"process_sort_index","pid":)" + pid +
                   R"(,"tid":0,"args":{"sort_index":)" + pid + "}}");
    for (const QueueSeries& q : r.port_queues) {
      for (const QueueSeries::Sample& s : q.samples) {
        events.push_back(Ev{s.time.ps(), qpid, 0, Kind::kPortQueue, &s, &q});
      }
    }
  }
  // The critical path as one more process, sorted above the NPUs.
  if (!r.critical_path.empty()) {
    const int cpid = r.num_npus() + (r.port_queues.empty() ? 0 : 1);
    const std::string pid = std::to_string(cpid);
    meta.push_back(R"({"ph":"M","name":"process_name","pid":)" + pid +
                   R"(,"tid":0,"args":{"name":"critical path"}})");
    meta.push_back(R"({"ph":"M","name":"process_sort_index","pid":)" + pid +
                   R"(,"tid":0,"args":{"sort_index":-1}})");
    meta.push_back(R"({"ph":"M","name":"thread_name","pid":)" + pid +
                   R"(,"tid":1,"args":{"name":"NPU: node"}})");
    for (const CriticalPathStep& c : r.critical_path) {
      events.push_back(Ev{c.start.ps(), cpid, 1, Kind::kPath, &c});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Ev& a, const Ev& b) {
    return std::tie(a.ts, a.pid, a.tid) < std::tie(b.ts, b.pid, b.tid);
  });
  FileWriter out(path);
  if (!out.opened()) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  for (const std::string& m : meta) {
    out += (first ? "" : ",\n") + m;
    first = false;
  }
  // The text of one event, as the Trace Event Format has it.
  auto text = [](const Ev& e) -> std::string {
    const std::string pid = std::to_string(e.pid);
    switch (e.kind) {
      case Kind::kNode: {
        const NodeRecord& a = *static_cast<const NodeRecord*>(e.record);
        std::string args = R"("node_id":)" + std::to_string(a.id) + R"(,"type":")" +
                           et::NodeTypeName(a.type) + "\"";
        if (a.bytes > 0) args += R"(,"bytes":)" + std::to_string(a.bytes);
        if (a.peer >= 0) args += R"(,"peer":)" + std::to_string(a.peer);
        if (a.collective) {
          args += R"(,"collective":")" + CollectiveLabel(a) + R"(","group":)" +
                  JsonString(a.group.empty() ? "all" : a.group) + R"(,"group_size":)" +
                  std::to_string(a.group_size);
        }
        const std::string cat = a.collective ? "collective" : TrackName(a.track);
        return R"({"ph":"X","name":)" + JsonString(a.name) + R"(,"cat":")" + cat + R"(","pid":)" +
               pid + R"(,"tid":)" + std::to_string(e.tid) + R"(,"ts":)" + Us(a.start) +
               R"(,"dur":)" + UsBetween(a.start, a.end) + R"(,"args":{)" + args + "}}";
      }
      case Kind::kChunk: {
        const ChunkPhaseRecord& c = *static_cast<const ChunkPhaseRecord*>(e.record);
        const std::string name = std::string("chunk ") + std::to_string(c.stream) + " " +
                                 CollectiveTypeName(c.type) + " " + std::to_string(c.phase + 1) +
                                 "/" + std::to_string(c.num_phases);
        const std::string args =
            R"("node_id":)" + std::to_string(c.node_id) + R"(,"stream":)" +
            std::to_string(c.stream) + R"(,"phase":)" + std::to_string(c.phase + 1) +
            R"(,"phases":)" + std::to_string(c.num_phases) + R"(,"type":")" +
            CollectiveTypeName(c.type) + R"(","algorithm":")" + c.algorithm + R"(","queue":)" +
            std::to_string(c.queue) + R"(,"npus":)" + std::to_string(c.ring_size) + R"(,"bytes":)" +
            std::to_string(c.bytes) + R"(,"send_to":)" + std::to_string(c.receiver) +
            R"(,"receive_from":)" + std::to_string(c.sender) + R"(,"queued_us":)" +
            UsBetween(c.queued, c.started);
        return R"({"ph":"X","name":)" + JsonString(name) + R"(,"cat":"chunk","pid":)" + pid +
               R"(,"tid":)" + std::to_string(e.tid) + R"(,"ts":)" + Us(c.started) + R"(,"dur":)" +
               UsBetween(c.started, c.ended) + R"(,"args":{)" + args + "}}";
      }
      case Kind::kQueue: {
        const QueueSample& q = *static_cast<const QueueSample*>(e.record);
        return R"({"ph":"C","name":"queue )" + std::to_string(q.queue) + R"( length","pid":)" +
               pid + R"(,"tid":0,"ts":)" + Us(q.t) + R"(,"args":{"streams":)" +
               std::to_string(q.length) + "}}";
      }
      case Kind::kPortQueue: {
        const QueueSeries& q = *static_cast<const QueueSeries*>(e.series);
        const QueueSeries::Sample& s = *static_cast<const QueueSeries::Sample*>(e.record);
        return R"({"ph":"C","name":)" + JsonString(q.link) + R"(,"pid":)" + pid +
               R"(,"tid":0,"ts":)" + Us(s.time) + R"(,"args":{"bytes":)" + std::to_string(s.bytes) +
               "}}";
      }
      case Kind::kPath: {
        const CriticalPathStep& c = *static_cast<const CriticalPathStep*>(e.record);
        std::string args = R"("npu":)" + std::to_string(c.npu) + R"(,"node_id":)" +
                           std::to_string(c.node_id) + R"(,"kind":")" + PathKind(c) +
                           R"(","after":")" + PathLinkName(c.link) + "\"";
        if (c.from_npu >= 0) {
          args += R"(,"after_npu":)" + std::to_string(c.from_npu) + R"(,"after_node_id":)" +
                  std::to_string(c.from_node_id);
        }
        return R"({"ph":"X","name":)" + JsonString("NPU " + std::to_string(c.npu) + ": " + c.name) +
               R"(,"cat":"critical path","pid":)" + pid + R"(,"tid":1,"ts":)" + Us(c.start) +
               R"(,"dur":)" + UsBetween(c.start, c.end) + R"(,"args":{)" + args + "}}";
      }
    }
    return "";
  };
  for (const Ev& e : events) {
    out += (first ? "" : ",\n") + text(e);
    first = false;
  }
  out += "\n]}\n";
  return out.Close();
}

Status WriteChakraTimeline(const RunResult& r, const std::string& path) {
  if (Status s = NeedsRecording(r); !s.ok()) return s;
  struct Line {
    int64_t tick;
    int kind;  // 0 = callback, 1 = issue: at equal ticks a node ends before the next starts
    int npu;
    size_t seq;
    std::string text;
  };
  std::vector<Line> lines;
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    if (!r.TimelineShows(npu)) continue;
    for (const NodeRecord& a : r.activity[npu]) {
      const std::string rest = ", node->id=" + std::to_string(a.id) + ", node->name=" + a.name +
                               ", node->type=" + et::NodeTypeName(a.type);
      const std::string sys = "sys->id=" + std::to_string(npu);
      lines.push_back(Line{a.start.WholeNs(), 1, npu, lines.size(),
                           "issue," + sys + ", tick=" + Ns(a.start) + rest});
      // A node that took no time ends after its own issue (and before what it released).
      lines.push_back(Line{a.end.WholeNs(), a.end.WholeNs() == a.start.WholeNs() ? 1 : 0, npu,
                           lines.size(), "callback," + sys + ", tick=" + Ns(a.end) + rest});
    }
  }
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return std::tie(a.tick, a.kind, a.npu, a.seq) < std::tie(b.tick, b.kind, b.npu, b.seq);
  });
  FileWriter out(path);
  if (!out.opened()) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  for (const Line& l : lines) out += l.text + "\n";
  return out.Close();
}

Status WriteReportJson(const RunResult& r, const std::string& path) {
  if (Status s = NeedsRecording(r); !s.ok()) return s;
  FileWriter out(path);
  if (!out.opened()) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  out += "{\n  \"units\": {\"time\": \"ns\", \"bandwidth\": \"GB/s (1e9 B/s)\"},\n";
  out += "  \"network_model\": " + JsonString(r.network_model) + ",\n";
  // Copies of a trace: how they were laid out (jobs have their own section below).
  if (!r.placement.empty() && r.jobs.empty()) {
    out += "  \"replication\": " + JsonString(r.placement) + ",\n";
  }
  if (!r.jobs.empty()) {
    out += "  \"jobs\": [\n";
    for (size_t i = 0; i < r.jobs.size(); ++i) {
      const JobResult& j = r.jobs[i];
      std::string npus;
      for (size_t k = 0; k < j.npus.size(); ++k)
        npus += (k ? ", " : "") + std::to_string(j.npus[k]);
      out += "    {\"name\": " + JsonString(j.name) + ", \"npus\": [" + npus +
             "], \"step_time_ns\": " + Ns(j.finish) +
             ", \"slowest_npu\": " + std::to_string(j.slowest_npu) +
             (j.alone ? ", \"alone_step_time_ns\": " + Ns(*j.alone) : std::string()) + "}" +
             (i + 1 < r.jobs.size() ? ",\n" : "\n");
    }
    out += "  ],\n";
  }
  out += "  \"num_npus\": " + std::to_string(r.num_npus()) + ",\n";
  out += "  \"step_time_ns\": " + Ns(r.end) + ",\n  \"npus\": [\n";
  // With --jobs or --replicate-trace, each entry names its job or copy, and its rank.
  const std::vector<NpuPlace> place_of = NpuPlaces(r);
  for (int i = 0; i < r.num_npus(); ++i) {
    const NpuBreakdown& b = r.breakdown[i];
    out += "    {\"npu\": " + std::to_string(i) + PlaceJson(r, place_of, i) +
           ", \"total\": " + Ns(b.total) + ", \"compute\": " + Ns(b.compute) +
           ", \"cpu\": " + Ns(b.cpu) + ", \"communication\": " + Ns(b.communication) +
           ", \"exposed_communication\": " + Ns(b.exposed) +
           ", \"overlapped_communication\": " + Ns(b.overlapped) + ", \"memory\": " + Ns(b.memory) +
           ", \"idle\": " + Ns(b.idle) + ", \"overlap_percent\": " + Num(b.overlap_percent()) +
           ", \"astra_sim_exposed_communication\": " + Ns(r.npus[i].exposed_communication()) + "}" +
           (i + 1 < r.num_npus() ? ",\n" : "\n");
  }
  out += "  ],\n  \"collectives\": [\n";
  const std::vector<CollectiveStat> colls = CollectiveStats(r);
  for (size_t i = 0; i < colls.size(); ++i) {
    const CollectiveStat& c = colls[i];
    out += "    {\"npu\": " + std::to_string(c.npu) + PlaceJson(r, place_of, c.npu) +
           ", \"node_id\": " + std::to_string(c.node_id) + ", \"name\": " + JsonString(c.name) +
           ", \"type\": \"" + et::CollectiveTypeName(c.type) +
           "\", \"group\": " + JsonString(c.group.empty() ? "all" : c.group) +
           ", \"group_size\": " + std::to_string(c.group_size) +
           ", \"bytes\": " + std::to_string(c.bytes) + ", \"start\": " + Ns(c.start) +
           ", \"end\": " + Ns(c.end) + ", \"duration\": " + NsBetween(c.start, c.end) +
           ", \"alg_bw\": " + Num(c.alg_bw_gbps) + ", \"bus_bw\": " + Num(c.bus_bw_gbps) + "}" +
           (i + 1 < colls.size() ? ",\n" : "\n");
  }
  out += "  ],\n  \"links\": [\n";
  for (size_t i = 0; i < r.links.size(); ++i) {
    const LinkStats& l = r.links[i];
    const double util = r.end.ps() > 0 ? static_cast<double>(l.busy.ps()) / r.end.ps() : 0;
    out += "    {\"link\": " + JsonString(l.name) + ", \"bytes\": " + std::to_string(l.bytes) +
           ", \"busy\": " + Ns(l.busy) + ", \"utilisation\": " + Num(util) +
           (l.port ? ", \"max_queue_bytes\": " + std::to_string(l.port->max_queue_bytes) +
                         ", \"mean_queue_bytes\": " + Num(l.port->mean_queue_bytes) +
                         ", \"pause\": " + Ns(l.port->paused) +
                         ", \"drops\": " + std::to_string(l.port->drops)
                   : std::string()) +
           "}" + (i + 1 < r.links.size() ? ",\n" : "\n");
  }
  out += "  ],\n  \"queues\": [";
  const char* separator = "\n";
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    for (const QueueStat& q : QueueStats(r, npu)) {
      out += separator;
      separator = ",\n";
      out += "    {\"npu\": " + std::to_string(q.npu) + ", \"queue\": " + std::to_string(q.queue) +
             ", \"max_length\": " + std::to_string(q.max_length) +
             ", \"mean_length\": " + Num(q.mean_length) + ", \"samples\": [";
      for (size_t k = 0; k < q.samples.size(); ++k) {
        out += (k ? ", [" : "[") + Ns(q.samples[k].first) + ", " +
               std::to_string(q.samples[k].second) + "]";
      }
      out += "]}";
    }
  }
  out += "\n";
  const CriticalPathTotals cp = CriticalPathTotalsOf(r);
  out += "  ],\n  \"critical_path\": {\"total\": " + Ns(cp.total) +
         ", \"compute\": " + Ns(cp.compute) + ", \"cpu\": " + Ns(cp.cpu) +
         ", \"communication\": " + Ns(cp.communication) + ", \"memory\": " + Ns(cp.memory) +
         ", \"nodes\": " + std::to_string(cp.nodes) + ", \"npus\": [";
  for (size_t i = 0; i < cp.npus.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(cp.npus[i]);
  }
  out += "], \"slot_waits\": " + std::to_string(cp.slot_waits) + ", \"segments\": [\n";
  for (size_t i = 0; i < r.critical_path.size(); ++i) {
    const CriticalPathStep& c = r.critical_path[i];
    out += "    {\"npu\": " + std::to_string(c.npu) +
           ", \"node_id\": " + std::to_string(c.node_id) + ", \"name\": " + JsonString(c.name) +
           ", \"kind\": \"" + PathKind(c) + "\", \"start\": " + Ns(c.start) +
           ", \"end\": " + Ns(c.end) + ", \"duration\": " + NsBetween(c.start, c.end) +
           ", \"after\": \"" + PathLinkName(c.link) + "\"" +
           (c.from_npu >= 0 ? ", \"after_npu\": " + std::to_string(c.from_npu) +
                                  ", \"after_node_id\": " + std::to_string(c.from_node_id)
                            : std::string()) +
           "}" + (i + 1 < r.critical_path.size() ? ",\n" : "\n");
  }
  out += "  ]}\n}\n";
  return out.Close();
}

Status WriteReportCsv(const RunResult& r, const std::string& prefix) {
  if (Status s = NeedsRecording(r); !s.ok()) return s;
  // With --jobs or --replicate-trace, the per-NPU files have each NPU's job or copy, and its rank,
  // after its id.
  const std::vector<NpuPlace> place_of = NpuPlaces(r);
  const std::string job_columns = place_of.empty() ? "" : std::string(",") + OwnerKind(r) + ",rank";
  std::string npus = "npu" + job_columns +
                     ",total_ns,compute_ns,cpu_ns,communication_ns,exposed_communication_ns,"
                     "overlapped_communication_ns,memory_ns,idle_ns,overlap_percent\n";
  for (int i = 0; i < r.num_npus(); ++i) {
    const NpuBreakdown& b = r.breakdown[i];
    npus += std::to_string(i) + PlaceCsv(r, place_of, i) + "," + Ns(b.total) + "," + Ns(b.compute) +
            "," + Ns(b.cpu) + "," + Ns(b.communication) + "," + Ns(b.exposed) + "," +
            Ns(b.overlapped) + "," + Ns(b.memory) + "," + Ns(b.idle) + "," +
            Num(b.overlap_percent()) + "\n";
  }
  std::string colls = "npu" + job_columns +
                      ",node_id,name,type,group,group_size,bytes,start_ns,end_ns,duration_ns,"
                      "alg_bw_gbps,bus_bw_gbps\n";
  for (const CollectiveStat& c : CollectiveStats(r)) {
    colls += std::to_string(c.npu) + PlaceCsv(r, place_of, c.npu) + "," +
             std::to_string(c.node_id) + "," + CsvField(c.name) + "," +
             et::CollectiveTypeName(c.type) + "," + CsvField(c.group.empty() ? "all" : c.group) +
             "," + std::to_string(c.group_size) + "," + std::to_string(c.bytes) + "," +
             Ns(c.start) + "," + Ns(c.end) + "," + NsBetween(c.start, c.end) + "," +
             Num(c.alg_bw_gbps) + "," + Num(c.bus_bw_gbps) + "\n";
  }
  // The packet backend's ports add their queue and flow-control columns, as in the JSON report.
  const bool ports = std::any_of(r.links.begin(), r.links.end(),
                                 [](const LinkStats& l) { return l.port.has_value(); });
  std::string links = std::string("link,bytes,busy_ns,utilisation") +
                      (ports ? ",max_queue_bytes,mean_queue_bytes,pause_ns,drops" : "") + "\n";
  for (const LinkStats& l : r.links) {
    const double util = r.end.ps() > 0 ? static_cast<double>(l.busy.ps()) / r.end.ps() : 0;
    links += CsvField(l.name) + "," + std::to_string(l.bytes) + "," + Ns(l.busy) + "," + Num(util);
    if (l.port) {
      links += "," + std::to_string(l.port->max_queue_bytes) + "," + Num(l.port->mean_queue_bytes) +
               "," + Ns(l.port->paused) + "," + std::to_string(l.port->drops);
    } else if (ports) {
      links += ",,,,";
    }
    links += "\n";
  }
  std::string path =
      "npu,node_id,name,kind,start_ns,end_ns,duration_ns,after,after_npu,after_node_id\n";
  for (const CriticalPathStep& c : r.critical_path) {
    path += std::to_string(c.npu) + "," + std::to_string(c.node_id) + "," + CsvField(c.name) + "," +
            PathKind(c) + "," + Ns(c.start) + "," + Ns(c.end) + "," + NsBetween(c.start, c.end) +
            "," + PathLinkName(c.link) + "," +
            (c.from_npu >= 0 ? std::to_string(c.from_npu) + "," + std::to_string(c.from_node_id)
                             : std::string(",")) +
            "\n";
  }
  for (const auto& [suffix, text] : {std::pair<const char*, const std::string*>{".npus.csv", &npus},
                                     {".collectives.csv", &colls},
                                     {".links.csv", &links}}) {
    if (Status s = Save(prefix + suffix, *text); !s.ok()) return s;
  }
  // Every change of every queue's length: written as it is made, NPU by NPU.
  FileWriter queues(prefix + ".queues.csv");
  if (!queues.opened()) {
    return Status::Error(prefix + ".queues.csv: cannot write: " + std::strerror(errno));
  }
  queues += "npu,queue,time_ns,length\n";
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    for (const QueueStat& q : QueueStats(r, npu)) {
      for (const auto& [t, length] : q.samples) {
        queues += std::to_string(q.npu) + "," + std::to_string(q.queue) + "," + Ns(t) + "," +
                  std::to_string(length) + "\n";
      }
    }
  }
  if (Status s = queues.Close(); !s.ok()) return s;
  return Save(prefix + ".critical_path.csv", path);
}

std::string SummaryTable(const RunResult& r) {
  const int n = r.num_npus();
  if (n == 0) return "";
  int slowest = 0;
  for (int i = 1; i < n; ++i) {
    if (r.npus[slowest].finish < r.npus[i].finish) slowest = i;
  }
  auto breakdown = [&](int i) { return r.breakdown[i]; };
  // With --jobs, the mean is over the NPUs that run a job (idle ones would dilute it).
  const NpuBreakdown mean = MeanBreakdown(WorkingNpuBreakdowns(r));
  bool any_cpu = false, any_memory = false;
  for (const NpuBreakdown& b : r.breakdown) {
    any_cpu = any_cpu || b.cpu.ps() > 0;
    any_memory = any_memory || b.memory.ps() > 0;
  }
  const bool ms = r.end.Ns() >= 1e6;
  auto fmt = [ms](Time t) {
    // Whole ns first, as the step time above and the sys[i] lines.
    const double ns = static_cast<double>(t.WholeNs());
    char buf[32];
    std::snprintf(buf, sizeof buf, "%12.3f", ms ? ns / 1e6 : ns / 1e3);
    return std::string(buf);
  };
  const char* unit = ms ? "ms" : "us";
  const NpuBreakdown s = breakdown(slowest);
  std::string out = "\nsummary: " + std::to_string(n) + " NPUs, step time " + r.end.ToHuman() +
                    " (slowest: NPU " + std::to_string(slowest) + ")\n";
  if (!r.network_model.empty()) out += "  network: " + r.network_model + "\n";
  if (!r.placement.empty()) out += "  workload: " + r.placement + "\n";
  for (const JobResult& j : r.jobs) {
    out += "  job '" + j.name + "' (NPU" + (j.npus.size() == 1 ? " " : "s ") +
           FormatNpuRanges(j.npus) + "): step time " + j.finish.ToHuman() +
           (j.slowest_npu >= 0 ? " (slowest: NPU " + std::to_string(j.slowest_npu) + ")" : "");
    if (j.alone) {
      // What sharing the machine costs the job: its step time against its own, alone.
      char pct[48];
      std::snprintf(pct, sizeof pct, "%+.1f%%", j.SharingPercent());
      out += "; alone " + j.alone->ToHuman() + ", " + pct + " from sharing";
    }
    out += "\n";
  }
  char line[200];
  std::snprintf(line, sizeof line, "  %-24s %12s %12s\n", unit,
                r.jobs.empty() ? "mean NPU" : "mean job NPU",
                ("NPU " + std::to_string(slowest)).c_str());
  out += line;
  auto row = [&](const char* name, Time a, Time b) {
    std::snprintf(line, sizeof line, "  %-24s %s %s\n", name, fmt(a).c_str(), fmt(b).c_str());
    out += line;
  };
  row("total", mean.total, s.total);
  row("GPU compute", mean.compute, s.compute);
  if (any_cpu) row("CPU", mean.cpu, s.cpu);
  row("communication", mean.communication, s.communication);
  row("exposed communication", mean.exposed, s.exposed);
  row("overlapped comm.", mean.overlapped, s.overlapped);
  row("idle", mean.idle, s.idle);
  if (any_memory) row("remote memory", mean.memory, s.memory);
  if (!r.critical_path.empty() && r.end.ps() > 0) {
    // What the step waits on, end to end (report: critical_path).
    const CriticalPathTotals cp = CriticalPathTotalsOf(r);
    out += "  critical path:";
    bool first = true;
    for (const auto& [name, t] : {std::pair<const char*, Time>{"GPU compute", cp.compute},
                                  {"CPU", cp.cpu},
                                  {"communication", cp.communication},
                                  {"remote memory", cp.memory}}) {
      if (t.ps() == 0) continue;
      std::snprintf(line, sizeof line, "%s %s %.1f%%", first ? "" : ",", name,
                    100.0 * static_cast<double>(t.ps()) / r.end.ps());
      out += line;
      first = false;
    }
    std::string npus;
    for (size_t i = 0; i < cp.npus.size() && i < 6; ++i) {
      npus += (i ? ", " : "") + std::to_string(cp.npus[i]);
    }
    if (cp.npus.size() > 6) npus += ", ... (" + std::to_string(cp.npus.size()) + " NPUs)";
    out += " (" + std::to_string(cp.nodes) + " node" + (cp.nodes == 1 ? "" : "s") + " on NPU" +
           (cp.npus.size() == 1 ? " " : "s ") + npus;
    if (cp.slot_waits > 0) {
      out += "; " + std::to_string(cp.slot_waits) + " began when a busy slot freed";
    }
    out += ")\n";
  }
  if (!r.nccl_choices.empty()) {
    // nccl-model: what NCCL's tuner picked for each distinct collective (runner/nccl_tuner.h).
    out += "  NCCL choices (nccl-model), each collective alone:\n";
    // Distinct collectives alike in type, size, group size, choice and time (each copy's
    // tensor-parallel group under --replicate-trace, say) share one line: "(x1024)".
    std::vector<std::pair<std::string, int>> lines;
    std::map<std::string, size_t> index;
    for (const NcclTunedCollective& c : r.nccl_choices) {
      std::snprintf(line, sizeof line, "%s %llu B on %d NPUs: %s, %.3f us",
                    CollectiveTypeName(c.type), static_cast<unsigned long long>(c.size),
                    c.group_size, c.choice.c_str(), c.predicted.Ns() / 1e3);
      auto [at, added] = index.emplace(line, lines.size());
      if (added) lines.emplace_back(line, 0);
      ++lines[at->second].second;
    }
    const size_t shown = std::min<size_t>(8, lines.size());
    for (size_t i = 0; i < shown; ++i) {
      out += "    " + lines[i].first;
      if (lines[i].second > 1) out += " (x" + std::to_string(lines[i].second) + ")";
      out += "\n";
    }
    if (lines.size() > shown) {
      out += "    ... and " + std::to_string(lines.size() - shown) + " more\n";
    }
  }
  if (!r.links.empty() && r.end.ps() > 0) {
    // The busiest links (congestion-aware backend): where the network is the bottleneck.
    std::vector<const LinkStats*> busiest;
    for (const LinkStats& l : r.links) busiest.push_back(&l);
    const size_t top = std::min<size_t>(3, busiest.size());
    std::partial_sort(busiest.begin(), busiest.begin() + static_cast<std::ptrdiff_t>(top),
                      busiest.end(), [](const LinkStats* a, const LinkStats* b) {
                        if (a->busy.ps() != b->busy.ps()) return a->busy.ps() > b->busy.ps();
                        return a->name < b->name;
                      });
    out += "  busiest links:";
    for (size_t i = 0; i < top; ++i) {
      const LinkStats& l = *busiest[i];
      std::snprintf(line, sizeof line, "%s %s %.1f%% busy (%.3g MB)", i ? "," : "", l.name.c_str(),
                    100.0 * static_cast<double>(l.busy.ps()) / r.end.ps(),
                    static_cast<double>(l.bytes) / 1e6);
      out += line;
    }
    out += "\n";
    // Backends with output queues (packet): the deepest queues and the time held by flow control.
    std::vector<const LinkStats*> queued;
    for (const LinkStats& l : r.links) {
      if (l.port && l.port->max_queue_bytes > 0) queued.push_back(&l);
    }
    if (!queued.empty()) {
      const size_t qtop = std::min<size_t>(3, queued.size());
      std::partial_sort(queued.begin(), queued.begin() + static_cast<std::ptrdiff_t>(qtop),
                        queued.end(), [](const LinkStats* a, const LinkStats* b) {
                          if (a->port->max_queue_bytes != b->port->max_queue_bytes) {
                            return a->port->max_queue_bytes > b->port->max_queue_bytes;
                          }
                          return a->name < b->name;
                        });
      out += "  deepest queues:";
      for (size_t i = 0; i < qtop; ++i) {
        const LinkStats& l = *queued[i];
        std::snprintf(line, sizeof line, "%s %s max %.3g KB (mean %.3g KB, paused %.1f%%)",
                      i ? "," : "", l.name.c_str(),
                      static_cast<double>(l.port->max_queue_bytes) / 1e3,
                      l.port->mean_queue_bytes / 1e3,
                      100.0 * static_cast<double>(l.port->paused.ps()) / r.end.ps());
        out += line;
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace orrery
