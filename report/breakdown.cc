#include "report/breakdown.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace orrery {

double BusBandwidthFactor(et::CollectiveType type, int n) {
  if (n <= 1) return 0.0;
  const double nn = n;
  switch (type) {
    case et::CollectiveType::kAllReduce:
      return 2.0 * (nn - 1) / nn;
    case et::CollectiveType::kAllGather:
    case et::CollectiveType::kReduceScatter:
    case et::CollectiveType::kAllToAll:
      return (nn - 1) / nn;
    default:
      return 1.0;
  }
}

std::vector<CollectiveStat> CollectiveStats(const RunResult& r) {
  std::vector<CollectiveStat> out;
  for (int npu = 0; npu < static_cast<int>(r.activity.size()); ++npu) {
    const size_t first = out.size();
    for (const NodeRecord& a : r.activity[npu]) {
      if (!a.collective || a.track != Track::kComm) continue;
      CollectiveStat c;
      c.npu = npu;
      c.node_id = a.id;
      c.name = a.name;
      c.type = *a.collective;
      c.group = a.group;
      c.group_size = a.group_size;
      c.bytes = a.bytes;
      c.start = a.start;
      c.end = a.end;
      const double seconds = (a.end - a.start).Ns() / 1e9;
      const double size = static_cast<double>(a.bytes) *
                          (c.type == et::CollectiveType::kAllGather ? a.group_size : 1);
      if (seconds > 0) {
        c.alg_bw_gbps = size / seconds / 1e9;
        c.bus_bw_gbps = c.alg_bw_gbps * BusBandwidthFactor(c.type, a.group_size);
      }
      out.push_back(std::move(c));
    }
    std::stable_sort(
        out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
        [](const CollectiveStat& x, const CollectiveStat& y) { return x.start < y.start; });
  }
  return out;
}

std::vector<QueueStat> QueueStats(const RunResult& r) {
  std::vector<QueueStat> out;
  for (int npu = 0; npu < static_cast<int>(r.queues.size()); ++npu) {
    for (QueueStat& q : QueueStats(r, npu)) out.push_back(std::move(q));
  }
  return out;
}

std::vector<QueueStat> QueueStats(const RunResult& r, int npu) {
  std::vector<QueueStat> out;
  if (npu >= 0 && npu < static_cast<int>(r.queues.size())) {
    std::map<int, QueueStat> by_queue;
    for (const QueueSample& s : r.queues[npu]) {
      QueueStat& q = by_queue[s.queue];
      q.npu = npu;
      q.queue = s.queue;
      q.samples.emplace_back(s.t, s.length);
      q.max_length = std::max(q.max_length, s.length);
    }
    for (auto& [queue, q] : by_queue) {
      double area = 0;  // length x ps
      for (size_t i = 0; i < q.samples.size(); ++i) {
        const Time until = i + 1 < q.samples.size() ? q.samples[i + 1].first : r.end;
        area += static_cast<double>(q.samples[i].second) *
                static_cast<double>((until - q.samples[i].first).ps());
      }
      q.mean_length = r.end.ps() > 0 ? area / static_cast<double>(r.end.ps()) : 0;
      out.push_back(std::move(q));
    }
  }
  return out;
}

std::vector<NpuBreakdown> WorkingNpuBreakdowns(const RunResult& r) {
  if (r.jobs.empty()) return r.breakdown;
  std::vector<NpuBreakdown> working;
  for (const JobResult& j : r.jobs) {
    for (int npu : j.npus) working.push_back(r.breakdown[npu]);
  }
  return working;
}

CriticalPathTotals CriticalPathTotalsOf(const RunResult& r) {
  CriticalPathTotals t;
  std::set<std::pair<int, uint64_t>> nodes;
  std::set<int> npus;
  for (const CriticalPathStep& s : r.critical_path) {
    // In whole ns, as the segments print (their ends truncated): the parts then add up to the
    // total, and the total to the step time, in every report (on the packet backend, times in
    // ps, each part truncated on its own had summed a few ns short).
    const Time d = Time::FromNs(s.end.WholeNs()) - Time::FromNs(s.start.WholeNs());
    t.total += d;
    switch (s.track) {
      case Track::kGpu:
        t.compute += d;
        break;
      case Track::kCpu:
        t.cpu += d;
        break;
      case Track::kComm:
      case Track::kRecv:
        t.communication += d;
        break;
      case Track::kMemory:
        t.memory += d;
        break;
    }
    nodes.emplace(s.npu, s.node_id);
    npus.insert(s.npu);
    if (s.link == PathLink::kSlot) ++t.slot_waits;
  }
  t.nodes = static_cast<int>(nodes.size());
  t.npus.assign(npus.begin(), npus.end());
  return t;
}

}  // namespace orrery
