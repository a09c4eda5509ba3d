#include "config/comm_group_config.h"

#include <cctype>
#include <set>

#include "config/schema.h"

namespace orrery {
namespace {

int ParseId(const YAML::Node& node) { return node.IsScalar() ? ParseDecimalId(node.Scalar()) : -1; }

std::string Shown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return "empty";
}

}  // namespace

int ParseDecimalId(std::string_view text) {
  if (text.empty() || text.size() > 9) return -1;  // kMaxCommGroupId has 9 digits
  int v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

StatusOr<std::map<int, std::vector<int>>> LoadCommGroupConfig(const std::string& path, int num_npus,
                                                              const std::set<int>* one_member_ok,
                                                              const std::string& member) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  Status problems;
  std::map<int, std::vector<int>> groups;
  std::set<int> ids;
  const std::string npu_range = member + " in [0, " + std::to_string(num_npus) + ")";
  const YAML::Node& root = file->root();
  for (auto it = root.begin(); it != root.end(); ++it) {
    const int id = ParseId(it->first);
    const std::string where = file->Where(it->first);
    if (id < 0) {
      problems.Add(where + ": group id is " + Shown(it->first) +
                   "; expected an integer from 1 to " + std::to_string(kMaxCommGroupId) +
                   " written as a JSON key, e.g. \"1\"");
      continue;
    }
    if (id == 0) {
      problems.Add(where +
                   ": group id is '0', which is reserved for the group of all NPUs "
                   "(a node's pg_name \"\" or \"0\"); expected an id from 1, e.g. \"1\"");
      continue;
    }
    const std::string group = "group " + std::to_string(id);
    if (!ids.insert(id).second) {
      problems.Add(where + ": " + group + " is defined more than once");
      continue;
    }
    const YAML::Node members = it->second;
    if (!members.IsSequence()) {
      problems.Add(where + ": " + group + " is " + Shown(members) +
                   "; expected a list of NPU ids, e.g. [0, 1, 2, 3]");
      continue;
    }
    std::vector<int> npus;
    std::set<int> seen;
    bool ok = true;
    for (size_t i = 0; i < members.size(); ++i) {
      const YAML::Node m = members[i];
      const int npu = m.IsScalar() && m.Tag() != "!" ? ParseId(m) : -1;
      if (npu < 0 || npu >= num_npus) {
        problems.Add(file->Where(m) + ": " + group + ", member " + std::to_string(i + 1) + ", is " +
                     Shown(m) + "; expected " + npu_range);
        ok = false;
        continue;
      }
      if (!seen.insert(npu).second) {
        problems.Add(file->Where(m) + ": " + group + " lists NPU " + std::to_string(npu) +
                     " more than once; expected each member once");
        ok = false;
        continue;
      }
      npus.push_back(npu);
    }
    const bool one_ok = one_member_ok != nullptr && one_member_ok->count(id) > 0;
    if (members.size() < (one_ok ? 1u : 2u)) {
      problems.Add(where + ": " + group + " has " + std::to_string(members.size()) +
                   (members.size() == 1 ? " member" : " members") + "; expected at least " +
                   (one_ok ? "1 NPU" : "2 NPUs") +
                   (one_member_ok != nullptr && !one_ok
                        ? " (or 1, for a data-parallel group --dp-groups names: it spans the "
                          "copies of the trace)"
                        : ""));
      ok = false;
    }
    if (ok) groups[id] = std::move(npus);
  }
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, path);
  return groups;
}

}  // namespace orrery
