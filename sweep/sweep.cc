#include "sweep/sweep.h"

#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <optional>
#include <set>
#include <sstream>

#include "common/json.h"
#include "config/network_config.h"
#include "config/schema.h"
#include "config/system_config.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"
#include "memory/memory_config.h"
#include "report/breakdown.h"
#include "runner/estimate.h"
#include "runner/jobs_config.h"
#include "runner/run.h"
#include "workload/placement.h"

namespace orrery {

namespace {

// More points than this is a mistake in the spec (or a study for several specs and shards).
constexpr int kMaxSweepPoints = 1000000;

const std::vector<std::string> kSpecKeys = {"name", "base", "grid", "points", "output"};
const std::vector<std::string> kBaseKeys = {
    "system",         "network",     "memory",          "workload",  "backend", "nccl-model",
    "nccl-algorithm", "comm-groups", "replicate-trace", "dp-groups", "jobs",    "jobs-alone"};
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
// critical_path_*: what the step's critical path spent in GPU compute and in communication
// (report/breakdown.h); the rest of end_ns is CPU and remote memory.
const std::vector<std::string> kMetrics = {"end_ns",
                                           "compute_ns",
                                           "communication_ns",
                                           "exposed_communication_ns",
                                           "overlap_percent",
                                           "alg_bw_gbps",
                                           "bus_bw_gbps",
                                           "critical_path_compute_ns",
                                           "critical_path_communication_ns",
                                           "events"};

// The largest generated collective: a Chakra comm_size is an int64, and the system layer runs a
// collective of up to 2^53 bytes.
constexpr uint64_t kMaxGeneratedBytes = uint64_t{1} << 53;

// A per-job column ("job.<name>.<metric>"): numeric, as the metrics are.
bool IsJobColumn(const std::string& col) { return col.compare(0, 4, "job.") == 0; }

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

// A generated workload's size in bytes, `v` (the base's `size` or a `workload.size` value):
// "" with *bytes set, or what `v` is and what would be valid. An integer in digits (or 0x hex),
// unquoted, 1 .. 2^53. YAML reads 1e6 and 1048576.0 as floats; yaml-cpp's as<uint64_t> reads 010
// as octal; a quoted "1024" is a string, as the config files have it.
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

std::string Join(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || dir.empty()) return path;
  return dir + "/" + path;
}

// The directory part of a file's path ("" for a bare name).
std::string DirOf(const std::string& file) {
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "" : file.substr(0, slash);
}

// The whole of a file, or nullopt when it cannot be opened.
std::optional<std::string> FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A sweep output's PREFIX.base, beside its PREFIX.csv.
std::string BaseFileOf(const std::string& csv) {
  const bool suffix = csv.size() > 4 && csv.compare(csv.size() - 4, 4, ".csv") == 0;
  return (suffix ? csv.substr(0, csv.size() - 4) : csv) + ".base";
}

// Writes a sweep's PREFIX.base.
Status WriteBaseFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  return Status::Ok();
}

// What a sweep's rows were run on besides their parameters: the spec's base (its keys and
// values, the generated collective) and the contents of every file the base or a point's
// parameters name (configs, jobs and comm-group files), with the files those name in turn (a
// system file's nccl-model, a network's custom-file, a jobs file's comm-groups and workloads),
// and every rank file of a trace prefix. Hashed with 64-bit FNV-1a. --resume keeps earlier rows
// only while this is unchanged (PREFIX.base holds the runs' own); any change runs every point
// again.
std::string BaseFingerprint(const SweepSpec& spec) {
  auto fnv = [](const std::string& text) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string(hex);
  };
  std::map<std::string, std::string> files;  // path -> hash, each file once
  std::vector<std::string> pending;          // hashed files whose own references to follow
  // Hashes `file` if it is a regular file not hashed yet; whether it was.
  auto hash_new = [&](const std::string& file) {
    struct stat st {};
    if (files.count(file) != 0 || stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return false;
    }
    files[file] = fnv(FileText(file).value_or(""));
    return true;
  };
  auto note = [&](const std::string& dir, const std::string& value) {
    if (!value.empty() && hash_new(Join(dir, value))) pending.push_back(Join(dir, value));
  };
  // A trace prefix: its rank files <prefix>.0.et, <prefix>.1.et, ... up to the first missing.
  auto note_trace = [&](const std::string& dir, const std::string& prefix) {
    if (prefix.empty()) return;
    for (int rank = 0;; ++rank) {
      const std::string file = Join(dir, prefix + "." + std::to_string(rank) + ".et");
      if (files.count(file) == 0 && !hash_new(file)) return;
    }
  };
  std::string out =
      "# what --resume compares: the spec's base and the files it and the points name\n";
  for (const auto& [key, value] : spec.base) {
    out += key + " = " + value + "\n";
    note(spec.dir, value);
    if (key == "workload") note_trace(spec.dir, value);
  }
  for (const SweepPoint& p : spec.points) {
    for (const auto& [name, value] : p.params) {
      if (name.find('.') != std::string::npos) continue;  // a key inside a file, not a file
      try {
        const YAML::Node v = YAML::Load(value);
        if (v.IsScalar()) note(spec.dir, v.Scalar());
        if (v.IsScalar() && name == "workload") note_trace(spec.dir, v.Scalar());
      } catch (const YAML::Exception&) {
      }
    }
  }
  // The files those name: nccl-model, custom-file, and a jobs file's comm-groups.
  while (!pending.empty()) {
    const std::string file = pending.back();
    pending.pop_back();
    try {
      const StatusOr<YAML::Node> read = ReadYamlDocument(file);
      if (!read.ok() || !read->IsMap()) continue;
      const YAML::Node doc = *read;
      const std::string dir = DirOf(file);
      for (const char* key : {"nccl-model", "custom-file"}) {
        if (doc[key] && doc[key].IsScalar()) note(dir, doc[key].Scalar());
      }
      // A custom collective's rank ETs (relative to the working directory, as ASTRA-sim reads
      // them).
      for (const auto& kv : doc) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
        const std::string suffix = "-implementation-custom";
        if (key.size() > suffix.size() &&
            key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            kv.second.IsScalar()) {
          note_trace("", kv.second.Scalar());
        }
      }
      if (doc["jobs"] && doc["jobs"].IsSequence()) {
        for (const YAML::Node& job : doc["jobs"]) {
          if (job.IsMap() && job["comm-groups"] && job["comm-groups"].IsScalar()) {
            note(dir, job["comm-groups"].Scalar());
          }
          if (job.IsMap() && job["workload"] && job["workload"].IsScalar()) {
            note_trace(dir, job["workload"].Scalar());
          }
        }
      }
    } catch (const YAML::Exception&) {
      // Not YAML (a custom topology, a trace): its hash is enough.
    }
  }
  for (const auto& [file, hash] : files) out += "file " + file + " " + hash + "\n";
  if (!spec.generate_collective.empty() || spec.generate_size != 0) {
    out +=
        "generated = " + spec.generate_collective + " " + std::to_string(spec.generate_size) + "\n";
  }
  return out;
}

// `path` from the working directory, made absolute.
std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// One CSV line into fields (RFC 4180 quoting); false if the line is incomplete.
bool ParseCsvLine(const std::string& line, std::vector<std::string>* fields) {
  fields->clear();
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields->push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (quoted) return false;
  fields->push_back(cur);
  return true;
}

Status MakeDirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::Error(cur + ": cannot create directory: " + std::strerror(errno));
    }
    struct stat st;  // "f/" of a file fails stat; "f" says what it is
    if (stat(cur.substr(0, cur.size() - 1).c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      return Status::Error(cur + ": cannot create directory: a file is in the way");
    }
  }
  return Status::Ok();
}

struct Table {
  std::vector<std::string> header;
  std::map<int, std::vector<std::string>> rows;  // by point index
};

Status ReadTable(const std::string& path, Table* t, bool must_exist) {
  std::ifstream f(path);
  if (!f) {
    return must_exist ? Status::Error(path + ": cannot read: " + std::strerror(errno))
                      : Status::Ok();
  }
  std::string line;
  std::vector<std::string> fields;
  int n = 0;
  while (std::getline(f, line)) {
    ++n;
    if (!ParseCsvLine(line, &fields)) continue;  // a line cut short by an interruption
    if (n == 1) {
      if (fields.empty() || fields[0] != "point") {
        return Status::Error(path +
                             ":1: not a sweep output (its header does not start with "
                             "'point')");
      }
      t->header = fields;
      continue;
    }
    if (fields.size() != t->header.size()) continue;  // incomplete line
    char* end = nullptr;
    const long idx = std::strtol(fields[0].c_str(), &end, 10);
    if (*end != '\0' || idx < 0) continue;
    t->rows[static_cast<int>(idx)] = fields;
  }
  return Status::Ok();
}

Status WriteOutputs(const Table& t, const std::string& out) {
  std::string csv;
  for (size_t i = 0; i < t.header.size(); ++i) csv += (i ? "," : "") + Csv(t.header[i]);
  csv += "\n";
  std::string json = "[\n";
  size_t k = 0;
  for (const auto& [idx, row] : t.rows) {
    for (size_t i = 0; i < row.size(); ++i) csv += (i ? "," : "") + Csv(row[i]);
    csv += "\n";
    json += "  {";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string& col = t.header[i];
      const bool numeric = (col == "point" || IsJobColumn(col) ||
                            std::find(kMetrics.begin(), kMetrics.end(), col) != kMetrics.end()) &&
                           !row[i].empty();
      json += (i ? ", " : "") + JsonString(col) + ": " + (numeric ? row[i] : JsonString(row[i]));
    }
    json += ++k < t.rows.size() ? "},\n" : "}\n";
  }
  json += "]\n";
  // Write beside and rename: a reader (or an interruption) never sees half a file.
  for (const auto& [path, text] :
       {std::pair<std::string, std::string>{out + ".csv", csv}, {out + ".json", json}}) {
    const std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary);
      if (!f) return Status::Error(tmp + ": cannot write: " + std::strerror(errno));
      f << text;
      if (!f) return Status::Error(tmp + ": write failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      return Status::Error(path + ": cannot replace: " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

// The files one point runs on, written under <out>.points/<index>/ when a key is overridden.
struct Prepared {
  RunOptions run;
  bool jobs_alone = false;  // jobs-alone: run each job alone too (AddJobsAlone)
  std::string error;
};

// Whole parameter `name` of point `p` as a scalar: the point's value, else the base's ("").
std::string WholeValue(const SweepSpec& spec, const SweepPoint& p, const std::string& name) {
  for (const auto& [n, v] : p.params) {
    if (n == name) return YAML::Load(v).Scalar();
  }
  auto it = spec.base.find(name);
  return it == spec.base.end() ? "" : it->second;
}

// The per-job columns of a sweep whose points name jobs files: every job name of every point's
// file, in order of first appearance (point order, then the file's order), and whether any point
// runs its jobs alone too. Taken from every point, not one shard's, so shards share a header.
struct JobColumns {
  std::vector<std::string> names;
  bool alone = false;

  std::vector<std::string> Header() const {
    std::vector<std::string> h;
    for (const std::string& n : names) {
      h.push_back("job." + n + ".end_ns");
      if (alone) {
        h.push_back("job." + n + ".alone_ns");
        h.push_back("job." + n + ".sharing_percent");
      }
    }
    return h;
  }
};

StatusOr<JobColumns> JobColumnsOf(const SweepSpec& spec) {
  JobColumns c;
  std::set<std::string> read;
  for (const SweepPoint& p : spec.points) {
    const std::string file = WholeValue(spec, p, "jobs");
    if (file.empty()) continue;
    if (WholeValue(spec, p, "jobs-alone") == "true") c.alone = true;
    if (!read.insert(file).second) continue;
    StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(Join(spec.dir, file));
    if (!jobs.ok()) {
      return jobs.status().WithContext(spec.path + ": point " + std::to_string(p.index) +
                                       " names jobs file '" + file + "'");
    }
    for (const JobSpec& j : *jobs) {
      if (std::find(c.names.begin(), c.names.end(), j.name) == c.names.end()) {
        c.names.push_back(j.name);
      }
    }
  }
  return c;
}

// The parameter columns of point `p`'s row: its value of each of the spec's parameters, in
// column order, blank for those it does not set.
std::vector<std::string> ParamCells(const SweepSpec& spec, const SweepPoint& p) {
  std::vector<std::string> cells(spec.param_names.size());
  for (const auto& [name, value] : p.params) {
    cells[std::find(spec.param_names.begin(), spec.param_names.end(), name) -
          spec.param_names.begin()] = value;
  }
  return cells;
}

}  // namespace

std::string SweepPoint::Key() const {
  std::string k;
  for (const auto& [name, value] : params) k += name + "=" + value + ";";
  return k;
}

// Why `value` is not a valid value of key or parameter `name` ("" when it is, or when `name` takes
// any value here): replicate-trace and jobs-alone are true or false, dp-groups what --dp-groups
// takes, workload.size a number of bytes (SizeProblem).
std::string BadValue(const std::string& name, const YAML::Node& value) {
  if (name == "workload.size") {
    uint64_t bytes = 0;
    const std::string bad = SizeProblem(value, &bytes);
    return bad.empty() ? "" : "'workload.size' is " + bad;
  }
  if (name == "replicate-trace" || name == "jobs-alone") {
    if (value.IsScalar() && (value.Scalar() == "true" || value.Scalar() == "false")) return "";
    return "'" + name + "' is " + (value.IsScalar() ? "'" + value.Scalar() + "'" : KeyText(value)) +
           "; expected true or false";
  }
  if (name == "dp-groups") {
    const std::string shown = value.IsScalar() ? "'" + value.Scalar() + "'" : KeyText(value);
    if (!value.IsScalar() || value.Scalar().find_first_not_of(" \t") == std::string::npos) {
      return "'dp-groups' is " + (value.IsScalar() ? std::string("empty") : shown) + "; expected " +
             DataParallelGroupsSyntax();
    }
    StatusOr<DataParallelGroups> dp = ParseDataParallelGroups(value.Scalar());
    if (!dp.ok()) {
      std::string why = dp.status().message();
      std::replace(why.begin(), why.end(), '\n', ' ');
      return "'dp-groups' " + shown + ": " + why;
    }
  }
  return "";
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
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = KeyText(it->first);
    if (IsMergeKey(it->first)) {
      problems.Add(MergeKeyProblem(Where(path, it->first)));
      continue;
    }
    if (std::find(kSpecKeys.begin(), kSpecKeys.end(), key) == kSpecKeys.end()) {
      std::string msg = Where(path, it->first) + ": unknown key '" + key + "'";
      const std::string guess = DidYouMean(key, kSpecKeys);
      msg += guess.empty() ? "; expected one of name, base, grid, points, output"
                           : " (did you mean '" + guess + "'?)";
      problems.Add(msg);
    }
  }
  const YAML::Node base = root["base"];
  if (!base || !base.IsMap()) {
    problems.Add(path +
                 ": 'base' is missing; it names system, network, workload or jobs (and "
                 "optionally memory, backend)");
  } else {
    for (auto it = base.begin(); it != base.end(); ++it) {
      const std::string key = KeyText(it->first);
      if (IsMergeKey(it->first)) {
        problems.Add(MergeKeyProblem(Where(path, it->first)));
        continue;
      }
      if (std::find(kBaseKeys.begin(), kBaseKeys.end(), key) == kBaseKeys.end()) {
        const std::string guess = DidYouMean(key, kBaseKeys);
        problems.Add(Where(path, it->first) + ": unknown base key '" + key + "'" +
                     (guess.empty() ? "; expected " + ListOf(kBaseKeys)
                                    : " (did you mean '" + guess + "'?)"));
        continue;
      }
      const YAML::Node v = it->second;
      if (key == "workload" && v.IsMap()) {
        const YAML::Node c = v["collective"], s = v["size"];
        if (!c || !s || v.size() != 2) {
          problems.Add(Where(path, v) +
                       ": a generated workload is {collective: all_reduce|all_gather|"
                       "reduce_scatter|all_to_all, size: <bytes>}");
          continue;
        }
        spec.generate_collective = c.Scalar();
        if (const std::string bad = SizeProblem(s, &spec.generate_size); !bad.empty()) {
          problems.Add(Where(path, s) + ": base workload size is " + bad);
        }
        continue;
      }
      if (const std::string bad = BadValue(key, v); !bad.empty()) {
        problems.Add(Where(path, v) + ": base " + bad);
        continue;
      }
      if (!v.IsScalar()) {
        problems.Add(Where(path, v) + ": base '" + key +
                     "' must be a path (or a backend or algorithm name)");
        continue;
      }
      spec.base[key] = v.Scalar();
    }
  }
  const YAML::Node grid = root["grid"], points = root["points"];
  if (grid && points) problems.Add(path + ": give either 'grid' or 'points', not both");
  if (!grid && !points) problems.Add(path + ": nothing to vary: add a 'grid' or a 'points' list");
  auto check_name = [&](const YAML::Node& name_node) {
    const std::string name = KeyText(name_node);
    if (IsMergeKey(name_node)) {
      problems.Add(MergeKeyProblem(Where(path, name_node)));
      return false;
    }
    if (const std::string bad = UnknownConfigKey(name); !bad.empty()) {
      problems.Add(Where(path, name_node) + ": parameter '" + name + "': " + bad);
      return false;
    }
    if (!IsParamName(name)) {
      problems.Add(Where(path, name_node) + ": parameter '" + name + "' is not one of " +
                   ListOf(kWholeParams) + ", system.<key>, network.<key>, memory.<key>");
      return false;
    }
    return true;
  };
  if (grid) {
    if (!grid.IsMap() || grid.size() == 0) {
      problems.Add(Where(path, grid) + ": 'grid' maps each parameter to a list of values");
    } else {
      std::vector<std::vector<std::string>> values;
      for (auto it = grid.begin(); it != grid.end(); ++it) {
        if (!check_name(it->first)) continue;
        if (!it->second.IsSequence() || it->second.size() == 0) {
          problems.Add(Where(path, it->second) + ": grid parameter '" + it->first.Scalar() +
                       "' needs a non-empty list of values");
          continue;
        }
        spec.param_names.push_back(it->first.Scalar());
        values.emplace_back();
        // A copy: `it->second` is a member of a proxy that dies with the full expression, and a
        // range-for over it read freed stack (ASan, under fuzz:sweep_spec).
        const YAML::Node list = it->second;
        for (const YAML::Node& v : list) {
          if (const std::string bad = BadValue(it->first.Scalar(), v); !bad.empty()) {
            problems.Add(Where(path, v) + ": grid value of " + bad);
          }
          // A key inside a file keeps its quotes, for that file's checks ("20" is not 20).
          values.back().push_back(IsFileKey(it->first.Scalar()) ? FlowYamlKeepingQuotes(v)
                                                                : FlowYaml(v));
        }
      }
      double count = 1;  // the product's size, checked before it is built
      for (const auto& v : values) count *= static_cast<double>(v.size());
      if (problems.ok() && count > kMaxSweepPoints) {
        problems.Add(Where(path, grid) + ": the grid has " + FormatNumber(count) +
                     " points; at most " + std::to_string(kMaxSweepPoints) +
                     " (split the study into several specs)");
      }
      if (problems.ok()) {
        // Cartesian product, first parameter varying slowest.
        std::vector<size_t> at(values.size(), 0);
        while (true) {
          SweepPoint p;
          p.index = static_cast<int>(spec.points.size());
          for (size_t i = 0; i < values.size(); ++i) {
            p.params.emplace_back(spec.param_names[i], values[i][at[i]]);
          }
          spec.points.push_back(std::move(p));
          size_t d = values.size();
          while (d > 0 && ++at[d - 1] == values[d - 1].size()) at[--d] = 0;
          if (d == 0) break;
        }
      }
    }
  }
  if (points) {
    if (!points.IsSequence() || points.size() == 0) {
      problems.Add(Where(path, points) + ": 'points' is a list of maps {parameter: value}");
    } else {
      for (const YAML::Node& pt : points) {
        if (!pt.IsMap()) {
          problems.Add(Where(path, pt) + ": each point is a map {parameter: value}");
          continue;
        }
        SweepPoint p;
        p.index = static_cast<int>(spec.points.size());
        for (auto it = pt.begin(); it != pt.end(); ++it) {
          if (!check_name(it->first)) continue;
          const std::string name = it->first.Scalar();
          if (std::find(spec.param_names.begin(), spec.param_names.end(), name) ==
              spec.param_names.end()) {
            spec.param_names.push_back(name);
          }
          if (const std::string bad = BadValue(name, it->second); !bad.empty()) {
            problems.Add(Where(path, it->second) + ": point value of " + bad);
          }
          p.params.emplace_back(
              name, IsFileKey(name) ? FlowYamlKeepingQuotes(it->second) : FlowYaml(it->second));
        }
        spec.points.push_back(std::move(p));
      }
    }
  }
  if (const YAML::Node out = root["output"]) spec.output = Join(spec.dir, out.Scalar());
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, path);
  return spec;
}

namespace {

// The first point's estimate, times the points, against the sweep's budget: `jobs` points run
// side by side (their memory adds up), the wall time is the points' over the jobs. Ok when the
// first point cannot be estimated (its row will say why).
Status CheckSweepBudget(const Prepared& first, size_t points, int jobs, const SweepOptions& o,
                        SweepSummary* summary) {
  if (!first.error.empty()) return Status::Ok();
  RunOptions run = first.run;
  run.estimate_only = true;
  StatusOr<RunResult> r = RunSimulation(run);
  if (!r.ok() || !r->estimate) return Status::Ok();
  const RunCost& point = *r->estimate;
  const uint64_t side_by_side = std::min<uint64_t>(points, static_cast<uint64_t>(jobs));
  RunCost all = point;
  all.memory_bytes = point.memory_bytes > UINT64_MAX / side_by_side
                         ? UINT64_MAX
                         : point.memory_bytes * side_by_side;
  all.wall_seconds = point.wall_seconds * static_cast<double>(points) / side_by_side;
  summary->estimate_seconds = all.wall_seconds;
  summary->estimate =
      "estimate: " + std::to_string(points) + " points, " + std::to_string(side_by_side) +
      " at once: about " + HumanBytes(all.memory_bytes) + " of memory and " +
      HumanSeconds(all.wall_seconds) + " of wall time; the first point:\n" + DescribeRunCost(point);
  Status within = CheckRunBudget(all, o.budget);
  if (within.ok()) return within;
  return Status::Error("this sweep of " + std::to_string(points) + " points (" +
                       std::to_string(side_by_side) + " at once, --jobs) would take about " +
                       HumanSeconds(all.wall_seconds) + " and " + HumanBytes(all.memory_bytes) +
                       ", from its first point's estimate (" + HumanSeconds(point.wall_seconds) +
                       ", " + HumanBytes(point.memory_bytes) + "): " + within.message());
}

}  // namespace

StatusOr<SweepSummary> RunSweep(const SweepSpec& spec, const SweepOptions& o) {
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards) {
    return Status::Error("shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards) +
                         " is impossible; expected I/N with 0 <= I < N");
  }
  std::string out = !o.out.empty() ? o.out : spec.output;
  if (out.empty()) {
    std::string stem =
        spec.path.substr(spec.path.rfind('/') == std::string::npos ? 0 : spec.path.rfind('/') + 1);
    stem = stem.substr(0, stem.find('.'));
    out = Join(spec.dir, stem + ".results");
  }
  if (o.shards > 1 && o.out.empty()) {
    out += ".shard-" + std::to_string(o.shard) + "-of-" + std::to_string(o.shards);
  }

  // The output's directory, made when missing (as mkdir -p), whatever the workload: generated
  // collectives and overridden configs made it on the way, a plain trace's points did not
  // and every row failed to be written.
  if (const std::string dir = DirOf(out); !dir.empty() && dir != ".") {
    if (Status made = MakeDirs(dir); !made.ok()) {
      return Status::Error("the sweep's output " + out + " (" +
                           (o.out.empty() ? "the spec's 'output'" : std::string("--out")) +
                           "): " + made.message());
    }
  }

  Table table;
  table.header = {"point", "status"};
  for (const std::string& p : spec.param_names) table.header.push_back(p);
  for (const std::string& m : kMetrics) table.header.push_back(m);
  StatusOr<JobColumns> job_columns = JobColumnsOf(spec);
  if (!job_columns.ok()) return job_columns.status();
  for (const std::string& c : job_columns->Header()) table.header.push_back(c);
  table.header.push_back("error");
  table.header.push_back("warnings");

  SweepSummary summary;
  summary.csv = out + ".csv";
  summary.json = out + ".json";
  std::vector<const SweepPoint*> todo;
  Table previous;
  summary.base = BaseFileOf(summary.csv);
  const std::string fingerprint = BaseFingerprint(spec);
  if (o.resume) {
    Status s = ReadTable(summary.csv, &previous, false);
    if (!s.ok()) return s;
    if (!previous.header.empty() && previous.header != table.header) {
      return Status::Error(summary.csv +
                           ": its columns differ from this spec's; it belongs to "
                           "another sweep (use another --out, or drop --resume)");
    }
    // Rows run on another base (an edited base, or a config file it names changed) are not
    // this spec's: every point runs again. Without PREFIX.base the rows are kept.
    if (!previous.rows.empty()) {
      const std::optional<std::string> before = FileText(summary.base);
      summary.base_unknown = !before;
      if (before && *before != fingerprint) {
        previous = Table();  // and the CSV is written afresh
        summary.base_changed = true;
      }
    }
  }
  for (const SweepPoint& p : spec.points) {
    // An earlier row is this point's only when its parameter columns are the point's, blanks
    // included: point i of an edited spec may set fewer parameters than the row's did.
    auto it = previous.rows.find(p.index);
    const std::vector<std::string> cells = ParamCells(spec, p);
    const bool same =
        it != previous.rows.end() && std::equal(cells.begin(), cells.end(), it->second.begin() + 2);
    if (p.index % o.shards != o.shard) {
      // Another shard's point: the file is rewritten whole, so its row (still this spec's) stays
      // as it was, for that shard's own --resume or for `sweep merge` to take.
      if (same) {
        table.rows[p.index] = it->second;
        ++summary.other_shards;
      }
      continue;
    }
    ++summary.points;
    if (same && it->second[1] == "ok") {  // finished cleanly: keep it
      table.rows[p.index] = it->second;
      ++summary.skipped;
      continue;
    }
    todo.push_back(&p);
  }

  // Prepare every point's files first, one at a time (generated workloads are shared).
  std::vector<Prepared> prepared(todo.size());
  std::map<std::string, std::string> generated;  // collective/size/npus -> prefix
  auto prepare = [&](size_t i) {
    const SweepPoint& p = *todo[i];
    Prepared& pr = prepared[i];
    try {
      std::map<std::string, std::string> files = spec.base;
      std::map<std::string, std::vector<std::pair<std::string, std::string>>> overrides;
      std::string collective = spec.generate_collective;
      uint64_t size = spec.generate_size;
      // A generated collective: given in base or by the point, or else the default when neither
      // names a workload (or jobs).
      bool generated_explicitly = !spec.generate_collective.empty();
      bool generate = spec.base.count("workload") == 0;
      for (const auto& [name, value] : p.params) {
        const size_t dot = name.find('.');
        if (name == "workload.collective") {
          collective = YAML::Load(value).Scalar();
          generate = generated_explicitly = true;
        } else if (name == "workload.size") {
          // Checked when the spec was loaded.
          if (const std::string bad = SizeProblem(YAML::Load(value), &size); !bad.empty()) {
            throw std::runtime_error("workload.size is " + bad);
          }
          generate = generated_explicitly = true;
        } else if (dot == std::string::npos) {
          files[name] = YAML::Load(value).Scalar();
          if (name == "workload") generate = false;
        } else {
          overrides[name.substr(0, dot)].emplace_back(name.substr(dot + 1), value);
        }
      }
      const std::string dir = out + ".points/" + std::to_string(p.index);
      for (const char* kind : {"system", "network", "memory"}) {
        auto f = files.find(kind);
        const auto ov = overrides.find(kind);
        const bool has_file = f != files.end();
        if (!has_file && ov != overrides.end()) {
          throw std::runtime_error(std::string("'") + kind + ".*' is varied but no " + kind +
                                   " file is given in base");
        }
        if (!has_file) continue;
        const std::string file = Join(spec.dir, f->second);
        if (ov == overrides.end()) {
          files[kind] = file;
          continue;
        }
        if (access(file.c_str(), F_OK) != 0) {
          throw std::runtime_error(file + ": no such file (the spec's " + kind + ": " + f->second +
                                   ")");
        }
        if (const std::string why = NotARegularFile(file); !why.empty()) {
          throw YAML::Exception(YAML::Mark::null_mark(), why);
        }
        // One document (a second one would be dropped from the point's copy without a word).
        StatusOr<YAML::Node> read = ReadYamlDocument(file);
        if (!read.ok()) throw std::runtime_error(read.status().message());
        YAML::Node doc = *read;
        for (const auto& [key, value] : ov->second) doc[key] = YAML::Load(value);
        // A relative path in these keys is relative to the file naming it (or, set by the
        // point, to the spec); the copy lives elsewhere, so it gets the path made absolute.
        const std::string path_key = std::string(kind) == "system"    ? "nccl-model"
                                     : std::string(kind) == "network" ? "custom-file"
                                                                      : "";
        const YAML::Node named = path_key.empty() ? YAML::Node() : doc[path_key];
        if (named.IsScalar() && !named.Scalar().empty() && named.Scalar()[0] != '/') {
          const bool from_point = std::any_of(ov->second.begin(), ov->second.end(),
                                              [&](const auto& kv) { return kv.first == path_key; });
          doc[path_key] = AbsolutePath(Join(from_point ? spec.dir : DirOf(file), named.Scalar()));
        }
        Status s = MakeDirs(dir);
        if (!s.ok()) throw std::runtime_error(s.message());
        const std::string path = dir + "/" + kind + ".yml";
        std::ofstream(path) << FlowYamlKeepingQuotes(doc) << "\n";
        files[kind] = path;
      }
      if (!files.count("system") || !files.count("network")) {
        throw std::runtime_error("base needs a system and a network config");
      }
      pr.run.system_config = files["system"];
      pr.run.network_config = files["network"];
      if (files.count("memory")) pr.run.memory_config = files["memory"];
      StatusOr<Backend> b =
          ParseBackend(files.count("backend") ? files["backend"] : "analytical-aware");
      if (!b.ok()) throw std::runtime_error("backend: " + b.status().message());
      pr.run.backend = *b;
      // NCCL's choice per collective: a model in place of the system's 'nccl-model', and
      // NCCL_ALGO ("auto" = the tuner's choice, as NCCL without NCCL_ALGO).
      if (files.count("nccl-model")) pr.run.nccl_model = Join(spec.dir, files["nccl-model"]);
      if (files.count("nccl-algorithm") && files["nccl-algorithm"] != "auto") {
        pr.run.nccl_algorithm = files["nccl-algorithm"];
      }
      // Several traces sharing the machine (--jobs), each job's own workload named in the file.
      if (files.count("jobs")) {
        if (generated_explicitly) {
          throw std::runtime_error("jobs " + files["jobs"] +
                                   " and a generated workload were both given; expected "
                                   "one: the jobs file names each job's workload");
        }
        if (files.count("workload")) {
          throw std::runtime_error("jobs " + files["jobs"] + " and workload " + files["workload"] +
                                   " were both given; expected one: the jobs file names each "
                                   "job's workload");
        }
        generate = false;
        pr.run.jobs = Join(spec.dir, files["jobs"]);
      }
      pr.jobs_alone = files.count("jobs-alone") && files["jobs-alone"] == "true";
      if (pr.jobs_alone && pr.run.jobs.empty()) {
        throw std::runtime_error(
            "jobs-alone is true, but no jobs file is given (base or point 'jobs')");
      }
      // A trace of fewer ranks than the point's NPUs, run as copies (--replicate-trace).
      if (files.count("comm-groups")) {
        pr.run.comm_group_config = Join(spec.dir, files["comm-groups"]);
      }
      pr.run.replicate_trace = files.count("replicate-trace") && files["replicate-trace"] == "true";
      if (pr.run.replicate_trace && generate) {
        throw std::runtime_error(
            "replicate-trace is true, but the workload is a generated collective, written for "
            "every NPU: copies apply to a trace of fewer ranks (base or point 'workload: PREFIX')");
      }
      if (files.count("dp-groups")) pr.run.dp_groups = files["dp-groups"];
      if (generate) {
        static const std::map<std::string, ChakraProtoMsg::CollectiveCommType> kTypes = {
            {"all_reduce", ChakraProtoMsg::ALL_REDUCE},
            {"all_gather", ChakraProtoMsg::ALL_GATHER},
            {"reduce_scatter", ChakraProtoMsg::REDUCE_SCATTER},
            {"all_to_all", ChakraProtoMsg::ALL_TO_ALL}};
        auto t = kTypes.find(collective);
        if (t == kTypes.end()) {
          throw std::runtime_error("workload collective '" + collective +
                                   "'; expected all_reduce, all_gather, reduce_scatter or "
                                   "all_to_all");
        }
        // A size given was checked when the spec was loaded (SizeProblem).
        if (size == 0) {
          throw std::runtime_error(
              "no workload size: give base 'workload: {collective: ..., size: BYTES}' or a "
              "'workload.size' parameter");
        }
        // The NPU count from the network as Orrery reads it (any format, whole machines too).
        StatusOr<Topology> topo = LoadNetworkConfig(pr.run.network_config);
        if (!topo.ok()) throw std::runtime_error(topo.status().message());
        const uint64_t npus = static_cast<uint64_t>(topo->num_npus());
        const std::string key =
            collective + "_" + std::to_string(size) + "_" + std::to_string(npus);
        auto g = generated.find(key);
        if (g == generated.end()) {
          const std::string wdir = out + ".work/" + key;
          Status s = MakeDirs(wdir);
          if (!s.ok()) throw std::runtime_error(s.message());
          const std::string prefix = wdir + "/" + collective;
          for (uint64_t r = 0; r < npus; ++r) {
            s = et::WriteTraceFile(et::RankTracePath(prefix, static_cast<int>(r)),
                                   {et::MakeCollNode(0, collective, t->second, size)});
            if (!s.ok()) throw std::runtime_error(s.message());
          }
          g = generated.emplace(key, prefix).first;
        }
        pr.run.workload = g->second;
      } else if (pr.run.jobs.empty()) {
        if (!files.count("workload")) throw std::runtime_error("no workload in base or point");
        pr.run.workload = Join(spec.dir, files["workload"]);
      }
      pr.run.record = true;  // for the collectives' statistics and the critical path
      pr.run.record_chunk_phases = false;
      pr.run.record_queue_lengths = false;
    } catch (const std::exception& e) {
      pr.error = e.what();
    }
  };
  const int jobs = o.jobs > 0 ? o.jobs : omp_get_num_procs();
  // The sweep's cost before any point runs: the first point's estimate times the points
  // (runner/estimate.h); every point's run checks its own share of the budget too.
  if (!todo.empty()) {
    prepare(0);
    Status within = CheckSweepBudget(prepared[0], todo.size(), jobs, o, &summary);
    if (o.dry_run) {
      if (!within.ok()) summary.estimate += "past the budget: " + within.message() + "\n";
      return summary;
    }
    if (!within.ok()) return within;
  }
  for (size_t i = 1; i < todo.size(); ++i) prepare(i);
  for (Prepared& pr : prepared) {
    pr.run.budget = o.budget;
    // Points run side by side share the memory.
    const uint64_t memory = o.budget.max_memory > 0 ? o.budget.max_memory : DefaultMemoryBudget();
    pr.run.budget.max_memory = std::max<uint64_t>(memory / static_cast<uint64_t>(jobs), 1);
  }

  // What these rows run on, for a later --resume to compare.
  if (Status s = WriteBaseFile(summary.base, fingerprint); !s.ok()) return s;
  std::FILE* stream = nullptr;
  if (!todo.empty()) {
    // Rows go to the CSV as points finish (so an interruption keeps them); the file is
    // rewritten in point order at the end.
    const bool fresh = previous.header.empty();
    stream = std::fopen(summary.csv.c_str(), fresh ? "w" : "a");
    if (stream == nullptr) {
      return Status::Error(summary.csv + ": cannot write: " + std::strerror(errno));
    }
    if (fresh) {
      std::string h;
      for (size_t i = 0; i < table.header.size(); ++i) h += (i ? "," : "") + Csv(table.header[i]);
      h += "\n";
      std::fwrite(h.data(), 1, h.size(), stream);
      std::fflush(stream);
    }
  }
  int done = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(jobs)
  for (size_t i = 0; i < todo.size(); ++i) {
    if (o.interrupted != nullptr && *o.interrupted) continue;
    const SweepPoint& p = *todo[i];
    std::vector<std::string> row = {std::to_string(p.index), "ok"};
    const std::vector<std::string> params = ParamCells(spec, p);
    row.insert(row.end(), params.begin(), params.end());
    std::string error = prepared[i].error;
    StatusOr<RunResult> r = Status::Error(error);
    // No exception may leave the loop's body (it would end the program): a point that runs out
    // of memory is an error row, and the others still run.
    try {
      if (error.empty()) r = RunSimulation(prepared[i].run);
      if (r.ok() && prepared[i].jobs_alone) {
        Status alone = AddJobsAlone(prepared[i].run, &*r);
        if (!alone.ok()) r = alone;
      }
    } catch (const std::bad_alloc&) {
      r = Status::Error(kOutOfMemory);
    }
    if (r.ok()) {
      // With jobs files, the means are over the NPUs that run a job, as a single run's summary.
      const std::vector<NpuBreakdown> working = WorkingNpuBreakdowns(*r);
      const NpuBreakdown mean = MeanBreakdown(working);
      double overlap = 0;
      for (const NpuBreakdown& b : working) overlap += b.overlap_percent();
      const int n = std::max(1, static_cast<int>(working.size()));
      double alg = 0, bus = 0;
      const std::vector<CollectiveStat> colls = CollectiveStats(*r);
      for (const CollectiveStat& c : colls) {
        alg += c.alg_bw_gbps;
        bus += c.bus_bw_gbps;
      }
      char buf[64];
      auto num = [&buf](double v) {
        std::snprintf(buf, sizeof buf, "%.6g", v);
        return std::string(buf);
      };
      row.push_back(std::to_string(r->end.WholeNs()));
      row.push_back(std::to_string(mean.compute.WholeNs()));
      row.push_back(std::to_string(mean.communication.WholeNs()));
      row.push_back(std::to_string(mean.exposed.WholeNs()));
      row.push_back(num(overlap / n));
      row.push_back(colls.empty() ? "" : num(alg / colls.size()));
      row.push_back(colls.empty() ? "" : num(bus / colls.size()));
      const CriticalPathTotals path = CriticalPathTotalsOf(*r);
      row.push_back(std::to_string(path.compute.WholeNs()));
      row.push_back(std::to_string(path.communication.WholeNs()));
      row.push_back(std::to_string(r->events));
      for (const std::string& name : job_columns->names) {
        auto job = std::find_if(r->jobs.begin(), r->jobs.end(),
                                [&](const JobResult& j) { return j.name == name; });
        const bool ran = job != r->jobs.end();
        row.push_back(ran ? std::to_string(job->finish.WholeNs()) : "");
        if (!job_columns->alone) continue;
        const bool alone = ran && job->alone.has_value();
        row.push_back(alone ? std::to_string(job->alone->WholeNs()) : "");
        row.push_back(alone ? num(job->SharingPercent()) : "");
      }
      row.push_back("");
      std::string warnings;  // what a single run prints as warnings, one after the other
      for (const std::string& w : r->warnings) warnings += (warnings.empty() ? "" : " | ") + w;
      std::replace(warnings.begin(), warnings.end(), '\n', ' ');
      row.push_back(warnings);
    } else {
      row[1] = "error";
      const size_t blank = kMetrics.size() + job_columns->Header().size();
      for (size_t k = 0; k < blank; ++k) row.push_back("");
      std::string msg = r.status().message();
      std::replace(msg.begin(), msg.end(), '\n', ' ');
      row.push_back(msg);
      row.push_back("");
    }
    std::string line;
    for (size_t k = 0; k < row.size(); ++k) line += (k ? "," : "") + Csv(row[k]);
    line += "\n";
#pragma omp critical(sweep_output)
    {
      table.rows[p.index] = row;
      std::fwrite(line.data(), 1, line.size(), stream);
      std::fflush(stream);
      ++done;
      ++summary.ran;
      if (row[1] != "ok") ++summary.failed;
      if (o.progress) {
        std::fprintf(stderr, "\r  sweep: %d of %zu points done, %d failed ", done, todo.size(),
                     summary.failed);
        std::fflush(stderr);
      }
    }
  }
  if (stream != nullptr) std::fclose(stream);
  if (o.progress && !todo.empty()) std::fprintf(stderr, "\n");
  summary.interrupted = o.interrupted != nullptr && *o.interrupted;
  Status s = WriteOutputs(table, out);
  if (!s.ok()) return s;
  return summary;
}

Status MergeSweepOutputs(const std::vector<std::string>& csv_files, const std::string& out) {
  if (csv_files.empty()) return Status::Error("sweep merge: no shard files given");
  Table merged;
  for (const std::string& f : csv_files) {
    Table t;
    Status s = ReadTable(f, &t, true);
    if (!s.ok()) return s;
    if (t.header.empty()) return Status::Error(f + ": empty, not a sweep output");
    if (merged.header.empty()) {
      merged.header = t.header;
    } else if (t.header != merged.header) {
      return Status::Error(f + ": its columns differ from " + csv_files[0] +
                           "'s; the shards come from different sweeps");
    }
    for (auto& [idx, row] : t.rows) {
      auto it = merged.rows.find(idx);
      if (it != merged.rows.end() && it->second != row) {
        return Status::Error(f + ": point " + std::to_string(idx) +
                             " is also in an earlier file with a different result");
      }
      merged.rows[idx] = row;
    }
  }
  // The shards' bases (PREFIX.base beside each CSV): the same, or the shards ran on different
  // files; the merged output gets it, for a later --resume to compare.
  std::string base;
  bool every_base = true;
  for (const std::string& f : csv_files) {
    const std::optional<std::string> text = FileText(BaseFileOf(f));
    every_base = every_base && text.has_value();
    if (!text) continue;
    if (!base.empty() && *text != base) {
      return Status::Error(BaseFileOf(f) + " differs from " + csv_files[0] +
                           "'s: the shards ran on different base files (an edit between "
                           "them); run the shards of one base again");
    }
    base = *text;
  }
  Status written = WriteOutputs(merged, out);
  if (!written.ok() || !every_base || base.empty()) return written;
  return WriteBaseFile(out + ".base", base);
}

}  // namespace orrery
