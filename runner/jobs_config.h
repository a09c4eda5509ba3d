// The jobs file of `--jobs`: several traces sharing one machine, each on its own NPUs.
//
//   # jobs.yaml
//   jobs:
//     - name: llm                  # optional; default job0, job1, ...
//       workload: traces/llm       # trace prefix (<prefix>.<rank>.et), relative to this file
//       npus: 0-7,16-23            # optional: rank r on the r-th NPU listed; default: the
//                                  # lowest NPUs no job lists, one per rank file
//       comm-groups: llm.json      # optional: its communicator groups, in its own ranks
//     - workload: traces/dlrm
//
//   StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile("jobs.yaml");
//
// Every problem (unknown key, missing workload, a bad NPU list, a name used twice) comes back
// at once, each naming the file, line and key. NPU ids are checked against `num_npus` (the
// network's NPU count when the caller knows it; else kMaxNpus, the most any network has) before
// a range is expanded, so 'npus: 0-999999999' is one message, not gigabytes of ids.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"

namespace orrery {

struct JobSpec {
  std::string name;
  std::string workload;                  // trace prefix, resolved against the file's directory
  std::optional<std::vector<int>> npus;  // as listed; nullopt: the lowest NPUs no job lists
  std::string comm_groups;               // comm-group JSON, resolved; "" = none
  std::string where;                     // "jobs.yaml:3", for messages
};

StatusOr<std::vector<JobSpec>> LoadJobsFile(const std::string& path);
StatusOr<std::vector<JobSpec>> LoadJobsFile(const std::string& path, int num_npus);
// The keys of one job, as declared (docs/workloads.md lists them: KeyTableMarkdown).
std::vector<KeyDoc> JobKeys();

// A job's 'npus' (npu_scale.h's ParseNpuRanges, expanded: rank r runs on the r-th), each NPU
// once and below `num_npus` (kMaxNpus when not given). Errors name `what` and the bad item.
StatusOr<std::vector<int>> ParseJobNpus(const std::string& text, const std::string& what);
StatusOr<std::vector<int>> ParseJobNpus(const std::string& text, const std::string& what,
                                        int num_npus);

}  // namespace orrery
