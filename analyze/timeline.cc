#include "analyze/timeline.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace orrery {
namespace analyze {

const char* CategoryName(Category c) {
  switch (c) {
    case Category::kCompute:
      return "compute";
    case Category::kCommunication:
      return "communication";
    case Category::kMemory:
      return "memory";
  }
  return "?";
}

namespace {

void SortActivities(std::vector<Activity>* a) {
  std::stable_sort(a->begin(), a->end(), [](const Activity& x, const Activity& y) {
    return std::tie(x.start_ns, x.end_ns) < std::tie(y.start_ns, y.end_ns);
  });
}

RankTimeline FromProfile(profile::KinetoTrace& t,
                         const std::shared_ptr<const profile::NameTable>& names, int rank) {
  RankTimeline r;
  r.rank = rank;
  r.source = t.path;
  r.names = names;
  std::unordered_map<int64_t, size_t> launch_of;  // correlation -> runtime call
  launch_of.reserve(t.runtime.size());
  for (size_t i = 0; i < t.runtime.size(); ++i) {
    const profile::RuntimeCall& c = t.runtime[i];
    if (c.correlation >= 0 && c.kind == profile::RuntimeKind::kLaunch) {
      launch_of.emplace(c.correlation, i);
    }
    r.host.push_back(HostSpan{c.start_ns, c.end_ns, c.name});
  }
  r.activities.reserve(t.gpu.size());
  for (const profile::GpuOp& op : t.gpu) {
    Activity a;
    a.start_ns = op.start_ns;
    a.end_ns = op.end_ns;
    a.stream = op.stream;
    a.name = op.name;
    a.category = op.kind != profile::GpuKind::kKernel
                     ? Category::kMemory
                     : (op.nccl ? Category::kCommunication : Category::kCompute);
    const auto it = op.correlation >= 0 ? launch_of.find(op.correlation) : launch_of.end();
    if (it != launch_of.end()) {
      a.launch_start_ns = t.runtime[it->second].start_ns;
      a.launch_end_ns = t.runtime[it->second].end_ns;
    }
    r.activities.push_back(a);
  }
  SortActivities(&r.activities);
  return r;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::vector<RankTimeline> FromSimulation(profile::KinetoTrace& t,
                                         const std::shared_ptr<const profile::NameTable>& names) {
  auto path = std::make_shared<std::vector<PathSegment>>();
  for (const profile::SimSlice& s : t.sim_path) {
    path->push_back(PathSegment{s.start_ns, s.end_ns, s.npu, s.name, (*names)[s.category]});
  }
  std::vector<RankTimeline> ranks;
  std::unordered_map<int, size_t> of_npu;
  for (const profile::SimSlice& s : t.sim) {
    auto [it, added] = of_npu.emplace(s.npu, ranks.size());
    if (added) {
      RankTimeline r;
      r.rank = s.npu;
      r.source = t.path;
      r.simulated = true;
      r.names = names;
      r.recorded_path = path;
      ranks.push_back(std::move(r));
    }
    RankTimeline& r = ranks[it->second];
    const std::string& cat = (*names)[s.category];
    if (cat == "CPU") {
      r.host.push_back(HostSpan{s.start_ns, s.end_ns, s.name});
      continue;
    }
    Activity a;
    a.start_ns = s.start_ns;
    a.end_ns = s.end_ns;
    a.stream = s.category;
    a.name = s.name;
    if (cat == "GPU compute") {
      const std::string& n = (*names)[s.name];
      a.category = StartsWith(n, "Memcpy") || StartsWith(n, "Memset") ? Category::kMemory
                                                                      : Category::kCompute;
    } else if (cat == "remote memory") {
      a.category = Category::kMemory;
    } else {
      a.category = Category::kCommunication;  // collective, communication (sends), receives
    }
    r.activities.push_back(a);
  }
  for (RankTimeline& r : ranks) SortActivities(&r.activities);
  std::sort(ranks.begin(), ranks.end(),
            [](const RankTimeline& a, const RankTimeline& b) { return a.rank < b.rank; });
  return ranks;
}

}  // namespace

std::vector<RankTimeline> TimelinesOf(profile::KinetoTrace&& trace, int fallback_rank) {
  auto names = std::make_shared<const profile::NameTable>(std::move(trace.names));
  if (trace.orrery_timeline) return FromSimulation(trace, names);
  std::vector<RankTimeline> one;
  one.push_back(FromProfile(trace, names, trace.rank.value_or(fallback_rank)));
  return one;
}

}  // namespace analyze
}  // namespace orrery
