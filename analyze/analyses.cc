#include "analyze/analyses.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "analyze/intervals.h"

namespace orrery {
namespace analyze {

namespace {

// The breakdown fields: unions per category, their overlap, and the span's disjoint parts.
void Breakdown(const RankTimeline& t, RankReport* r) {
  const std::vector<Activity>& acts = t.activities;
  if (acts.empty()) return;
  std::vector<Interval> all, of[3];
  all.reserve(acts.size());
  int64_t first = acts.front().start_ns, last = acts.front().end_ns;
  for (const Activity& a : acts) {
    all.push_back({a.start_ns, a.end_ns});
    of[static_cast<int>(a.category)].push_back({a.start_ns, a.end_ns});
    first = std::min(first, a.start_ns);
    last = std::max(last, a.end_ns);
    CategoryTotals& c = r->totals[static_cast<int>(a.category)];
    ++c.count;
    c.sum_ns += a.end_ns - a.start_ns;
  }
  const std::vector<Interval> u_all = UnionOf(std::move(all));
  std::vector<Interval> u[3];
  for (int k = 0; k < 3; ++k) u[k] = UnionOf(std::move(of[k]));
  const std::vector<Interval>& compute = u[static_cast<int>(Category::kCompute)];
  const std::vector<Interval>& comm = u[static_cast<int>(Category::kCommunication)];
  const std::vector<Interval>& memory = u[static_cast<int>(Category::kMemory)];
  r->first_ns = first;
  r->span_ns = last - first;
  r->busy_ns = Measure(u_all);
  r->idle_ns = r->span_ns - r->busy_ns;
  r->compute_ns = Measure(compute);
  r->communication_ns = Measure(comm);
  r->memory_ns = Measure(memory);
  r->overlap_ns = MeasureOfIntersection(comm, compute);
  r->comm_overlap_pct = r->communication_ns > 0
                            ? 100.0 * static_cast<double>(r->overlap_ns) / r->communication_ns
                            : 0.0;
  r->exposed_communication_ns = r->communication_ns - r->overlap_ns;
  // Memory under neither compute nor communication: busy - union(compute, communication).
  std::vector<Interval> cc(compute);
  cc.insert(cc.end(), comm.begin(), comm.end());
  r->memory_only_ns = r->busy_ns - Measure(UnionOf(std::move(cc)));
  (void)memory;
}

// Whether the op that ends an idle gap [gap_start, a.start) waited for the host: a measured
// op whose runtime call began after the gap began; a simulated one when a CPU node ended in
// the gap. `host_ends` sorted.
bool HostBound(const RankTimeline& t, const std::vector<int64_t>& host_ends, const Activity& a,
               int64_t gap_start) {
  if (!t.simulated) return a.launch_start_ns > gap_start;
  const auto it = std::upper_bound(host_ends.begin(), host_ends.end(), a.start_ns);
  return it != host_ends.begin() && *(it - 1) > gap_start;
}

void AddCause(const RankTimeline& t, const std::vector<int64_t>& host_ends, const Activity& a,
              int64_t gap_start, const AnalyzeOptions& o, IdleCauses* c) {
  const int64_t gap = a.start_ns - gap_start;
  if (gap <= 0) return;
  if (HostBound(t, host_ends, a, gap_start)) {
    c->host_wait_ns += gap;
  } else if (gap < o.kernel_wait_ns) {
    c->kernel_wait_ns += gap;
  } else {
    c->other_ns += gap;
  }
}

// Idle time by cause (HTA's idle time breakdown): each gap of the rank (no activity on any
// stream; they add up to idle_ns), and per stream each gap between consecutive ops (HTA's own
// per-stream figures), attributed to the op that ends it.
void IdleByCause(const RankTimeline& t, const AnalyzeOptions& o, RankReport* r) {
  std::vector<int64_t> host_ends;
  for (const HostSpan& h : t.host) host_ends.push_back(h.end_ns);
  std::sort(host_ends.begin(), host_ends.end());
  bool started = false;
  int64_t covered = 0;
  for (const Activity& a : t.activities) {
    if (started && a.start_ns > covered) AddCause(t, host_ends, a, covered, o, &r->idle_causes);
    covered = started ? std::max(covered, a.end_ns) : a.end_ns;
    started = true;
  }
  std::map<int64_t, std::vector<const Activity*>> by_stream;
  for (const Activity& a : t.activities) by_stream[a.stream].push_back(&a);
  for (const auto& [stream, ops] : by_stream) {
    StreamIdle s;
    s.stream = stream;
    for (size_t i = 1; i < ops.size(); ++i) {
      AddCause(t, host_ends, *ops[i], ops[i - 1]->end_ns, o, &s.causes);
    }
    r->stream_idle.push_back(s);
  }
}

int64_t Percentile(std::vector<int64_t>* v, double p) {
  if (v->empty()) return 0;
  const size_t k = std::min(v->size() - 1, static_cast<size_t>(p * (v->size() - 1) + 0.5));
  std::nth_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(k), v->end());
  return (*v)[k];
}

void Launches(const RankTimeline& t, const AnalyzeOptions& o, RankReport* r) {
  LaunchStats& l = r->launch;
  std::vector<int64_t> delays;
  for (const Activity& a : t.activities) {
    if (a.launch_start_ns < 0) continue;
    const int64_t delay = a.start_ns - a.launch_end_ns;
    const int64_t runtime = a.launch_end_ns - a.launch_start_ns;
    delays.push_back(delay);
    if (delay > o.launch_delay_cutoff_ns) ++l.delay_outliers;
    if (runtime > o.runtime_cutoff_ns) ++l.runtime_outliers;
    if (a.end_ns - a.start_ns < runtime) {
      ++l.short_kernels;
      l.short_kernel_ns += a.end_ns - a.start_ns;
    }
  }
  l.available = !t.simulated;
  l.launches = static_cast<int64_t>(delays.size());
  if (delays.empty()) return;
  l.delay_mean_ns = static_cast<double>(std::accumulate(delays.begin(), delays.end(), int64_t{0})) /
                    static_cast<double>(delays.size());
  l.delay_max_ns = *std::max_element(delays.begin(), delays.end());
  l.delay_p50_ns = Percentile(&delays, 0.5);
  l.delay_p95_ns = Percentile(&delays, 0.95);
}

void TopKernels(const RankTimeline& t, const AnalyzeOptions& o, RankReport* r) {
  std::unordered_map<uint32_t, KernelStat> by_name;
  for (const Activity& a : t.activities) {
    KernelStat& k = by_name[a.name];
    const int64_t d = a.end_ns - a.start_ns;
    if (k.count == 0) {
      k.category = a.category;
      k.min_ns = d;
      k.max_ns = d;
    }
    ++k.count;
    k.total_ns += d;
    k.min_ns = std::min(k.min_ns, d);
    k.max_ns = std::max(k.max_ns, d);
  }
  std::vector<std::pair<uint32_t, KernelStat>> all(by_name.begin(), by_name.end());
  const profile::NameTable& names = *t.names;
  std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    if (a.second.total_ns != b.second.total_ns) return a.second.total_ns > b.second.total_ns;
    return names[a.first] < names[b.first];
  });
  for (size_t i = 0; i < all.size() && static_cast<int>(i) < o.top_kernels; ++i) {
    KernelStat k = all[i].second;
    k.name = names[all[i].first];
    r->top_kernels.push_back(std::move(k));
  }
}

// A measured rank's critical path, walked back from the op that ends last. At each op, what
// it waited for at its start: its launch, when the host launched it after the op before it on
// its stream had ended (a host segment back to the op of any stream that ended last before the
// launch); else the op before it on its stream, when that ended at most kernel_wait_ns
// earlier; else the op of any stream that ended last before it (idle in between). The
// segments tile the span: what precedes the first op reached is host time.
void DerivedCriticalPath(const RankTimeline& t, const AnalyzeOptions& o, RankReport* r) {
  const std::vector<Activity>& acts = t.activities;
  if (acts.empty()) return;
  std::vector<size_t> by_end(acts.size());
  std::iota(by_end.begin(), by_end.end(), 0);
  std::sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) {
    return acts[a].end_ns != acts[b].end_ns ? acts[a].end_ns < acts[b].end_ns : a < b;
  });
  std::unordered_map<int64_t, std::vector<size_t>> stream_ops;
  std::vector<size_t> pos_in_stream(acts.size());
  for (size_t i = 0; i < acts.size(); ++i) {
    std::vector<size_t>& v = stream_ops[acts[i].stream];
    pos_in_stream[i] = v.size();
    v.push_back(i);
  }
  // The op (other than `not_op`) that ended last at or before `t_ns`; -1 for none.
  auto last_ending_by = [&](int64_t t_ns, size_t not_op) -> long {
    auto it = std::upper_bound(by_end.begin(), by_end.end(), t_ns,
                               [&](int64_t v, size_t i) { return v < acts[i].end_ns; });
    while (it != by_end.begin()) {
      --it;
      if (*it != not_op) return static_cast<long>(*it);
    }
    return -1;
  };
  CriticalPathSummary& p = r->critical_path;
  p.source = "derived";
  auto add = [&](const char* kind, int64_t d) {
    if (d <= 0) return;
    p.by_kind_ns[kind] += d;
    p.total_ns += d;
  };
  const int64_t first = r->first_ns;
  size_t cur = by_end.back();
  int64_t cursor = acts[cur].end_ns;  // the path covers [cursor, last end] so far
  for (size_t steps = 0; steps <= acts.size(); ++steps) {
    const Activity& a = acts[cur];
    add(CategoryName(a.category), std::min(a.end_ns, cursor) - a.start_ns);
    ++p.segments;
    cursor = std::min(cursor, a.start_ns);
    const size_t k = pos_in_stream[cur];
    const Activity* prev = k > 0 ? &acts[stream_ops[a.stream][k - 1]] : nullptr;
    const bool host_bound =
        a.launch_start_ns >= 0 && (prev == nullptr || a.launch_start_ns > prev->end_ns);
    long next = -1;
    const char* gap = "idle";
    if (host_bound) {
      next = last_ending_by(a.launch_start_ns, cur);
      gap = "host";
    } else if (prev != nullptr && prev->end_ns >= a.start_ns - o.kernel_wait_ns) {
      next = static_cast<long>(stream_ops[a.stream][k - 1]);
    } else {
      next = last_ending_by(a.start_ns, cur);
    }
    if (next < 0) break;
    const int64_t from = std::max(first, std::min(cursor, acts[static_cast<size_t>(next)].end_ns));
    add(gap, cursor - from);
    cursor = from;
    cur = static_cast<size_t>(next);
  }
  add("host", cursor - first);
}

// The simulator's critical path in the same kinds as a derived one: its GPU compute segments
// are compute (memory when the node is an imported memcpy or memset), CPU segments host work,
// collectives, sends and receives communication, remote memory memory.
void RecordedCriticalPath(const RankTimeline& t, RankReport* r) {
  CriticalPathSummary& p = r->critical_path;
  p.source = "recorded";
  for (const PathSegment& s : *t.recorded_path) {
    const int64_t d = s.end_ns - s.start_ns;
    const std::string& name = (*t.names)[s.name];
    std::string kind = "communication";
    if (s.kind == "GPU compute") {
      const bool copy =
          name.find(": Memcpy") != std::string::npos || name.find(": Memset") != std::string::npos;
      kind = copy ? "memory" : "compute";
    } else if (s.kind == "CPU") {
      kind = "host";
    } else if (s.kind == "remote memory") {
      kind = "memory";
    }
    p.by_kind_ns[kind] += d;
    p.total_ns += d;
    ++p.segments;
  }
}

SpreadStat Spread(const std::vector<RankReport>& ranks, int64_t RankReport::*field) {
  SpreadStat s;
  if (ranks.empty()) return s;
  std::vector<int64_t> v;
  s.min_ns = s.max_ns = ranks[0].*field;
  s.min_rank = s.max_rank = ranks[0].rank;
  for (const RankReport& r : ranks) {
    const int64_t x = r.*field;
    v.push_back(x);
    if (x < s.min_ns) {
      s.min_ns = x;
      s.min_rank = r.rank;
    }
    if (x > s.max_ns) {
      s.max_ns = x;
      s.max_rank = r.rank;
    }
  }
  s.mean_ns = static_cast<double>(std::accumulate(v.begin(), v.end(), int64_t{0})) /
              static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  s.median_ns = v[(v.size() - 1) / 2];
  return s;
}

}  // namespace

RankReport AnalyzeRank(const RankTimeline& t, const AnalyzeOptions& o) {
  RankReport r;
  r.rank = t.rank;
  r.source = t.source;
  r.simulated = t.simulated;
  Breakdown(t, &r);
  IdleByCause(t, o, &r);
  Launches(t, o, &r);
  TopKernels(t, o, &r);
  if (t.recorded_path != nullptr && !t.recorded_path->empty()) {
    RecordedCriticalPath(t, &r);
  } else if (!t.simulated) {
    DerivedCriticalPath(t, o, &r);
  }
  return r;
}

JobReport AnalyzeJob(const std::vector<RankTimeline>& ranks, const AnalyzeOptions& o) {
  JobReport j;
  for (const RankTimeline& t : ranks) j.ranks.push_back(AnalyzeRank(t, o));
  std::stable_sort(j.ranks.begin(), j.ranks.end(),
                   [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
  j.busy = Spread(j.ranks, &RankReport::busy_ns);
  j.compute = Spread(j.ranks, &RankReport::compute_ns);
  j.communication = Spread(j.ranks, &RankReport::communication_ns);
  if (j.ranks.size() < 2) return j;
  for (const RankReport& r : j.ranks) {
    if (r.busy_ns > j.busy.median_ns * (1 + o.straggler_tolerance)) {
      j.stragglers.push_back({r.rank, "busy time above the median"});
    } else if (r.compute_ns > j.compute.median_ns * (1 + o.straggler_tolerance)) {
      j.stragglers.push_back({r.rank, "compute time above the median"});
    }
  }
  // Collectives by position: only when every rank ran the same number.
  std::vector<std::vector<int64_t>> starts;
  for (const RankTimeline& t : ranks) {
    std::vector<int64_t> s;
    for (const Activity& a : t.activities) {
      if (a.category == Category::kCommunication) s.push_back(a.start_ns);
    }
    starts.push_back(std::move(s));
  }
  bool same = true;
  for (const auto& s : starts) same &= s.size() == starts[0].size();
  if (!same) return j;
  j.matched_collectives = static_cast<int64_t>(starts[0].size());
  for (size_t k = 0; k < starts[0].size(); ++k) {
    size_t last = 0;
    for (size_t i = 1; i < starts.size(); ++i) {
      if (starts[i][k] > starts[last][k]) last = i;
    }
    ++j.last_to_start[ranks[last].rank];
  }
  return j;
}

}  // namespace analyze
}  // namespace orrery
