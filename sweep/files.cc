#include "sweep/files.h"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "config/schema.h"

namespace orrery::sweep_internal {

std::string Join(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || dir.empty()) return path;
  return dir + "/" + path;
}

std::string DirOf(const std::string& file) {
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "" : file.substr(0, slash);
}

std::optional<std::string> FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string BaseFileOf(const std::string& csv) {
  const bool suffix = csv.size() > 4 && csv.compare(csv.size() - 4, 4, ".csv") == 0;
  return (suffix ? csv.substr(0, csv.size() - 4) : csv) + ".base";
}

Status WriteBaseFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  return Status::Ok();
}

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

std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
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

}  // namespace orrery::sweep_internal
