#include "report/breakdown.h"

#include <algorithm>
#include <utility>

namespace orrery {

namespace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;  // [start, end) in ps, merged

Intervals Union(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

int64_t Length(const Intervals& v) {
  int64_t n = 0;
  for (const auto& iv : v) n += iv.second - iv.first;
  return n;
}

// Length of the intersection of two merged interval lists.
int64_t Overlap(const Intervals& a, const Intervals& b) {
  int64_t n = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].first, b[j].first);
    const int64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) n += hi - lo;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return n;
}

}  // namespace

double NpuBreakdown::overlap_percent() const {
  return communication.ps() > 0 ? 100.0 * static_cast<double>(overlapped.ps()) / communication.ps()
                                : 0.0;
}

NpuBreakdown BreakdownOf(const std::vector<NodeRecord>& activity, Time finish) {
  Intervals gpu, cpu, comm, mem, all;
  for (const NodeRecord& a : activity) {
    const std::pair<int64_t, int64_t> iv{a.start.ps(), a.end.ps()};
    switch (a.track) {
      case Track::kGpu:
        gpu.push_back(iv);
        break;
      case Track::kCpu:
        cpu.push_back(iv);
        break;
      case Track::kComm:
      case Track::kRecv:
        comm.push_back(iv);
        break;
      case Track::kMemory:
        mem.push_back(iv);
        break;
    }
    all.push_back(iv);
  }
  gpu = Union(std::move(gpu));
  cpu = Union(std::move(cpu));
  comm = Union(std::move(comm));
  mem = Union(std::move(mem));
  all = Union(std::move(all));
  NpuBreakdown b;
  b.total = finish;
  b.compute = Time::FromPs(Length(gpu));
  b.cpu = Time::FromPs(Length(cpu));
  b.communication = Time::FromPs(Length(comm));
  b.overlapped = Time::FromPs(Overlap(gpu, comm));
  b.exposed = b.communication - b.overlapped;
  b.memory = Time::FromPs(Length(mem));
  b.idle = finish - Time::FromPs(Length(all));
  return b;
}

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

}  // namespace orrery
