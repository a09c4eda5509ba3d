// The run's timelines (outputs.h): a Chrome/Perfetto trace and Chakra's timeline-visualizer
// input. What real viewers need of them, and why each rule is here: docs/timelines.md.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json.h"
#include "report/output_files.h"
#include "report/outputs.h"

namespace orrery {

namespace {

using report_internal::FileWriter;
using report_internal::NeedsRecording;
using report_internal::NpuPlace;
using report_internal::NpuPlaces;
using report_internal::Ns;
using report_internal::PathKind;

// Microseconds with nanosecond precision, as Chrome traces want ("ts", "dur"); `ns` >= 0.
std::string UsOfNs(int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  return buf;
}
// A time's whole ns in microseconds, as every output prints times.
std::string Us(Time t) { return UsOfNs(t.WholeNs()); }

// A double as the shortest JSON number (no exponent) that reads back as exactly it.
std::string ExactText(double v) {
  char buf[400];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

uint64_t BitsOf(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
double OfBits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

}  // namespace

std::string TimelineDurationText(Time start, Time end) {
  const int64_t start_ns = start.WholeNs(), end_ns = end.WholeNs();
  // JavaScript viewers read "ts" and "dur" as doubles and end a slice at ts + dur, in µs
  // (Chrome DevTools, speedscope). The plain difference (0.1 + 0.2 µs) can end a slice a
  // rounding step past the next one's "ts", which they take for an overlap (DevTools dropped
  // such slices from its call tree). So "dur" is the double that, added to the double of "ts",
  // gives exactly the double of the end's own "ts" text: the plain difference when it does,
  // else the largest double that does not pass it, written in full. That lands exactly unless
  // no double can (a start whose bits make every sum a tie that rounds to even): then the
  // slice ends a ulp early, never late. It stays within a few ulps of the difference, so
  // importers that round µs x 1000 to whole ns (Perfetto) read the same ns. (catapult divides
  // "ts" and "dur" by 1000 each before adding, which no text can make exact for both.)
  // The double a reader gets from "<ns / 1000>.<ns % 1000>" is ns / 1000.0: both are the
  // correctly rounded value of the same quotient.
  const double ts = static_cast<double>(start_ns) / 1000.0;
  const double at_end = static_cast<double>(end_ns) / 1000.0;
  if (ts + static_cast<double>(end_ns - start_ns) / 1000.0 == at_end) {
    return UsOfNs(end_ns - start_ns);
  }
  // The sum grows with "dur", so the largest double that does not pass is found by a binary
  // search over the bits of positive doubles (which order as they do), between two that are
  // below and past it: end - ts is off the real difference by half its ulp at most, and a
  // sum within half a ulp of the end rounds to it.
  const double ulp = std::nextafter(at_end, HUGE_VAL) - at_end;
  const double guess = at_end - ts;
  uint64_t lo = BitsOf(std::max(0.0, guess - 2 * ulp)), hi = BitsOf(guess + 2 * ulp);
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (ts + OfBits(mid) <= at_end ? lo : hi) = mid;
  }
  return ExactText(OfBits(lo));
}

namespace {

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

std::string CollectiveLabel(const NodeRecord& a) {
  return a.collective ? et::CollectiveTypeName(*a.collective) : "";
}

// Each event is kept as where its text comes from, and its text is made as it is written: a
// timeline of millions of events (GPT-3 175B on 128 NPUs: 10 million, 1.3 GB) is then not held
// twice in memory.
enum class Kind : uint8_t { kNode, kChunk, kQueue, kPortQueue, kPath };
struct Ev {
  int64_t ts;  // ps
  int pid;
  int tid;
  Kind kind;
  const void* record;            // NodeRecord, ChunkPhaseRecord, QueueSample, ...
  const void* series = nullptr;  // kPortQueue: its QueueSeries
};

// The events and metadata of a timeline as it is built, and its ids. Viewers need: pids from 1
// (Perfetto treats pid 0 as the kernel's idle process, tracerbench drops it), tids unique across
// the whole trace (Perfetto takes a tid seen in two processes for one thread that moved) and
// never equal to a pid (a thread whose tid is its process's pid is drawn as the main thread),
// and a "cat" on every event (tracerbench fails without one). So processes are numbered 1..P
// and threads from P + 1 on, each process's own id first (for its metadata and counters), then
// its lanes in the order they sort in.
class Builder {
 public:
  explicit Builder(int max_pid) : next_tid_(max_pid + 1) {}

  // A process and its own tid (its metadata's and counters').
  int AddProcess(int pid, const std::string& name, int sort_index) {
    const int tid = next_tid_++;
    Meta("process_name", pid, tid, R"("name":)" + JsonString(name));
    Meta("process_sort_index", pid, tid, R"("sort_index":)" + std::to_string(sort_index));
    return tid;
  }
  // A thread of `pid`, at sort position `sort_index` among its process's.
  int AddThread(int pid, const std::string& name, int sort_index) {
    const int tid = next_tid_++;
    Meta("thread_name", pid, tid, R"("name":)" + JsonString(name));
    Meta("thread_sort_index", pid, tid, R"("sort_index":)" + std::to_string(sort_index));
    return tid;
  }
  std::vector<Ev>& events() { return events_; }
  const std::vector<std::string>& meta() const { return meta_; }

 private:
  void Meta(const char* what, int pid, int tid, const std::string& args) {
    meta_.push_back(R"({"ph":"M","cat":"__metadata","name":")" + std::string(what) + R"(","pid":)" +
                    std::to_string(pid) + R"(,"tid":)" + std::to_string(tid) + R"(,"args":{)" +
                    args + "}}");
  }
  int next_tid_;
  std::vector<Ev> events_;
  std::vector<std::string> meta_;
};

// The lanes of one NPU's process: nodes of one track that overlap (receives; collectives with
// communication-slots > 1) and concurrent chunk phases each take the first lane of their track
// free at their start, and a lane is a thread.
class NpuLanes {
 public:
  // The lane of `track` (its sort order, from 1) for a slice [start, end) in ps: slices come in
  // order of their ends (nodes) or starts (chunks), so a lane's slices never overlap.
  int Take(int track, const std::string& name, bool numbered, int64_t start, int64_t end) {
    std::vector<int64_t>& ends = ends_[track];
    size_t k = 0;
    while (k < ends.size() && ends[k] > start) ++k;
    if (k == ends.size()) ends.push_back(0);
    ends[k] = end;
    const auto [it, added] =
        ids_.emplace(std::make_pair(track, k), static_cast<int>(names_.size()));
    if (added) {
      names_.push_back(numbered ? name + " " + std::to_string(k)
                       : k == 0 ? name
                                : name + " " + std::to_string(k + 1));
    }
    return it->second;
  }
  // Gives every lane its thread, in sort order (track, then lane), and the events since
  // `first` (whose tid holds their lane) their thread.
  void Assign(Builder& b, int pid, size_t first) {
    std::vector<int> tid_of(names_.size());
    int position = 0;
    for (const auto& [key, lane] : ids_) tid_of[lane] = b.AddThread(pid, names_[lane], position++);
    for (size_t i = first; i < b.events().size(); ++i) {
      b.events()[i].tid = tid_of[b.events()[i].tid];
    }
  }

 private:
  std::map<int, std::vector<int64_t>> ends_;   // per track: each lane's last end
  std::map<std::pair<int, size_t>, int> ids_;  // (track, lane) -> lane id
  std::vector<std::string> names_;             // by lane id
};

// The track (its sort order) and name of a node's lane.
std::pair<int, const char*> TrackOf(Track t) {
  switch (t) {
    case Track::kCpu:
      return {1, "CPU"};
    case Track::kGpu:
      return {2, "GPU compute"};
    case Track::kComm:
      break;
    case Track::kMemory:
      return {4, "remote memory"};
    case Track::kRecv:
      return {5, "receives"};
  }
  return {3, "communication"};
}

void AddNpu(const RunResult& r, int npu, const std::string& name, Builder& b) {
  const int pid = npu + 1;
  const int own_tid = b.AddProcess(pid, name, npu);
  const size_t first = b.events().size();
  NpuLanes lanes;
  for (const NodeRecord& a : r.activity[npu]) {
    const auto [track, track_name] = TrackOf(a.track);
    const int lane =
        lanes.Take(track, track_name, a.track == Track::kRecv, a.start.ps(), a.end.ps());
    b.events().push_back(Ev{a.start.ps(), pid, lane, Kind::kNode, &a});
  }
  // Chunk phases of collectives: the system layer's view, one lane per concurrent stream
  // (none when the run kept no phases: --timeline-chunks off).
  if (npu < static_cast<int>(r.phases.size())) {
    std::vector<const ChunkPhaseRecord*> phases;
    for (const ChunkPhaseRecord& c : r.phases[npu]) phases.push_back(&c);
    std::stable_sort(phases.begin(), phases.end(),
                     [](const ChunkPhaseRecord* x, const ChunkPhaseRecord* y) {
                       return x->started < y->started;
                     });
    for (const ChunkPhaseRecord* c : phases) {
      const int lane = lanes.Take(6, "chunks", true, c->started.ps(), c->ended.ps());
      b.events().push_back(Ev{c->started.ps(), pid, lane, Kind::kChunk, c});
    }
  }
  lanes.Assign(b, pid, first);
  // Queue lengths as counters (HTA's augmented counters), on the process's own tid.
  if (npu < static_cast<int>(r.queues.size())) {
    for (const QueueSample& q : r.queues[npu]) {
      b.events().push_back(Ev{q.t.ps(), pid, own_tid, Kind::kQueue, &q});
    }
  }
}

std::string NodeText(const Ev& e, const std::string& ids) {
  const NodeRecord& a = *static_cast<const NodeRecord*>(e.record);
  // The NPU by its number (its process is NPU + 1), so that a reader needs no pid convention.
  std::string args = R"("npu":)" + std::to_string(e.pid - 1) + R"(,"node_id":)" +
                     std::to_string(a.id) + R"(,"type":")" + et::NodeTypeName(a.type) + "\"";
  if (a.bytes > 0) args += R"(,"bytes":)" + std::to_string(a.bytes);
  if (a.peer >= 0) args += R"(,"peer":)" + std::to_string(a.peer);
  if (a.collective) {
    args += R"(,"collective":")" + CollectiveLabel(a) + R"(","group":)" +
            JsonString(a.group.empty() ? "all" : a.group) + R"(,"group_size":)" +
            std::to_string(a.group_size);
  }
  const std::string cat = a.collective ? "collective" : TrackName(a.track);
  return R"({"ph":"X","name":)" + JsonString(a.name) + R"(,"cat":")" + cat + "\"," + ids +
         R"(,"ts":)" + Us(a.start) + R"(,"dur":)" + TimelineDurationText(a.start, a.end) +
         R"(,"args":{)" + args + "}}";
}

std::string ChunkText(const Ev& e, const std::string& ids) {
  const ChunkPhaseRecord& c = *static_cast<const ChunkPhaseRecord*>(e.record);
  const std::string name = std::string("chunk ") + std::to_string(c.stream) + " " +
                           CollectiveTypeName(c.type) + " " + std::to_string(c.phase + 1) + "/" +
                           std::to_string(c.num_phases);
  const std::string args = R"("node_id":)" + std::to_string(c.node_id) + R"(,"stream":)" +
                           std::to_string(c.stream) + R"(,"phase":)" + std::to_string(c.phase + 1) +
                           R"(,"phases":)" + std::to_string(c.num_phases) + R"(,"type":")" +
                           CollectiveTypeName(c.type) + R"(","algorithm":")" + c.algorithm +
                           R"(","queue":)" + std::to_string(c.queue) + R"(,"npus":)" +
                           std::to_string(c.ring_size) + R"(,"bytes":)" + std::to_string(c.bytes) +
                           R"(,"send_to":)" + std::to_string(c.receiver) + R"(,"receive_from":)" +
                           std::to_string(c.sender) + R"(,"queued_us":)" +
                           UsOfNs(c.started.WholeNs() - c.queued.WholeNs());
  return R"({"ph":"X","name":)" + JsonString(name) + R"(,"cat":"chunk",)" + ids + R"(,"ts":)" +
         Us(c.started) + R"(,"dur":)" + TimelineDurationText(c.started, c.ended) + R"(,"args":{)" +
         args + "}}";
}

std::string PathText(const Ev& e, const std::string& ids) {
  const CriticalPathStep& c = *static_cast<const CriticalPathStep*>(e.record);
  std::string args = R"("npu":)" + std::to_string(c.npu) + R"(,"node_id":)" +
                     std::to_string(c.node_id) + R"(,"kind":")" + PathKind(c) + R"(","after":")" +
                     PathLinkName(c.link) + "\"";
  if (c.from_npu >= 0) {
    args += R"(,"after_npu":)" + std::to_string(c.from_npu) + R"(,"after_node_id":)" +
            std::to_string(c.from_node_id);
  }
  return R"({"ph":"X","name":)" + JsonString("NPU " + std::to_string(c.npu) + ": " + c.name) +
         R"(,"cat":"critical path",)" + ids + R"(,"ts":)" + Us(c.start) + R"(,"dur":)" +
         TimelineDurationText(c.start, c.end) + R"(,"args":{)" + args + "}}";
}

// The text of one event, as the Trace Event Format has it.
std::string EventText(const Ev& e) {
  const std::string ids =
      R"("pid":)" + std::to_string(e.pid) + R"(,"tid":)" + std::to_string(e.tid);
  switch (e.kind) {
    case Kind::kNode:
      return NodeText(e, ids);
    case Kind::kChunk:
      return ChunkText(e, ids);
    case Kind::kQueue: {
      const QueueSample& q = *static_cast<const QueueSample*>(e.record);
      return R"({"ph":"C","name":"queue )" + std::to_string(q.queue) +
             R"( length","cat":"queue",)" + ids + R"(,"ts":)" + Us(q.t) + R"(,"args":{"streams":)" +
             std::to_string(q.length) + "}}";
    }
    case Kind::kPortQueue: {
      const QueueSeries& q = *static_cast<const QueueSeries*>(e.series);
      const QueueSeries::Sample& s = *static_cast<const QueueSeries::Sample*>(e.record);
      return R"({"ph":"C","name":)" + JsonString(q.link) + R"(,"cat":"network queue",)" + ids +
             R"(,"ts":)" + Us(s.time) + R"(,"args":{"bytes":)" + std::to_string(s.bytes) + "}}";
    }
    case Kind::kPath:
      return PathText(e, ids);
  }
  return "";
}

}  // namespace

Status WriteChromeTrace(const RunResult& r, const std::string& path) {
  if (Status s = NeedsRecording(r); !s.ok()) return s;
  // Processes: NPU i is i + 1; then the network's queues (packet backend) and the critical path.
  const int queues_pid = r.port_queues.empty() ? 0 : r.num_npus() + 1;
  const int path_pid = r.critical_path.empty() ? 0 : r.num_npus() + (queues_pid ? 2 : 1);
  Builder b(std::max({r.num_npus(), queues_pid, path_pid}));
  // With --jobs or --replicate-trace, each NPU's process names its job or copy and its rank:
  // "NPU 4 (train, rank 1)", "NPU 13 (copy 1, rank 5)".
  const std::vector<NpuPlace> place_of = NpuPlaces(r);
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    if (r.TimelineShows(npu)) AddNpu(r, npu, NpuName(r, place_of, npu), b);
  }
  // Output-queue depths (packet backend) as counters of one more process, after the NPUs.
  if (queues_pid != 0) {
    const int tid = b.AddProcess(queues_pid, "network queues, bytes", r.num_npus());
    for (const QueueSeries& q : r.port_queues) {
      for (const QueueSeries::Sample& s : q.samples) {
        b.events().push_back(Ev{s.time.ps(), queues_pid, tid, Kind::kPortQueue, &s, &q});
      }
    }
  }
  // The critical path as one more process, sorted above the NPUs.
  if (path_pid != 0) {
    b.AddProcess(path_pid, "critical path", -1);
    const int tid = b.AddThread(path_pid, "NPU: node", 0);
    for (const CriticalPathStep& c : r.critical_path) {
      b.events().push_back(Ev{c.start.ps(), path_pid, tid, Kind::kPath, &c});
    }
  }
  std::vector<Ev>& events = b.events();
  std::stable_sort(events.begin(), events.end(), [](const Ev& x, const Ev& y) {
    return std::tie(x.ts, x.pid, x.tid) < std::tie(y.ts, y.pid, y.tid);
  });
  FileWriter out(path);
  if (!out.opened()) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  for (const std::string& m : b.meta()) {
    out += (first ? "" : ",\n") + m;
    first = false;
  }
  for (const Ev& e : events) {
    out += (first ? "" : ",\n") + EventText(e);
    first = false;
  }
  out += "\n]}\n";
  return out.Close();
}

std::string ChakraTimelineName(const std::string& name, et::NodeType type) {
  // Chakra's timeline_visualizer (src/timeline_visualizer) splits a line at ',' and a column at
  // '=', and reads the node's type from its name column (COMP_NODE, COMM_SEND_NODE, ... as
  // substrings; MEM_LOAD_NODE and MEM_STORE_NODE with LOCAL_MEMORY or REMOTE_MEMORY). So the
  // name carries its type, its own ',' and '=' become ';' and ':', and what would read as a
  // type in it ("_NODE", "_MEMORY") is lowered.
  std::string out;
  for (char c : name) out += c == ',' ? ';' : c == '=' ? ':' : (c == '\n' || c == '\r') ? ' ' : c;
  for (const char* word : {"_NODE", "_MEMORY"}) {
    const size_t n = std::strlen(word);
    for (size_t at = out.find(word); at != std::string::npos; at = out.find(word, at + n)) {
      for (size_t k = at; k < at + n; ++k) out[k] = static_cast<char>(std::tolower(out[k]));
    }
  }
  const bool memory = type == et::NodeType::kMemLoad || type == et::NodeType::kMemStore;
  return out + " (" + et::NodeTypeName(type) + (memory ? " REMOTE_MEMORY)" : ")");
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
      // The visualizer places compute, communication and memory nodes only; it stops at any
      // other type (metadata, invalid), which take no time here.
      if (a.type == et::NodeType::kMetadata || a.type == et::NodeType::kInvalid) continue;
      const std::string rest = ", node->id=" + std::to_string(a.id) +
                               ", node->name=" + ChakraTimelineName(a.name, a.type);
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

}  // namespace orrery
