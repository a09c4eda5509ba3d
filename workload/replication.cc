#include "workload/replication.h"

#include <algorithm>
#include <cctype>

#include "config/comm_group_config.h"

namespace orrery {

namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

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

Replication::Replication(int ranks, int copies, DataParallelGroups dp)
    : ranks_(ranks), copies_(copies), dp_(std::move(dp)) {}

std::optional<int> Replication::Find(SystemLayer& system, int pg, int npu) {
  if (std::optional<int> id = Lookup(pg, npu)) return id;
  if (pg != 0) return std::nullopt;
  // The copy's own world: its N NPUs.
  std::vector<int> members(ranks_);
  for (int r = 0; r < ranks_; ++r) members[r] = Npu(Copy(npu), r);
  StatusOr<int> id = Add(system, 0, Copy(npu), std::move(members));
  if (!id.ok()) return std::nullopt;  // cannot happen: the members are this run's NPUs
  return *id;
}

std::optional<int> Replication::Lookup(int pg, int npu) const {
  if (pg == 0 && dp_.world) return 0;
  auto it = ids_.find({pg, IsDataParallel(pg) ? -1 : Copy(npu)});
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

StatusOr<int> Replication::Define(SystemLayer& system, int pg, const std::vector<int>& members,
                                  int npu) {
  const bool dp = IsDataParallel(pg);
  auto it = ids_.find({pg, dp ? -1 : Copy(npu)});
  if (it != ids_.end()) return it->second;
  std::vector<int> npus;  // a rank listed twice is refused by SystemLayer::AddGroup
  for (int m : members) {
    if (m < 0 || m >= ranks_) {
      return Status::Invalid("", "member of communicator group " + std::to_string(pg),
                             std::to_string(m),
                             "a rank of the trace in [0, " + std::to_string(ranks_ - 1) +
                                 "] (--replicate-trace runs its " + std::to_string(ranks_) +
                                 " ranks as " + std::to_string(copies_) + " copies)");
    }
    if (dp) {
      for (int c = 0; c < copies_; ++c) npus.push_back(Npu(c, m));
    } else {
      npus.push_back(Npu(Copy(npu), m));
    }
  }
  return Add(system, pg, dp ? -1 : Copy(npu), std::move(npus));
}

StatusOr<int> Replication::Add(SystemLayer& system, int pg, int copy, std::vector<int> members) {
  const int id = next_id_;
  Status s = system.AddGroup(id, std::move(members));
  if (!s.ok()) return s;
  ++next_id_;
  ids_[{pg, copy}] = id;
  return id;
}

int Replication::PeerNpu(int npu, int64_t rank) const {
  if (rank < 0) return static_cast<int>(rank);
  return Npu(Copy(npu), static_cast<int>(rank));
}

int Replication::RootNpu(int pg, int root, int npu) const {
  return IsDataParallel(pg) ? PeerNpu(0, root) : PeerNpu(npu, root);
}

std::vector<int> Replication::UndefinedDataParallelGroups() const {
  std::vector<int> out;
  for (int g : dp_.groups) {
    if (ids_.count({g, -1}) == 0) out.push_back(g);
  }
  return out;
}

std::string Replication::Describe() const {
  std::string dp = FormatDataParallelGroups(dp_);
  if (dp == "none") {
    dp = "none (independent jobs)";
  } else {
    std::replace(dp.begin(), dp.end(), ',', ' ');
  }
  return "trace of " + std::to_string(ranks_) + (ranks_ == 1 ? " rank" : " ranks") + " run as " +
         std::to_string(copies_) + (copies_ == 1 ? " copy" : " copies") + " on " +
         std::to_string(num_npus()) + " NPUs; data-parallel groups: " + dp;
}

}  // namespace orrery
