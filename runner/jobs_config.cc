#include "runner/jobs_config.h"

#include <functional>
#include <set>
#include <string>

#include "config/schema.h"
#include "network/network_config.h"
#include "runner/npu_scale.h"

namespace orrery {
namespace {

constexpr const char* kNpuSyntax =
    "NPU ids and ranges first-last, e.g. 0-7,16-23 or [0, 1, 2, 3] (rank r runs on the r-th)";

// One entry of the 'jobs' list as written (paths not yet resolved, 'npus' not yet expanded).
struct JobEntry {
  std::string name;
  std::string workload;
  std::string npus;
  std::string comm_groups;
};

// A check refusing an empty value: "" when `s` is set, otherwise `expected`.
std::function<std::string(const std::string&)> NotEmpty(std::string expected) {
  return [expected](const std::string& s) { return s.empty() ? expected : std::string(); };
}

constexpr const char* kNotInAstraSim = "no jobs file there: a run is one workload";

// The keys of one job, declared once: the loader checks them and docs/workloads.md lists them.
Schema<JobEntry> MakeJobSchema() {
  using J = JobEntry;
  Schema<J> s;
  s.String("name", &J::name)
      .AstraSim(kNotInAstraSim)
      .Default("job0, job1, ...")
      .Check(NotEmpty("a name"))
      .Help(
          "the job's name in the summary, the report's 'jobs' section and messages; each "
          "job's own");
  s.String("workload", &J::workload)
      .AstraSim(kNotInAstraSim)
      .Default("required")
      .Check(NotEmpty("a trace prefix (<prefix>.<rank>.et)"))
      .Help(
          "trace prefix: the rank files <prefix>.0.et, <prefix>.1.et, ... up to the first "
          "missing one; relative to the jobs file unless absolute");
  s.String("npus", &J::npus)
      .AstraSim(kNotInAstraSim)
      .ListAsText()
      .Default("the lowest NPUs no job lists")
      .AllowedText(
          "NPU ids and ranges first-last (0-7,16-23) or a list; each NPU once, below "
          "the network's NPU count")
      .Help(
          "the NPUs the job runs on, one per rank file: rank r on the r-th listed; NPUs of no "
          "job are idle");
  s.String("comm-groups", &J::comm_groups)
      .AstraSim(kNotInAstraSim)
      .Check(NotEmpty("a comm-group JSON file"))
      .Help(
          "the job's communicator-group JSON, in its own ranks; relative to the jobs file "
          "unless absolute");
  return s;
}

const Schema<JobEntry>& JobSchema() {
  static const Schema<JobEntry> schema = MakeJobSchema();
  return schema;
}

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

std::vector<KeyDoc> JobKeys() { return JobSchema().Docs(); }

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

namespace {

// The top level of a jobs file: its one key, 'jobs' (once), and no other.
Status CheckTopLevel(const ConfigFile& file) {
  Status problems;
  bool seen = false;
  const YAML::Node& root = file.root();
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (IsMergeKey(it->first)) {
      problems.Add(MergeKeyProblem(file.Where(it->first)));
    } else if (key == "jobs" && seen) {
      problems.Add(file.Where(it->first) + ": key 'jobs' appears more than once");
    } else if (key == "jobs") {
      seen = true;
    } else {
      const std::string close = DidYouMean(key, {"jobs"});
      problems.Add(file.Where(it->first) + ": unknown key '" + key + "'" +
                   (close.empty() ? "" : " (did you mean '" + close + "'?)") +
                   "; a jobs file has one key, 'jobs': a list of jobs");
    }
  }
  return problems;
}

// Job `j` of the list (a map, checked against the job schema) into *spec; its problems added.
void ReadJob(const ConfigFile& file, const YAML::Node& node, size_t j, int num_npus, JobSpec* spec,
             Status* problems) {
  StatusOr<ConfigFile> job = ConfigFile::FromNode(node, file.path());
  // Every message on the job names it, as the messages across jobs do: by the name it gives, or
  // else the one it gets (job<j>).
  const YAML::Node given = job->Get("name");
  job->SetContext("job '" +
                  (given.IsDefined() && given.IsScalar() && !given.Scalar().empty() ? given.Scalar()
                                                                                    : spec->name) +
                  "'");
  JobEntry entry;
  std::set<std::string> valid;
  problems->Merge(JobSchema().Apply(*job, &entry, &valid));
  if (valid.count("name")) spec->name = entry.name;
  if (valid.count("workload")) spec->workload = Resolve(file.path(), entry.workload);
  if (valid.count("comm-groups")) spec->comm_groups = Resolve(file.path(), entry.comm_groups);
  if (valid.count("npus")) {
    const std::string what = job->WhereKey("npus") + ": 'npus'";
    const YAML::Node listed = job->Get("npus");
    if (listed.IsSequence() && listed.size() == 0) {
      problems->Add(what + " is an empty list; expected " + kNpuSyntax +
                    ", or no 'npus' for the lowest NPUs no job lists");
    } else {
      StatusOr<std::vector<int>> npus = ParseJobNpus(entry.npus, what, num_npus);
      if (npus.ok()) {
        spec->npus = std::move(*npus);
      } else {
        problems->Merge(npus.status());
      }
    }
  }
  if (!job->Has("workload")) {
    problems->Add(spec->where + ": job " + std::to_string(j) + " ('" + spec->name +
                  "') has no 'workload'; expected a trace prefix (<prefix>.<rank>.et), "
                  "relative to " +
                  file.path());
  }
}

}  // namespace

StatusOr<std::vector<JobSpec>> LoadJobsFile(const std::string& path, int num_npus) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  Status problems = CheckTopLevel(*file);
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
    if (!job.IsMap()) {
      problems.Add(spec.where + ": job " + std::to_string(j) + " is '" + Shown(job) +
                   "'; expected a map with a 'workload' and optionally 'name', 'npus' and "
                   "'comm-groups'");
      continue;
    }
    ReadJob(*file, job, j, num_npus, &spec, &problems);
    if (!names.insert(spec.name).second) {
      problems.Add(spec.where + ": job " + std::to_string(j) + ": name '" + spec.name +
                   "' is used by an earlier job; expected each job's own name");
    }
    jobs.push_back(std::move(spec));
  }
  if (!problems.ok()) return problems;
  return jobs;
}

}  // namespace orrery
