#include "workload/placement.h"

#include <algorithm>
#include <cctype>

#include "config/comm_group_config.h"

namespace orrery {

std::string DataParallelGroupsSyntax() {
  return "'world', 'none', or a comma list of communicator group ids (1 to " +
         std::to_string(kMaxCommGroupId) +
         "), with 'world' among them for the collectives without a group, e.g. 'world,2,3'";
}

StatusOr<DataParallelGroups> ParseDataParallelGroups(const std::string& text) {
  DataParallelGroups dp;
  if (Trim(text).empty()) return dp;
  if (Trim(text) == "none") {
    dp.world = false;
    return dp;
  }
  dp.world = false;
  Status problems;
  size_t start = 0;
  for (int n = 1; start <= text.size(); ++n) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = Trim(text.substr(start, comma - start));
    start = comma + 1;
    const std::string what = "item " + std::to_string(n) + " of '" + text + "'";
    if (item == "world") {
      dp.world = true;
      continue;
    }
    if (item == "none") {
      problems.Add("--dp-groups: " + what +
                   " is 'none', which stands alone (no group spans the copies); expected " +
                   DataParallelGroupsSyntax());
      continue;
    }
    const int id = ParseDecimalId(item);
    if (id <= 0) {
      problems.Merge(Status::Invalid("--dp-groups", what, item, DataParallelGroupsSyntax()));
      continue;
    }
    dp.groups.insert(id);
  }
  if (!problems.ok()) return problems;
  return dp;
}

std::string FormatDataParallelGroups(const DataParallelGroups& dp) {
  std::string out = dp.world ? "world" : "";
  for (int g : dp.groups) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out.empty() ? "none" : out;
}

Placement::Placement(int ranks, int copies, DataParallelGroups dp, int interleave)
    : dp_(std::move(dp)),
      copy_npus_(copies),
      trace_base_(copies, 0),
      copy_of_npu_(static_cast<size_t>(ranks) * copies),
      rank_of_npu_(static_cast<size_t>(ranks) * copies),
      num_traces_(ranks) {
  if (interleave <= 0) interleave = ranks;
  ORRERY_CHECK(ranks % interleave == 0, "a copy's interleave must divide its ranks");
  interleave_ = interleave;
  for (int c = 0; c < copies; ++c) {
    for (int r = 0; r < ranks; ++r) {
      const int npu = (r / interleave) * interleave * copies + c * interleave + r % interleave;
      copy_npus_[c].push_back(npu);
      copy_of_npu_[npu] = c;
      rank_of_npu_[npu] = r;
    }
  }
}

Placement::Placement(std::vector<JobPlacement> jobs, int num_npus)
    : dp_{false, {}}, copy_of_npu_(num_npus, -1), rank_of_npu_(num_npus, -1) {
  for (size_t j = 0; j < jobs.size(); ++j) {
    job_names_.push_back(std::move(jobs[j].name));
    copy_npus_.push_back(std::move(jobs[j].npus));
    const std::vector<int>& npus = copy_npus_.back();
    trace_base_.push_back(num_traces_);
    num_traces_ += static_cast<int>(npus.size());
    for (size_t r = 0; r < npus.size(); ++r) {
      copy_of_npu_[npus[r]] = static_cast<int>(j);
      rank_of_npu_[npus[r]] = static_cast<int>(r);
    }
  }
}

std::string Placement::Scope() const {
  if (jobs()) return "--jobs keeps sends, receives and groups inside a job";
  if (!manifest_.empty()) {
    return "the manifest " + manifest_ + " keeps sends, receives and groups inside a copy";
  }
  return "--replicate-trace keeps sends, receives and groups inside a copy";
}

std::string Placement::NameOf(int npu) const {
  if (Idle(npu)) return "idle";
  return (jobs() ? "job '" + job_names_[Copy(npu)] + "'" : "copy " + std::to_string(Copy(npu))) +
         ", rank " + std::to_string(Rank(npu));
}

std::optional<int> Placement::Find(SystemLayer& system, int pg, int npu) {
  if (std::optional<int> id = Lookup(pg, npu)) return id;
  if (pg != 0) return std::nullopt;
  // The copy's own world: its N NPUs.
  std::vector<int> members = copy_npus_[Copy(npu)];
  StatusOr<int> id = Add(system, 0, Copy(npu), std::move(members));
  if (!id.ok()) return std::nullopt;  // cannot happen: the members are this run's NPUs
  return *id;
}

std::optional<int> Placement::Lookup(int pg, int npu) const {
  if (pg == 0 && dp_.world) return 0;
  auto it = ids_.find({pg, IsDataParallel(pg) ? -1 : Copy(npu)});
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

StatusOr<int> Placement::Define(SystemLayer& system, int pg, const std::vector<int>& members,
                                int npu) {
  const bool dp = IsDataParallel(pg);
  auto it = ids_.find({pg, dp ? -1 : Copy(npu)});
  std::vector<int> npus;  // a rank listed twice is refused by SystemLayer::AddGroup
  for (int m : members) {
    const int ranks = RanksOf(npu);
    if (m < 0 || m >= ranks) {
      return Status::Invalid("", "member of communicator group " + std::to_string(pg),
                             std::to_string(m),
                             jobs() ? "a rank of job '" + job_names_[Copy(npu)] + "' in [0, " +
                                          std::to_string(ranks - 1) + "] (" + Scope() + ")"
                                    : "a rank of the trace in [0, " + std::to_string(ranks - 1) +
                                          "] (--replicate-trace runs its " + std::to_string(ranks) +
                                          " ranks as " + std::to_string(copies()) + " copies)");
    }
    if (dp) {
      for (int c = 0; c < copies(); ++c) npus.push_back(Npu(c, m));
    } else {
      npus.push_back(Npu(Copy(npu), m));
    }
  }
  if (it != ids_.end()) {
    Status s = system.CheckSameMembers(it->second, npus,
                                       "communicator group " + std::to_string(pg) + " (NPUs)");
    if (!s.ok()) return s;
    return it->second;
  }
  return Add(system, pg, dp ? -1 : Copy(npu), std::move(npus));
}

StatusOr<int> Placement::Add(SystemLayer& system, int pg, int copy, std::vector<int> members) {
  const int id = next_id_;
  Status s = system.AddGroup(id, std::move(members));
  if (!s.ok()) return s;
  ++next_id_;
  ids_[{pg, copy}] = id;
  return id;
}

std::string Placement::GroupName(int id) const {
  if (id == 0) return dp_.world ? "all NPUs (the copies' data-parallel world)" : "all NPUs";
  for (const auto& [key, value] : ids_) {
    if (value != id) continue;
    const auto& [pg, copy] = key;
    const std::string whose = copy < 0 ? "every copy"
                              : jobs() ? "job '" + job_names_[copy] + "'"
                                       : "copy " + std::to_string(copy);
    if (pg == 0) return whose + "'s NPUs (its world)";
    return (copy < 0 ? "data-parallel group " : "communicator group ") + std::to_string(pg) +
           " of " + whose;
  }
  return "communicator group " + std::to_string(id);
}

int Placement::PeerNpu(int npu, int64_t rank) const {
  if (rank < 0) return static_cast<int>(rank);
  return Npu(Copy(npu), static_cast<int>(rank));
}

int Placement::RootNpu(int pg, int root, int npu) const {
  return IsDataParallel(pg) ? PeerNpu(0, root) : PeerNpu(npu, root);
}

std::vector<int> Placement::UndefinedDataParallelGroups() const {
  std::vector<int> out;
  for (int g : dp_.groups) {
    if (ids_.count({g, -1}) == 0) out.push_back(g);
  }
  return out;
}

std::string Placement::Describe() const {
  if (jobs()) {
    std::string out = std::to_string(copies()) + (copies() == 1 ? " job" : " jobs") + " on " +
                      std::to_string(num_npus()) + " NPUs:";
    for (int j = 0; j < copies(); ++j) {
      out += (j == 0 ? " '" : ", '") + job_names_[j] + "' on NPU" +
             (RanksOfCopy(j) == 1 ? " " : "s ") + FormatNpuRanges(copy_npus_[j]);
    }
    const int idle = static_cast<int>(std::count(copy_of_npu_.begin(), copy_of_npu_.end(), -1));
    if (idle > 0) out += "; " + std::to_string(idle) + " idle";
    return out;
  }
  std::string dp = FormatDataParallelGroups(dp_);
  if (dp == "none") {
    dp = "none (independent jobs)";
  } else {
    std::replace(dp.begin(), dp.end(), ',', ' ');
  }
  if (!manifest_.empty()) {
    return "manifest " + manifest_ + ": " + std::to_string(ranks()) +
           (ranks() == 1 ? " rank file" : " rank files") + " run as " + std::to_string(copies()) +
           " data-parallel copies on " + std::to_string(num_npus()) + " NPUs";
  }
  return "trace of " + std::to_string(ranks()) + (ranks() == 1 ? " rank" : " ranks") + " run as " +
         std::to_string(copies()) + (copies() == 1 ? " copy" : " copies") + " on " +
         std::to_string(num_npus()) + " NPUs; data-parallel groups: " + dp;
}

std::string FormatNpuRanges(std::vector<int> npus) {
  std::sort(npus.begin(), npus.end());
  std::string out;
  for (size_t i = 0; i < npus.size();) {
    size_t k = i;
    while (k + 1 < npus.size() && npus[k + 1] == npus[k] + 1) ++k;
    if (!out.empty()) out += ",";
    out += std::to_string(npus[i]);
    if (k > i) out += "-" + std::to_string(npus[k]);
    i = k + 1;
  }
  return out;
}

}  // namespace orrery
