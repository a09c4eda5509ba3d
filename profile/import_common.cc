#include "profile/import_common.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "et_feeder/writer.h"

namespace orrery {
namespace profile {

int64_t RoundCarrying(int64_t ns, int64_t* carry_ns) {
  const int64_t exact = ns + *carry_ns;
  int64_t us = exact >= 0 ? (exact + 500) / 1000 : 0;
  *carry_ns = exact - us * 1000;
  return us;
}

namespace {

// A group none of whose members is missing from the import stays a group; otherwise the
// collective runs over the whole simulated job (the ranks that stand for it with
// --replicate-trace), its size scaled so that each rank moves the bytes it moved in its group.
double WorldScale(et::CollectiveType type, int group, int world) {
  if (group <= 1 || world <= 1) return 1.0;
  const double g = group, w = world;
  switch (type) {
    case et::CollectiveType::kAllGather:
    case et::CollectiveType::kGather:
      return (g - 1) / (w - 1);
    case et::CollectiveType::kBroadcast:
    case et::CollectiveType::kReduce:
    case et::CollectiveType::kScatter:
    case et::CollectiveType::kBarrier:
      return 1.0;
    default:  // all-reduce, reduce-scatter, all-to-all: (n-1)/n of the buffer each
      return ((g - 1) / g) / ((w - 1) / w);
  }
}

}  // namespace

std::string GroupText(const std::vector<int>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

// Group ids over all ranks (ids from 1, by rank list), and the world fallbacks.
void ResolveGroups(const std::vector<std::vector<PlannedCollective>*>& per_rank,
                   const std::vector<int>& ranks, int world, ImportResult* result) {
  std::set<int> imported(ranks.begin(), ranks.end());
  std::map<std::vector<int>, int> ids;
  for (std::vector<PlannedCollective>* colls : per_rank) {
    for (PlannedCollective& c : *colls) {
      if (!c.spec.group.empty() && std::all_of(c.spec.group.begin(), c.spec.group.end(),
                                               [&](int r) { return imported.count(r) > 0; })) {
        ids.emplace(c.spec.group, 0);
      }
    }
  }
  int next = 1;
  for (auto& [group, id] : ids) {
    id = next++;
    std::vector<int> files;  // ranks as file indexes (ranks 0..N-1, or one rank as file 0)
    for (int r : group) {
      files.push_back(static_cast<int>(std::distance(imported.begin(), imported.find(r))));
    }
    result->groups[id] = files;
  }
  std::map<std::string, uint64_t> widened;
  for (std::vector<PlannedCollective>* colls : per_rank) {
    for (PlannedCollective& c : *colls) {
      if (c.spec.group.empty()) continue;
      const auto it = ids.find(c.spec.group);
      if (it != ids.end()) {
        c.group_id = it->second;
        continue;
      }
      const double scale = WorldScale(c.spec.type, static_cast<int>(c.spec.group.size()), world);
      c.spec.bytes = static_cast<uint64_t>(static_cast<double>(c.spec.bytes) * scale + 0.5);
      const bool contiguous =
          c.spec.group.back() - c.spec.group.front() + 1 == static_cast<int>(c.spec.group.size());
      const std::string members =
          contiguous && c.spec.group.size() > 4
              ? std::to_string(c.spec.group.front()) + ".." + std::to_string(c.spec.group.back())
              : GroupText(c.spec.group);
      ++widened[std::string(et::CollectiveTypeName(c.spec.type)) + " on " +
                std::to_string(c.spec.group.size()) + " ranks " + members +
                (c.spec.group_note.empty() ? "" : " (" + c.spec.group_note + ")")];
      c.spec.group.clear();
    }
  }
  for (const auto& [what, n] : widened) {
    result->notes.push_back(
        std::to_string(n) + " " + what +
        ": the group has ranks that are not imported, so it runs over the whole simulated job, "
        "its size scaled to keep the bytes each rank moves");
  }
}

void SetNodeAttrs(ChakraProtoMsg::Node* n, bool cpu, int64_t stream, const PlannedCollective* c) {
  et::SetBoolAttr(n, "is_cpu_op", cpu);
  if (stream >= 0) et::SetIntAttr(n, "stream", stream);
  if (c == nullptr) return;
  et::SetIntAttr(n, "comm_type", static_cast<int64_t>(c->spec.type));
  et::SetIntAttr(n, "comm_size", static_cast<int64_t>(c->spec.bytes));
  if (c->group_id > 0) et::SetStringAttr(n, "pg_name", std::to_string(c->group_id));
}

std::string ProcessGroupInitValues(const std::map<int, std::vector<int>>& groups) {
  std::string json = "[";
  bool first = true;
  for (const auto& [id, ranks] : groups) {
    json += std::string(first ? "" : ", ") + "{\"pg_name\": \"" + std::to_string(id) +
            "\", \"ranks\": " + GroupText(ranks) + "}";
    first = false;
  }
  return "['" + json + "]']";
}

Status WriteCommGroups(const std::map<int, std::vector<int>>& groups, const std::string& path) {
  std::ofstream out(path);
  out << "{";
  bool first = true;
  for (const auto& [id, members] : groups) {
    out << (first ? "" : ", ") << "\"" << id << "\": " << GroupText(members);
    first = false;
  }
  out << "}\n";
  out.close();
  if (!out) return Status::Error(path + ": cannot write the communicator groups");
  return Status::Ok();
}

Status WriteRanksAndGroups(
    const std::vector<int>& ranks, const std::vector<std::string>& sources, const ImportOptions& o,
    ImportResult* result,
    const std::function<Status(size_t, const std::string&, RankImport*)>& write) {
  if (Status s = et::MakeTraceDirectory(o.output_prefix); !s.ok()) return s;
  std::vector<size_t> by_rank(ranks.size());
  for (size_t i = 0; i < by_rank.size(); ++i) by_rank[i] = i;
  std::sort(by_rank.begin(), by_rank.end(),
            [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
  for (size_t f = 0; f < by_rank.size(); ++f) {
    const size_t i = by_rank[f];
    RankImport stats;
    stats.rank = ranks[i];
    stats.source = sources[i];
    stats.path = et::RankTracePath(o.output_prefix, static_cast<int>(f));
    if (Status s = write(i, stats.path, &stats); !s.ok()) return s;
    result->ranks.push_back(std::move(stats));
  }
  if (!result->groups.empty() && o.groups == ImportOptions::Groups::kJson) {
    result->comm_groups_path = o.output_prefix + ".comm_groups.json";
    return WriteCommGroups(result->groups, result->comm_groups_path);
  }
  return Status::Ok();
}

}  // namespace profile
}  // namespace orrery
