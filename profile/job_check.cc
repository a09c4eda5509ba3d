#include "profile/job_check.h"

#include <algorithm>
#include <map>
#include <string>

namespace orrery {
namespace profile {

namespace {

// Profiles of one job are recorded together; traces whose first events lie further apart than
// this come from different runs.
constexpr int64_t kSameRunWindowNs = int64_t{3600} * 1000000000;

std::string RanksText(const std::vector<int>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

Status CheckSameJob(const std::vector<const KinetoTrace*>& traces) {
  const KinetoTrace* with_world = nullptr;
  std::map<std::string, std::pair<const KinetoTrace*, std::vector<int>>> groups;
  const KinetoTrace* earliest = traces[0];
  const KinetoTrace* latest = traces[0];
  for (const KinetoTrace* t : traces) {
    if (t->orrery_timeline != traces[0]->orrery_timeline) {
      const KinetoTrace* sim = t->orrery_timeline ? t : traces[0];
      return Status::Error(sim->path +
                           ": an Orrery timeline given with PyTorch profiles; analyze "
                           "them apart and put the reports side by side with "
                           "`orrery compare MEASURED.json SIMULATED.json`");
    }
    if (t->world_size) {
      if (with_world != nullptr && *with_world->world_size != *t->world_size) {
        return Status::Error("traces of different jobs: " + with_world->path +
                             " is a rank of a job of " + std::to_string(*with_world->world_size) +
                             " ranks, " + t->path + " of " + std::to_string(*t->world_size) +
                             " (distributedInfo.world_size); give the profiles "
                             "of one run");
      }
      with_world = t;
    }
    for (const ProcessGroupInfo& g : t->process_groups) {
      auto [it, added] = groups.emplace(g.name, std::make_pair(t, g.ranks));
      if (!added && it->second.second != g.ranks) {
        return Status::Error("traces of different jobs: process group '" + g.name + "' has ranks " +
                             RanksText(it->second.second) + " in " + it->second.first->path +
                             " and " + RanksText(g.ranks) + " in " + t->path +
                             " (distributedInfo.pg_config); give the profiles of one run");
      }
    }
    if (t->first_ns < earliest->first_ns) earliest = t;
    if (t->first_ns > latest->first_ns) latest = t;
  }
  if (latest->first_ns - earliest->first_ns > kSameRunWindowNs) {
    const double hours = static_cast<double>(latest->first_ns - earliest->first_ns) / 3.6e12;
    char h[32];
    std::snprintf(h, sizeof h, "%.1f", hours);
    return Status::Error("traces of different jobs: " + latest->path + " begins " + h +
                         " hours after " + earliest->path +
                         " (the ranks of one run are profiled together); give the profiles of "
                         "one run");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<int>> RanksOf(const std::vector<const KinetoTrace*>& traces) {
  std::vector<int> ranks;
  if (traces.empty()) return ranks;
  if (Status s = CheckSameJob(traces); !s.ok()) return s;
  size_t with_rank = 0;
  for (const KinetoTrace* t : traces) with_rank += t->rank.has_value() ? 1 : 0;
  if (with_rank != 0 && with_rank != traces.size()) {
    const KinetoTrace* without = nullptr;
    const KinetoTrace* with = nullptr;
    for (const KinetoTrace* t : traces) (t->rank ? with : without) = t;
    return Status::Error(without->path + " does not say its rank (no distributedInfo.rank) but " +
                         with->path + " does (rank " + std::to_string(*with->rank) +
                         "): give the profiles of one run, which all name their ranks, or only "
                         "profiles that name none (their ranks are then their order)");
  }
  std::map<int, const KinetoTrace*> seen;
  for (size_t i = 0; i < traces.size(); ++i) {
    const KinetoTrace* t = traces[i];
    const int rank = t->rank.value_or(static_cast<int>(i));
    if (t->world_size && rank >= *t->world_size) {
      return Status::Error(t->path + ": rank " + std::to_string(rank) + " is outside its job of " +
                           std::to_string(*t->world_size) +
                           " ranks (distributedInfo); expected a rank from 0 to " +
                           std::to_string(*t->world_size - 1));
    }
    auto [it, added] = seen.emplace(rank, t);
    if (!added) {
      return Status::Error("rank " + std::to_string(rank) + " is given twice: " + it->second->path +
                           " and " + t->path +
                           " (distributedInfo.rank); give each rank's profile once");
    }
    ranks.push_back(rank);
  }
  return ranks;
}

Status CheckNoRankMissing(const std::vector<const KinetoTrace*>& traces,
                          const std::vector<int>& ranks) {
  if (traces.size() <= 1) return Status::Ok();
  std::vector<int> sorted(ranks);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> missing;
  int expect = 0;
  for (int r : sorted) {
    while (expect < r && missing.size() < 16) missing.push_back(expect++);
    expect = r + 1;
  }
  if (missing.empty()) return Status::Ok();
  std::string world;
  for (const KinetoTrace* t : traces) {
    if (t->world_size) world = " of a job of " + std::to_string(*t->world_size) + " ranks";
  }
  return Status::Error("ranks missing: the profiles are ranks " + RanksText(sorted) + world +
                       ", without rank" + (missing.size() > 1 ? "s " : " ") + RanksText(missing) +
                       "; a Chakra trace set is ranks 0..N-1 without a gap: give the missing "
                       "profiles, or import ranks 0..N-1 only, or one rank alone (run it with "
                       "--replicate-trace for the whole job)");
}

}  // namespace profile
}  // namespace orrery
