#include "workload/breakdown.h"

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

const char* PathLinkName(PathLink l) {
  switch (l) {
    case PathLink::kStart:
      return "start";
    case PathLink::kDependency:
      return "dependency";
    case PathLink::kSlot:
      return "slot";
    case PathLink::kCollective:
      return "collective";
    case PathLink::kMessage:
      return "message";
  }
  return "?";
}

const char* TrackName(Track t) {
  switch (t) {
    case Track::kCpu:
      return "CPU";
    case Track::kGpu:
      return "GPU compute";
    case Track::kComm:
      return "communication";
    case Track::kRecv:
      return "receives";
    case Track::kMemory:
      return "remote memory";
  }
  return "?";
}

double NpuBreakdown::overlap_percent() const {
  return communication.ps() > 0 ? 100.0 * static_cast<double>(overlapped.ps()) / communication.ps()
                                : 0.0;
}

NpuBreakdown MeanBreakdown(const std::vector<NpuBreakdown>& breakdowns) {
  NpuBreakdown mean;
  const int64_t n = static_cast<int64_t>(breakdowns.size());
  if (n == 0) return mean;
  // floor(sum / n) = sum of (t / n) + floor(sum of (t % n) / n): every partial sum stays below
  // the largest time (or n * n), so nothing overflows.
  auto field = [&](Time NpuBreakdown::*member) {
    int64_t quotients = 0, remainders = 0;
    for (const NpuBreakdown& b : breakdowns) {
      quotients += (b.*member).ps() / n;
      remainders += (b.*member).ps() % n;
    }
    mean.*member = Time::FromPs(quotients + remainders / n);
  };
  for (Time NpuBreakdown::*member :
       {&NpuBreakdown::total, &NpuBreakdown::compute, &NpuBreakdown::cpu,
        &NpuBreakdown::communication, &NpuBreakdown::overlapped, &NpuBreakdown::exposed,
        &NpuBreakdown::memory, &NpuBreakdown::idle}) {
    field(member);
  }
  return mean;
}

NpuBreakdown BreakdownOf(const std::vector<Activity>& activity, Time finish) {
  Intervals gpu, cpu, comm, mem, all;
  for (const Activity& a : activity) {
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

BreakdownAccumulator::Kind BreakdownAccumulator::KindOf(Track track) {
  switch (track) {
    case Track::kGpu:
      return kGpuKind;
    case Track::kCpu:
      return kCpuKind;
    case Track::kComm:
    case Track::kRecv:
      return kCommKind;
    case Track::kMemory:
      return kMemoryKind;
  }
  return kCommKind;
}

void BreakdownAccumulator::Advance(Time now) {
  const int64_t dt = now.ps() - last_;
  last_ = now.ps();
  if (dt <= 0) return;
  bool any = false;
  for (int k = 0; k < kNumKinds; ++k) {
    if (running_[k] > 0) {
      held_[k] += dt;
      any = true;
    }
  }
  if (running_[kGpuKind] > 0 && running_[kCommKind] > 0) overlapped_ += dt;
  if (any) busy_ += dt;
}

void BreakdownAccumulator::Begin(Track track, Time now) {
  Advance(now);
  ++running_[KindOf(track)];
}

void BreakdownAccumulator::End(Track track, Time now) {
  Advance(now);
  --running_[KindOf(track)];
}

NpuBreakdown BreakdownAccumulator::Result(Time finish) const {
  NpuBreakdown b;
  b.total = finish;
  b.compute = Time::FromPs(held_[kGpuKind]);
  b.cpu = Time::FromPs(held_[kCpuKind]);
  b.communication = Time::FromPs(held_[kCommKind]);
  b.overlapped = Time::FromPs(overlapped_);
  b.exposed = b.communication - b.overlapped;
  b.memory = Time::FromPs(held_[kMemoryKind]);
  b.idle = finish - Time::FromPs(busy_);
  return b;
}

}  // namespace orrery
