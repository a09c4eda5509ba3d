// LoadSweepSpec: a spec's top-level keys, its base, then its grid or points, every problem
// collected (at most kMaxProblemsPerFile shown), each at its line of the spec.
#include "sweep/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "config/schema.h"
#include "config/system_config.h"
#include "memory/memory_config.h"
#include "network/network_config.h"
#include "sweep/files.h"
#include "sweep/sweep.h"
#include "workload/placement.h"

namespace orrery {

using sweep_internal::DirOf;
using sweep_internal::Join;
using sweep_internal::kMaxGeneratedBytes;
using sweep_internal::SizeProblem;

namespace {

// More points than this is a mistake in the spec (or a study for several specs and shards).
constexpr int kMaxSweepPoints = 1000000;

// The spec's top-level keys and its base's keys, declared once: the loader checks them and
// docs/sweeps.md lists them (SweepSpecKeys, SweepBaseKeys).
struct SweepTop {
  std::string name, base, grid, points, output;
};

// The top level's values are maps and lists, read below; the schema here names and documents
// them and refuses unknown keys.
std::vector<KeySpec> MakeTopKeys() {
  Schema<SweepTop> s;
  s.String("name", &SweepTop::name).Help("the study's name (not used by the run)");
  s.String("base", &SweepTop::base)
      .Default("required")
      .AllowedText("a map of base keys")
      .Help("what every point runs unless it varies it: the base keys below");
  s.String("grid", &SweepTop::grid)
      .AllowedText("a map: parameter -> list of values")
      .Help(
          "the points as a cartesian product of each parameter's values, first parameter "
          "slowest; either grid or points");
  s.String("points", &SweepTop::points)
      .AllowedText("a list of maps: parameter -> value")
      .Help("the points one by one; either grid or points");
  s.String("output", &SweepTop::output)
      .Help(
          "the output prefix (PREFIX.csv, PREFIX.json) unless --out is given; relative to "
          "the spec");
  return s.keys();
}

const std::vector<KeySpec>& TopKeys() {
  static const std::vector<KeySpec> keys = MakeTopKeys();
  return keys;
}

// The base's values as given (a path, a name, true/false); `workload` may instead be a map
// {collective, size}, read by ReadBase.
struct SweepBase {
  std::string system, network, memory, workload, backend, nccl_model, nccl_algorithm, comm_groups,
      replicate_trace, dp_groups, jobs, jobs_alone;
};

// "" when `text` is a --dp-groups value, else what would be valid and, when the parser says
// which item is wrong, its words.
std::string DpGroupsProblem(const std::string& text) {
  if (text.find_first_not_of(" \t") == std::string::npos) return DataParallelGroupsSyntax();
  StatusOr<DataParallelGroups> dp = ParseDataParallelGroups(text);
  if (dp.ok()) return "";
  std::string why = dp.status().message();
  std::replace(why.begin(), why.end(), '\n', ' ');
  return DataParallelGroupsSyntax() + " (" + why + ")";
}

Schema<SweepBase> MakeBaseSchema() {
  using B = SweepBase;
  const std::vector<std::string> kBool = {"true", "false"};
  Schema<B> s;
  s.String("system", &B::system).Help("the system config (a path), as --system-configuration");
  s.String("network", &B::network).Help("the network config (a path), as --network-configuration");
  s.String("memory", &B::memory)
      .Help("the remote-memory config (a path), as --remote-memory-configuration");
  s.String("workload", &B::workload)
      .AllowedText(
          "a trace prefix, or {collective: all_reduce|all_gather|reduce_scatter|"
          "all_to_all, size: BYTES}")
      .Help(
          "the workload: a trace prefix (as --workload-configuration) or one generated "
          "collective of size bytes per NPU (1 to 2^53, in digits)");
  s.String("backend", &B::backend).Help("the network backend, as --network-backend");
  s.String("nccl-model", &B::nccl_model)
      .Help("a machine profile's nccl.yaml in place of the system config's, as --nccl-model");
  s.String("nccl-algorithm", &B::nccl_algorithm)
      .Help("auto (NCCL's own choice), ring, tree or nvls, as --nccl-algorithm");
  s.String("comm-groups", &B::comm_groups)
      .Help("a communicator-group JSON file, as --comm-group-configuration");
  s.Enum("replicate-trace", &B::replicate_trace, kBool)
      .Default("false")
      .Help("run a trace of fewer ranks on every NPU, as --replicate-trace");
  s.String("dp-groups", &B::dp_groups)
      .Check(DpGroupsProblem)
      .Help("with replicate-trace, the groups that span every copy, as --dp-groups");
  s.String("jobs", &B::jobs).Help("a jobs file in place of workload, as --jobs");
  s.Enum("jobs-alone", &B::jobs_alone, kBool)
      .Default("false")
      .Help("with jobs, also run each job alone, as --jobs-alone");
  return s;
}

const Schema<SweepBase>& BaseSchema() {
  static const Schema<SweepBase> schema = MakeBaseSchema();
  return schema;
}

// The parameters that stand for a whole value (the others are system.<key>, network.<key> and
// memory.<key>).
const std::vector<std::string> kWholeParams = {"backend",
                                               "system",
                                               "network",
                                               "memory",
                                               "workload",
                                               "nccl-model",
                                               "nccl-algorithm",
                                               "comm-groups",
                                               "replicate-trace",
                                               "dp-groups",
                                               "jobs",
                                               "jobs-alone",
                                               "workload.collective",
                                               "workload.size"};

std::string Where(const std::string& path, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.is_null() ? path : path + ":" + std::to_string(m.line + 1);
}

// A key as messages show it: its name, or in flow style when YAML gives a list or a map there.
std::string KeyText(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : FlowYaml(key); }

// The names in `names`, comma-separated, for messages.
std::string ListOf(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A key inside a system, network or memory file ("system.endpoint-delay").
bool IsFileKey(const std::string& p) {
  for (const char* prefix : {"system.", "network.", "memory."}) {
    const size_t n = std::strlen(prefix);
    if (p.size() > n && p.compare(0, n, prefix) == 0) return true;
  }
  return false;
}

bool IsParamName(const std::string& p) {
  return std::find(kWholeParams.begin(), kWholeParams.end(), p) != kWholeParams.end() ||
         IsFileKey(p);
}

// For a parameter system.<key>, network.<key> or memory.<key> whose key that kind of config
// file does not have: what is wrong and what would be valid (else ""). Checked before any point
// runs, so a misspelt key is named at its line of the spec instead of failing every point.
std::string UnknownConfigKey(const std::string& p) {
  const size_t dot = p.find('.');
  if (dot == std::string::npos || dot + 1 == p.size()) return "";
  const std::string kind = p.substr(0, dot);
  const std::string key = p.substr(dot + 1);
  std::vector<KeyDoc> docs;
  if (kind == "system") {
    docs = SystemConfigKeys();
  } else if (kind == "network") {
    docs = NetworkConfigKeys();
  } else if (kind == "memory") {
    docs = MemoryConfigKeys();
  } else {
    return "";
  }
  std::vector<std::string> names;
  for (const KeyDoc& d : docs) {
    if (d.name == key) return "";
    names.push_back(d.name);
  }
  const std::string guess = DidYouMean(key, names);
  return "'" + key + "' is not a " + kind + " config key" +
         (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
         "; configs/README.md lists them";
}

// Why `value` is not a valid value of key or parameter `name` ("" when it is, or when `name` takes
// any value here): replicate-trace, jobs-alone and dp-groups as the base declares them,
// workload.size a number of bytes (SizeProblem).
std::string BadValue(const std::string& name, const YAML::Node& value) {
  if (name == "workload.size") {
    uint64_t bytes = 0;
    const std::string bad = SizeProblem(value, &bytes);
    return bad.empty() ? "" : "'workload.size' is " + bad;
  }
  if (name != "replicate-trace" && name != "jobs-alone" && name != "dp-groups") return "";
  for (const KeySpec& k : BaseSchema().keys()) {
    if (k.name != name) continue;
    ConfigValue checked;
    const Status s = CheckFlagValue(k, value, "'" + name + "'", &checked);
    if (!s.ok()) return s.problems().front();
  }
  return "";
}

// The spec's top-level keys: each one of TopKeys().
void CheckTopKeys(const std::string& path, const YAML::Node& root, Status* problems) {
  std::vector<std::string> names;
  for (const KeySpec& k : TopKeys()) names.push_back(k.name);
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = KeyText(it->first);
    if (IsMergeKey(it->first)) {
      problems->Add(MergeKeyProblem(Where(path, it->first)));
      continue;
    }
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      std::string msg = Where(path, it->first) + ": unknown key '" + key + "'";
      const std::string guess = DidYouMean(key, names);
      msg +=
          guess.empty() ? "; expected one of " + ListOf(names) : " (did you mean '" + guess + "'?)";
      problems->Add(msg);
    }
  }
}

// A generated workload {collective, size} into spec.
void ReadGeneratedWorkload(const std::string& path, const YAML::Node& v, SweepSpec* spec,
                           Status* problems) {
  const YAML::Node c = v["collective"], s = v["size"];
  if (!c || !s || v.size() != 2) {
    problems->Add(Where(path, v) +
                  ": a generated workload is {collective: all_reduce|all_gather|"
                  "reduce_scatter|all_to_all, size: <bytes>}");
    return;
  }
  spec->generate_collective = c.Scalar();
  if (const std::string bad = SizeProblem(s, &spec->generate_size); !bad.empty()) {
    problems->Add(Where(path, s) + ": base workload size is " + bad);
  }
}

// The base: its keys checked against BaseSchema() (a generated workload's map read apart), each
// valid one's text into spec->base. Repeated keys were refused before (DuplicateKeys).
void ReadBase(const std::string& path, const YAML::Node& base, SweepSpec* spec, Status* problems) {
  if (!base || !base.IsMap()) {
    problems->Add(path +
                  ": 'base' is missing; it names system, network, workload or jobs (and "
                  "optionally memory, backend)");
    return;
  }
  YAML::Node keys(YAML::NodeType::Map);  // the base without a generated workload's map
  for (auto it = base.begin(); it != base.end(); ++it) {
    const YAML::Node key = it->first, value = it->second;
    if (KeyText(key) == "workload" && value.IsMap()) {
      ReadGeneratedWorkload(path, value, spec, problems);
    } else {
      keys.force_insert(key, value);
    }
  }
  StatusOr<ConfigFile> file = ConfigFile::FromNode(keys, path);
  if (!file.ok()) return;  // (a map always is one)
  SweepBase values;
  std::set<std::string> valid;
  problems->Merge(BaseSchema().Apply(*file, &values, &valid));
  for (const std::string& key : valid) spec->base[key] = file->Get(key).Scalar();
}

// Whether a grid's or a point's parameter name is one a sweep varies (else a problem added).
bool CheckParamName(const std::string& path, const YAML::Node& name_node, Status* problems) {
  const std::string name = KeyText(name_node);
  if (IsMergeKey(name_node)) {
    problems->Add(MergeKeyProblem(Where(path, name_node)));
    return false;
  }
  if (const std::string bad = UnknownConfigKey(name); !bad.empty()) {
    problems->Add(Where(path, name_node) + ": parameter '" + name + "': " + bad);
    return false;
  }
  if (!IsParamName(name)) {
    problems->Add(Where(path, name_node) + ": parameter '" + name + "' is not one of " +
                  ListOf(kWholeParams) + ", system.<key>, network.<key>, memory.<key>");
    return false;
  }
  return true;
}

// A parameter's value as a point's cell holds it: a key inside a file keeps its quotes, for
// that file's checks ("20" is not 20).
std::string ParamValue(const std::string& name, const YAML::Node& v) {
  return IsFileKey(name) ? FlowYamlKeepingQuotes(v) : FlowYaml(v);
}

// The cartesian product of `values` (one list per parameter of spec->param_names), first
// parameter varying slowest, appended to spec->points.
void AddGridPoints(const std::vector<std::vector<std::string>>& values, SweepSpec* spec) {
  std::vector<size_t> at(values.size(), 0);
  while (true) {
    SweepPoint p;
    p.index = static_cast<int>(spec->points.size());
    for (size_t i = 0; i < values.size(); ++i) {
      p.params.emplace_back(spec->param_names[i], values[i][at[i]]);
    }
    spec->points.push_back(std::move(p));
    size_t d = values.size();
    while (d > 0 && ++at[d - 1] == values[d - 1].size()) at[--d] = 0;
    if (d == 0) break;
  }
}

void ReadGrid(const std::string& path, const YAML::Node& grid, SweepSpec* spec, Status* problems) {
  if (!grid.IsMap() || grid.size() == 0) {
    problems->Add(Where(path, grid) + ": 'grid' maps each parameter to a list of values");
    return;
  }
  std::vector<std::vector<std::string>> values;
  for (auto it = grid.begin(); it != grid.end(); ++it) {
    if (!CheckParamName(path, it->first, problems)) continue;
    if (!it->second.IsSequence() || it->second.size() == 0) {
      problems->Add(Where(path, it->second) + ": grid parameter '" + it->first.Scalar() +
                    "' needs a non-empty list of values");
      continue;
    }
    spec->param_names.push_back(it->first.Scalar());
    values.emplace_back();
    // A copy: `it->second` is a member of a proxy that dies with the full expression, and a
    // range-for over it read freed stack (ASan, under fuzz:sweep_spec).
    const YAML::Node list = it->second;
    for (const YAML::Node& v : list) {
      if (const std::string bad = BadValue(it->first.Scalar(), v); !bad.empty()) {
        problems->Add(Where(path, v) + ": grid value of " + bad);
      }
      values.back().push_back(ParamValue(it->first.Scalar(), v));
    }
  }
  double count = 1;  // the product's size, checked before it is built
  for (const auto& v : values) count *= static_cast<double>(v.size());
  if (problems->ok() && count > kMaxSweepPoints) {
    problems->Add(Where(path, grid) + ": the grid has " + FormatNumber(count) +
                  " points; at most " + std::to_string(kMaxSweepPoints) +
                  " (split the study into several specs)");
  }
  if (problems->ok()) AddGridPoints(values, spec);
}

void ReadPoints(const std::string& path, const YAML::Node& points, SweepSpec* spec,
                Status* problems) {
  if (!points.IsSequence() || points.size() == 0) {
    problems->Add(Where(path, points) + ": 'points' is a list of maps {parameter: value}");
    return;
  }
  for (const YAML::Node& pt : points) {
    if (!pt.IsMap()) {
      problems->Add(Where(path, pt) + ": each point is a map {parameter: value}");
      continue;
    }
    SweepPoint p;
    p.index = static_cast<int>(spec->points.size());
    for (auto it = pt.begin(); it != pt.end(); ++it) {
      if (!CheckParamName(path, it->first, problems)) continue;
      const std::string name = it->first.Scalar();
      if (std::find(spec->param_names.begin(), spec->param_names.end(), name) ==
          spec->param_names.end()) {
        spec->param_names.push_back(name);
      }
      if (const std::string bad = BadValue(name, it->second); !bad.empty()) {
        problems->Add(Where(path, it->second) + ": point value of " + bad);
      }
      p.params.emplace_back(name, ParamValue(name, it->second));
    }
    spec->points.push_back(std::move(p));
  }
}

}  // namespace

namespace sweep_internal {

std::string SizeProblem(const YAML::Node& v, uint64_t* bytes) {
  const std::string expected = "; expected a whole number of bytes from 1 to " +
                               std::to_string(kMaxGeneratedBytes) + " (2^53), written in digits";
  if (!v.IsScalar()) return (v.IsNull() ? std::string("empty") : KeyText(v)) + expected;
  const std::string& s = v.Scalar();
  const std::string shown = "'" + s + "'";
  if (v.Tag() == "!") return shown + expected + " without quotes";
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string digits = hex ? s.substr(2) : s;
  const bool well_formed =
      !digits.empty() &&
      digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") ==
          std::string::npos &&
      (hex || digits[0] != '0' || digits.size() == 1);  // 010: octal to YAML 1.1, 10 to 1.2
  if (well_formed) {
    errno = 0;
    const unsigned long long n = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
    if (errno != ERANGE && n >= 1 && n <= kMaxGeneratedBytes) {
      *bytes = n;
      return "";
    }
  }
  return shown + expected;
}

}  // namespace sweep_internal

namespace {

// ASTRA-sim 2.0 has no sweep spec: a study there is a script around single runs.
std::vector<KeyDoc> NotInAstraSim(std::vector<KeyDoc> docs) {
  for (KeyDoc& d : docs) d.astra_sim = "no sweep spec there: one run per invocation";
  return docs;
}

}  // namespace

// The top level's maps and lists, and the base's workload, are read apart from the schema's
// string checks (ReadBase, ReadGrid, ReadPoints): their type as written.
std::vector<KeyDoc> SweepSpecKeys() {
  std::vector<KeyDoc> docs;
  for (const KeySpec& k : TopKeys()) {
    docs.push_back(k.Doc());
    if (k.name == "base" || k.name == "grid") docs.back().type = "map";
    if (k.name == "points") docs.back().type = "list of maps";
  }
  return NotInAstraSim(docs);
}

std::vector<KeyDoc> SweepBaseKeys() {
  std::vector<KeyDoc> docs = BaseSchema().Docs();
  for (KeyDoc& d : docs) {
    if (d.name == "workload") d.type = "string or map";
  }
  return NotInAstraSim(docs);
}

std::string SweepPoint::Key() const {
  std::string k;
  for (const auto& [name, value] : params) k += name + "=" + value + ";";
  return k;
}

StatusOr<SweepSpec> LoadSweepSpec(const std::string& path) {
  SweepSpec spec;
  spec.path = path;
  spec.dir = DirOf(path);
  // The shared loader: one document (a second one, after '---', is not dropped unread), its
  // syntax errors at their line and column, aliases bounded (config/yaml_aliases.h).
  StatusOr<YAML::Node> document = ReadYamlDocument(path);
  if (!document.ok()) return document.status();
  const YAML::Node root = *document;
  if (!root.IsMap())
    return Status::Error(path + ": a sweep spec is a map with 'base' and 'grid' or 'points'");
  if (Status dup = DuplicateKeys(root, path); !dup.ok()) return dup;
  Status problems;
  CheckTopKeys(path, root, &problems);
  ReadBase(path, root["base"], &spec, &problems);
  const YAML::Node grid = root["grid"], points = root["points"];
  if (grid && points) problems.Add(path + ": give either 'grid' or 'points', not both");
  if (!grid && !points) problems.Add(path + ": nothing to vary: add a 'grid' or a 'points' list");
  if (grid) ReadGrid(path, grid, &spec, &problems);
  if (points) ReadPoints(path, points, &spec, &problems);
  if (const YAML::Node out = root["output"]) spec.output = Join(spec.dir, out.Scalar());
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, path);
  return spec;
}

}  // namespace orrery
