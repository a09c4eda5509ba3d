#include "runner/jobs_config.h"

#include <set>
#include <string>

#include "config/schema.h"
#include "network/network_config.h"
#include "runner/npu_scale.h"

namespace orrery {
namespace {

const std::vector<std::string> kJobKeys = {"name", "workload", "npus", "comm-groups"};
constexpr const char* kNpuSyntax =
    "NPU ids and ranges first-last, e.g. 0-7,16-23 or [0, 1, 2, 3] (rank r runs on the r-th)";

// A path written in the jobs file, relative to the file's directory unless absolute.
std::string Resolve(const std::string& file, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? path : file.substr(0, slash + 1) + path;
}

std::string Shown(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsSequence()) return node.size() == 0 ? "an empty list" : "a list";
  if (node.IsMap()) return "a map";
  return "";
}

}  // namespace

StatusOr<std::vector<int>> ParseJobNpus(const std::string& text, const std::string& what) {
  return ParseJobNpus(text, what, kMaxNpus);
}

StatusOr<std::vector<int>> ParseJobNpus(const std::string& text, const std::string& what,
                                        int num_npus) {
  const std::string bound = num_npus == kMaxNpus
                                ? "a network has at most " + std::to_string(kMaxNpus) + " NPUs"
                                : "the network's NPUs";
  StatusOr<std::vector<NpuRange>> ranges = ParseNpuRanges(text, what, kNpuSyntax, num_npus, bound);
  if (!ranges.ok()) return ranges.status();
  // Each NPU once, so the list never grows past num_npus ids whatever the ranges repeat.
  std::vector<bool> seen(static_cast<size_t>(num_npus), false);
  std::vector<int> npus;
  for (const NpuRange& r : *ranges) {
    for (int npu = r.first; npu <= r.last; ++npu) {
      if (seen[static_cast<size_t>(npu)]) {
        return Status::Error(what + " lists NPU " + std::to_string(npu) +
                             " twice; expected each NPU once (one rank per NPU)");
      }
      seen[static_cast<size_t>(npu)] = true;
      npus.push_back(npu);
    }
  }
  return npus;
}

StatusOr<std::vector<JobSpec>> LoadJobsFile(const std::string& path) {
  return LoadJobsFile(path, kMaxNpus);
}

StatusOr<std::vector<JobSpec>> LoadJobsFile(const std::string& path, int num_npus) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  Status problems = DuplicateKeys(file->root(), path);
  const YAML::Node& root = file->root();
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (key == "jobs") continue;
    if (IsMergeKey(it->first)) {
      problems.Add(MergeKeyProblem(file->Where(it->first)));
      continue;
    }
    const std::string close = DidYouMean(key, {"jobs"});
    problems.Add(file->Where(it->first) + ": unknown key '" + key + "'" +
                 (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                 "; a jobs file has one key, 'jobs': a list of jobs");
  }
  const YAML::Node list = file->Get("jobs");
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
    problems.Add(file->WhereKey("jobs") + ": 'jobs' is " +
                 (list.IsDefined() ? "'" + Shown(list) + "'" : std::string("missing")) +
                 "; expected a list of jobs, each with a 'workload' (a trace prefix) and "
                 "optionally 'name', 'npus' and 'comm-groups'");
    return problems;
  }
  std::vector<JobSpec> jobs;
  std::set<std::string> names;
  for (size_t j = 0; j < list.size(); ++j) {
    const YAML::Node job = list[j];
    JobSpec spec;
    spec.where = file->Where(job);
    spec.name = "job" + std::to_string(j);
    const std::string which = spec.where + ": job " + std::to_string(j);
    if (!job.IsMap()) {
      problems.Add(which + " is '" + Shown(job) +
                   "'; expected a map with a 'workload' and optionally 'name', 'npus' and "
                   "'comm-groups'");
      continue;
    }
    if (job["name"] && job["name"].IsScalar() && !job["name"].Scalar().empty()) {
      spec.name = job["name"].Scalar();
    }
    for (auto it = job.begin(); it != job.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      // A copy (a handle): `it->second` belongs to a proxy that dies at the semicolon; a
      // reference to it read freed stack (ASan, under fuzz:jobs).
      const YAML::Node value = it->second;
      const std::string at = file->Where(it->first);
      bool known = false;
      for (const std::string& k : kJobKeys) known = known || k == key;
      if (IsMergeKey(it->first)) {
        problems.Add(MergeKeyProblem(at + ": job " + std::to_string(j)));
        continue;
      }
      if (!known) {
        const std::string close = DidYouMean(key, kJobKeys);
        problems.Add(at + ": job " + std::to_string(j) + ": unknown key '" + key + "'" +
                     (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                     "; expected name, workload, npus or comm-groups");
        continue;
      }
      if (key == "npus") {
        if (value.IsSequence() && value.size() == 0) {
          problems.Add(at + ": job '" + spec.name + "': 'npus' is an empty list; expected " +
                       kNpuSyntax + ", or no 'npus' for the lowest NPUs no job lists");
          continue;
        }
        std::string text;
        if (value.IsScalar()) {
          text = value.Scalar();
        } else if (value.IsSequence() && value.size() > 0) {
          for (size_t i = 0; i < value.size(); ++i) {
            text += (i ? "," : "") + (value[i].IsScalar() ? value[i].Scalar() : "?");
          }
        }
        StatusOr<std::vector<int>> npus =
            ParseJobNpus(text, at + ": job '" + spec.name + "': 'npus'", num_npus);
        if (!npus.ok()) {
          problems.Merge(npus.status());
        } else {
          spec.npus = std::move(*npus);
        }
        continue;
      }
      if (!value.IsScalar() || value.Scalar().empty()) {
        problems.Merge(Status::Invalid(at, "job " + std::to_string(j) + ": '" + key + "'",
                                       Shown(value),
                                       key == "name"       ? "a name"
                                       : key == "workload" ? "a trace prefix (<prefix>.<rank>.et)"
                                                           : "a comm-group JSON file"));
        continue;
      }
      if (key == "name") spec.name = value.Scalar();
      if (key == "workload") spec.workload = Resolve(path, value.Scalar());
      if (key == "comm-groups") spec.comm_groups = Resolve(path, value.Scalar());
    }
    if (!job["workload"]) {
      problems.Add(which + " ('" + spec.name +
                   "') has no 'workload'; expected a trace prefix (<prefix>.<rank>.et), "
                   "relative to " +
                   path);
    }
    if (!names.insert(spec.name).second) {
      problems.Add(which + ": name '" + spec.name +
                   "' is used by an earlier job; expected each job's own name");
    }
    jobs.push_back(std::move(spec));
  }
  if (!problems.ok()) return problems;
  return jobs;
}

}  // namespace orrery
