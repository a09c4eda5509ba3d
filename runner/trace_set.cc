#include "runner/trace_set.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <new>
#include <optional>

#include "et_feeder/manifest.h"
#include "runner/jobs_config.h"

namespace orrery {

namespace {

// When a trace prefix is itself a file (a text workload, or one rank's file given whole), what
// to give instead; "" otherwise.
std::string PrefixIsAFile(const std::string& prefix) {
  std::error_code ec;
  if (prefix.empty() || !std::filesystem::is_regular_file(prefix, ec)) return "";
  std::string hint;
  if (prefix.size() > 3 && prefix.compare(prefix.size() - 3, 3, ".et") == 0) {
    const size_t dot = prefix.find_last_of('.', prefix.size() - 4);
    hint = "NPU r reads <prefix>.<r>.et";
    if (dot != std::string::npos) hint += ", so give " + prefix.substr(0, dot);
  } else {
    hint =
        "if it is an ASTRA-sim 1.0 text workload, convert it first: orrery convert-text "
        "--input " +
        prefix +
        " --output PREFIX --num-npus 1, then run --workload-configuration=PREFIX "
        "--replicate-trace";
  }
  return prefix + " is a file, not a trace prefix: " + hint;
}

// The rank files <prefix>.0.et, <prefix>.1.et, ... up to the first missing one: how many (at
// most `limit`), or an error starting with `context` when there is none, or when a file up to
// `limit` exists past the first missing one (the ranks after a gap would silently be dropped).
StatusOr<int> CountRankFiles(const std::string& prefix, int limit, const std::string& context) {
  int count = 0;
  while (count < limit && access(et::RankTracePath(prefix, count).c_str(), F_OK) == 0) ++count;
  if (count == 0) {
    Status s = Status::Error(context + ": there is no " + et::RankTracePath(prefix, 0) +
                             "; the ranks are read from " + et::RankTracePath(prefix, 0) + ", " +
                             et::RankTracePath(prefix, 1) + ", ... up to the first missing one");
    const std::string hint = PrefixIsAFile(prefix);
    if (!hint.empty()) s.Add(hint);
    return s;
  }
  for (int r = count + 1; r <= limit; ++r) {
    if (access(et::RankTracePath(prefix, r).c_str(), F_OK) == 0) {
      return Status::Error(context + ": " + et::RankTracePath(prefix, count) + " is missing, but " +
                           et::RankTracePath(prefix, r) + " exists; the ranks are read from " +
                           et::RankTracePath(prefix, 0) +
                           " up to the first missing file, so the rank files must have no gap");
    }
  }
  return count;
}

// With --jobs: each job's rank files on its NPUs (listed, or the lowest no job lists); the
// jobs' comm-group files in `comm_groups` (job index -> path).
StatusOr<std::unique_ptr<Placement>> PlanJobs(const RunOptions& o, int n,
                                              std::vector<std::string>* prefixes,
                                              std::vector<std::string>* comm_groups) {
  StatusOr<std::vector<JobSpec>> specs = LoadJobsFile(o.jobs, n);
  if (!specs.ok()) return specs.status();
  Status problems;
  std::vector<int> owner(n, -1);  // NPU -> job listing it
  std::vector<JobPlacement> jobs(specs->size());
  std::vector<int> ranks(specs->size());
  const std::string machine = "the network (" + o.network_config + ") has " + std::to_string(n) +
                              " NPUs, ids 0 to " + std::to_string(n - 1);
  for (size_t j = 0; j < specs->size(); ++j) {
    const JobSpec& spec = (*specs)[j];
    const std::string job = spec.where + ": job '" + spec.name + "'";
    jobs[j].name = spec.name;
    if (access(et::ManifestPath(spec.workload).c_str(), F_OK) == 0) {
      problems.Add(job + ": its workload " + spec.workload + " has a trace manifest (" +
                   et::ManifestPath(spec.workload) +
                   "), which a job cannot run yet; write its files one per NPU (generate-llm "
                   "--all-ranks)");
      continue;
    }
    StatusOr<int> count = CountRankFiles(spec.workload, n + 1, job);
    if (!count.ok()) {
      problems.Merge(count.status());
      continue;
    }
    ranks[j] = *count;
    if (!spec.npus) continue;
    const std::string files =
        std::to_string(ranks[j]) + " rank file" + (ranks[j] == 1 ? "" : "s") + " (" +
        et::RankTracePath(spec.workload, 0) +
        (ranks[j] == 1 ? "" : " .. " + et::RankTracePath(spec.workload, ranks[j] - 1)) + ")";
    if (static_cast<int>(spec.npus->size()) != ranks[j]) {
      problems.Add(job + ": 'npus' lists " + std::to_string(spec.npus->size()) + " NPUs (" +
                   FormatNpuRanges(*spec.npus) + ") but the job has " + files +
                   "; expected one NPU per rank");
      continue;
    }
    for (int npu : *spec.npus) {
      if (npu >= n) {
        problems.Add(job + ": 'npus' lists NPU " + std::to_string(npu) + ", but " + machine);
        break;
      }
      if (owner[npu] >= 0) {
        problems.Add(job + ": 'npus' lists NPU " + std::to_string(npu) + ", which job '" +
                     (*specs)[owner[npu]].name + "' runs on; expected NPUs of no other job");
        break;
      }
      owner[npu] = static_cast<int>(j);
    }
    jobs[j].npus = *spec.npus;
  }
  if (!problems.ok()) return problems;
  // Jobs without 'npus': the lowest NPUs no job lists, in the file's order.
  int next = 0;
  for (size_t j = 0; j < specs->size(); ++j) {
    if ((*specs)[j].npus) continue;
    for (int r = 0; r < ranks[j]; ++r) {
      while (next < n && owner[next] >= 0) ++next;
      if (next == n) {
        return Status::Error((*specs)[j].where + ": job '" + (*specs)[j].name + "' has " +
                             std::to_string(ranks[j]) + " rank files, but only " +
                             std::to_string(r) + " NPUs are left for it: " + machine +
                             ", and the other jobs take the rest");
      }
      owner[next] = static_cast<int>(j);
      jobs[j].npus.push_back(next);
    }
  }
  for (const JobSpec& spec : *specs) {
    prefixes->push_back(spec.workload);
    comm_groups->push_back(spec.comm_groups);
  }
  if (o.job_alone >= 0) {
    // One job where the whole file puts it; the others' NPUs idle.
    const size_t j = static_cast<size_t>(o.job_alone);
    ORRERY_CHECK(j < jobs.size(), "job_alone past the jobs file's jobs");
    jobs = {jobs[j]};
    *prefixes = {(*prefixes)[j]};
    *comm_groups = {(*comm_groups)[j]};
  }
  return std::make_unique<Placement>(std::move(jobs), n);
}

// With --replicate-trace: the trace's rank files (<prefix>.0.et, ... up to the first missing
// one) as copies filling the network's `n` NPUs; with --jobs, the jobs on their NPUs; nullptr
// with neither. `prefixes` gets each copy's (job's) trace prefix, `comm_groups` each job's
// comm-group file.
// A trace manifest's copies (et_feeder/manifest.h) on the network's `n` NPUs.
StatusOr<std::unique_ptr<Placement>> PlanManifest(const RunOptions& o, int n,
                                                  const et::TraceManifest& m) {
  if (o.replicate_trace) {
    return Status::Error("--replicate-trace: " + o.workload + " has a trace manifest (" + m.path +
                         ") saying how its rank files fill the machine; run it without "
                         "--replicate-trace");
  }
  if (m.npus != n) {
    return Status::Error(m.path + ": the manifest's job has " + std::to_string(m.npus) +
                         " NPUs ('npus'), but the network (" + o.network_config + ") has " +
                         std::to_string(n) + "; expected a network of " + std::to_string(m.npus) +
                         " NPUs (or generate the step for " + std::to_string(n) + ")");
  }
  const int ranks = m.npus / m.copies;
  StatusOr<int> count = CountRankFiles(o.workload, ranks, m.path);
  if (!count.ok()) return count.status();
  if (*count < ranks) {
    return Status::Error(m.path + ": the manifest's copies have " + std::to_string(ranks) +
                         " ranks (npus / copies), but " + et::RankTracePath(o.workload, *count) +
                         " is missing; expected the files " + et::RankTracePath(o.workload, 0) +
                         " .. " + et::RankTracePath(o.workload, ranks - 1));
  }
  StatusOr<DataParallelGroups> dp = ParseDataParallelGroups(m.data_parallel_groups);
  if (!dp.ok()) return dp.status().WithContext(m.path + ": 'data-parallel-groups'");
  auto placement = std::make_unique<Placement>(ranks, m.copies, *dp, m.interleave);
  placement->set_manifest(m.path);
  return placement;
}

StatusOr<std::unique_ptr<Placement>> PlanPlacement(const RunOptions& o, int n,
                                                   std::vector<std::string>* prefixes,
                                                   std::vector<std::string>* comm_groups) {
  if (!o.dp_groups.empty() && !o.replicate_trace) {
    return Status::Error("--dp-groups '" + o.dp_groups +
                         "' applies only with --replicate-trace (it says which communicator "
                         "groups span every copy of the trace)");
  }
  if (!o.jobs.empty()) return PlanJobs(o, n, prefixes, comm_groups);
  prefixes->push_back(o.workload);
  comm_groups->push_back(o.comm_group_config);
  StatusOr<std::optional<et::TraceManifest>> manifest = et::LoadTraceManifestOf(o.workload);
  if (!manifest.ok()) return manifest.status();
  if (*manifest) return PlanManifest(o, n, **manifest);
  if (!o.replicate_trace) return std::unique_ptr<Placement>();
  StatusOr<DataParallelGroups> dp = ParseDataParallelGroups(o.dp_groups);
  if (!dp.ok()) return dp.status();
  StatusOr<int> count = CountRankFiles(o.workload, n + 1, "--replicate-trace");
  if (!count.ok()) return count.status();
  const int ranks = *count;
  if (ranks > n) {
    return Status::Error("--replicate-trace: the trace has at least " + std::to_string(n + 1) +
                         " rank files (" + et::RankTracePath(o.workload, 0) + " .. " +
                         et::RankTracePath(o.workload, n) + "), more than the " +
                         std::to_string(n) + " NPUs of the network (" + o.network_config +
                         "); copies of a trace need a network of a multiple of its ranks");
  }
  if (n % ranks != 0) {
    std::string multiples;
    for (int k = 1; k <= 3; ++k) multiples += std::to_string(k * ranks) + ", ";
    return Status::Error(
        "--replicate-trace: the network (" + o.network_config + ") has " + std::to_string(n) +
        " NPUs, not a whole number of copies of the trace's " + std::to_string(ranks) +
        " rank files (" + et::RankTracePath(o.workload, 0) + " .. " +
        et::RankTracePath(o.workload, ranks - 1) + ", and no " +
        et::RankTracePath(o.workload, ranks) + "); expected a network of a multiple of " +
        std::to_string(ranks) + " NPUs (" + multiples + "...)");
  }
  return std::make_unique<Placement>(ranks, n / ranks, *dp);
}

// A file's bytes, or nullopt when it cannot be read (its load reports that).
std::optional<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

uint64_t HashBytes(const std::string& bytes) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001B3ull;
  return h ^ (h >> 29);
}

// For each file, the first file with the same bytes (itself when none before it has them). Files
// that cannot be read stand alone. Hashed in parallel; equal hashes are confirmed byte for byte.
std::vector<int> SameContents(const std::vector<std::string>& paths) {
  const int n = static_cast<int>(paths.size());
  std::vector<std::optional<uint64_t>> hash(paths.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < n; ++i) {
    try {
      struct stat st;
      if (stat(paths[i].c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // its load says
      if (std::optional<std::string> bytes = ReadBytes(paths[i])) hash[i] = HashBytes(*bytes);
    } catch (const std::bad_alloc&) {
      hash[i].reset();  // loaded on its own; its load says what is wrong
    }
  }
  std::vector<int> same(paths.size());
  std::map<uint64_t, std::vector<int>> by_hash;           // hash -> distinct contents' first files
  std::map<int, std::optional<std::string>> first_bytes;  // read once, when a file matches
  for (int i = 0; i < n; ++i) {
    same[i] = i;
    if (!hash[i]) continue;
    std::vector<int>& firsts = by_hash[*hash[i]];
    if (!firsts.empty()) {
      const std::optional<std::string> bytes = ReadBytes(paths[i]);
      for (int f : firsts) {
        auto it = first_bytes.find(f);
        if (it == first_bytes.end()) it = first_bytes.emplace(f, ReadBytes(paths[f])).first;
        if (bytes && it->second && *bytes == *it->second) {
          same[i] = f;
          break;
        }
      }
    }
    if (same[i] == i) firsts.push_back(i);
  }
  return same;
}

// One file per NPU and the last one missing: said before millions of paths are resolved and
// opened (a 2^24-NPU network with an 8-rank trace took minutes and gigabytes to say so).
// Without a placement only.
Status CheckLastRankFile(const RunOptions& o, int n) {
  if (access(et::RankTracePath(o.workload, n - 1).c_str(), F_OK) == 0) return Status::Ok();
  int present = 0;
  while (present < n && access(et::RankTracePath(o.workload, present).c_str(), F_OK) == 0) {
    ++present;
  }
  if (const std::string hint = PrefixIsAFile(o.workload); present < n && n > 64) {
    return Status::Error(
        et::RankTracePath(o.workload, present) + ": no such trace file; the network (" +
        o.network_config + ") has " + std::to_string(n) + " NPUs, so the workload needs files " +
        et::RankTracePath(o.workload, 0) + " .. " + et::RankTracePath(o.workload, n - 1) +
        (present == 0 ? std::string(" (there are none)")
                      : " (there are " + et::RankTracePath(o.workload, 0) + " .. " +
                            et::RankTracePath(o.workload, present - 1) + ")") +
        (hint.empty() ? "" : "; " + hint));
  }
  return Status::Ok();
}

// The rank files to load, in rank order: with --jobs each job's (from `prefixes`), otherwise
// the workload's, one per NPU or per rank of the placement.
std::vector<std::string> RankFiles(const RunOptions& o, int n, const Placement* placement,
                                   const std::vector<std::string>& prefixes) {
  std::vector<std::string> paths;
  if (placement && placement->jobs()) {
    for (int j = 0; j < placement->copies(); ++j) {
      for (int r = 0; r < placement->RanksOfCopy(j); ++r) {
        paths.push_back(et::RankTracePath(prefixes[j], r));
      }
    }
  } else {
    const int ranks = placement ? placement->ranks() : n;
    for (int r = 0; r < ranks; ++r) paths.push_back(et::RankTracePath(o.workload, r));
  }
  return paths;
}

// `paths` without repeats of a file (however its path is written), in order of first
// appearance; paths[i] is the result's (*index)[i].
std::vector<std::string> DistinctFiles(const std::vector<std::string>& paths,
                                       std::vector<int>* index) {
  index->resize(paths.size());
  std::map<std::string, int> first;  // canonical path -> its place in `distinct`
  std::vector<std::string> distinct;
  for (size_t i = 0; i < paths.size(); ++i) {
    char canonical[PATH_MAX];
    const std::string key = realpath(paths[i].c_str(), canonical) != nullptr ? canonical : paths[i];
    auto it = first.emplace(key, static_cast<int>(distinct.size())).first;
    if (it->second == static_cast<int>(distinct.size())) distinct.push_back(paths[i]);
    (*index)[i] = it->second;
  }
  return distinct;
}

// `files` without repeats of the same bytes, each as the first of them; files[i] is the
// result's (*index)[i].
std::vector<std::string> DistinctContents(const std::vector<std::string>& files,
                                          std::vector<int>* index) {
  index->resize(files.size());
  const std::vector<int> same = SameContents(files);
  std::vector<std::string> distinct;
  for (size_t i = 0; i < files.size(); ++i) {
    if (same[i] == static_cast<int>(i)) {
      (*index)[i] = static_cast<int>(distinct.size());
      distinct.push_back(files[i]);
    } else {
      (*index)[i] = (*index)[same[i]];
    }
  }
  return distinct;
}

// Loads every file of `paths` in parallel (each independently; same result) into `traces`,
// or its error into `status`, at the same index.
void LoadInParallel(const std::vector<std::string>& paths, const et::LoadOptions& options,
                    std::vector<std::unique_ptr<et::Trace>>& traces, std::vector<Status>& status) {
  const int num_traces = static_cast<int>(paths.size());
  traces.resize(num_traces);
  status.resize(num_traces);
#pragma omp parallel for schedule(dynamic, 16)
  for (int r = 0; r < num_traces; ++r) {
    // No exception may leave the loop's body (it would end the program): out of memory is this
    // rank's error.
    try {
      StatusOr<et::Trace> t = et::Trace::Load(paths[r], options);
      if (t.ok()) {
        traces[r] = std::make_unique<et::Trace>(std::move(t).value());
      } else {
        status[r] = t.status();
      }
    } catch (const std::bad_alloc&) {
      traces[r].reset();
      status[r] = Status::Error(paths[r] + ": " + kOutOfMemory);
    }
  }
}

// Every file's own problems, in file order: a file that shares a failed trace's bytes is
// loaded on its own again, so that its messages name it. File i was loaded as content_of[i].
Status LoadProblems(const RunOptions& o, int n, bool placed, const std::vector<std::string>& files,
                    const std::vector<int>& content_of, const std::vector<Status>& load_status,
                    const et::LoadOptions& load_options) {
  Status problems;
  int failed_ranks = 0, missing_files = 0;
  std::vector<bool> reported(load_status.size(), false);
  for (size_t i = 0; i < files.size(); ++i) {
    const int t = content_of[i];
    if (load_status[t].ok()) continue;
    Status own = load_status[t];
    if (reported[t]) own = et::Trace::Load(files[i], load_options).status();
    reported[t] = true;
    if (++failed_ranks <= 8) problems.Merge(own);
    if (access(files[i].c_str(), F_OK) != 0) ++missing_files;
  }
  if (failed_ranks > 8) {
    problems.Add("... and " + std::to_string(failed_ranks - 8) + " more trace files failed");
  }
  if (missing_files > 0 && !placed) {
    problems.Add("the network (" + o.network_config + ") has " + std::to_string(n) +
                 " NPUs, so the workload needs files " + et::RankTracePath(o.workload, 0) + " .. " +
                 et::RankTracePath(o.workload, n - 1));
  }
  if (missing_files > 0) {
    const std::string hint = PrefixIsAFile(o.workload);
    if (!hint.empty()) problems.Add(hint);
  }
  return problems;
}

// Warnings on the loaded traces' dependencies (dangling ones, ignored ctrl_deps), counted as
// if each file were loaded: `copies_of[t]` files were loaded as trace t.
void AddDependencyWarnings(const std::vector<std::unique_ptr<et::Trace>>& traces,
                           const std::vector<int>& copies_of, std::vector<std::string>& warnings) {
  const int num_traces = static_cast<int>(copies_of.size());
  uint64_t dangling = 0;
  int dangling_files = 0;
  std::string example;
  for (int r = 0; r < num_traces; ++r) {
    if (traces[r]->dangling_dependency_count() == 0) continue;
    dangling += traces[r]->dangling_dependency_count() * copies_of[r];
    dangling_files += copies_of[r];
    if (example.empty() && !traces[r]->dangling_dependency_sample().empty()) {
      const auto& d = traces[r]->dangling_dependency_sample().front();
      example = "e.g. node " + std::to_string(d.node_id) + " of " + traces[r]->path() +
                " depends on node " + std::to_string(d.missing_id);
    }
  }
  if (dangling > 0) {
    warnings.push_back(std::to_string(dangling) + " dependencies in " +
                       std::to_string(dangling_files) +
                       " trace file(s) name nodes that are not in the file (" + example +
                       "); they are treated as already satisfied (--strict makes this an error)");
  }
  int ctrl_ignored_files = 0;
  std::string ctrl_example;
  for (int r = 0; r < num_traces; ++r) {
    if (traces[r]->ctrl_deps_ignored().empty()) continue;
    if (ctrl_ignored_files == 0) {
      ctrl_example = traces[r]->ctrl_deps_ignored();  // names the file already
    }
    ctrl_ignored_files += copies_of[r];
  }
  if (ctrl_ignored_files > 0) {
    warnings.push_back("ctrl_deps form a cycle in " + std::to_string(ctrl_ignored_files) +
                       " trace file(s), so only data_deps order their nodes (" + ctrl_example +
                       ")");
  }
}

}  // namespace

StatusOr<TraceSet> LoadTraceSet(const RunOptions& o, int n) {
  TraceSet set;
  // The trace's ranks: one file per NPU, or with --replicate-trace the files there are, run as
  // n / ranks copies, or with --jobs each job's files on its NPUs.
  std::vector<std::string> prefixes;
  StatusOr<std::unique_ptr<Placement>> planned =
      PlanPlacement(o, n, &prefixes, &set.comm_group_files);
  if (!planned.ok()) return planned.status();
  set.placement = std::move(planned).value();
  const Placement* placement = set.placement.get();
  if (!placement) {
    if (Status last = CheckLastRankFile(o, n); !last.ok()) return last;
  }
  // Jobs that name the same trace files (however the path is written) share them once loaded,
  // as copies of one trace do: file loaded_as[i] is rank file i. Files with the same bytes (a
  // user's replicated traces, a benchmark's identical ranks) are loaded once too, as the first
  // of them: files[i] is loaded as trace content_of[i].
  std::vector<int> loaded_as, content_of;
  const std::vector<std::string> files =
      DistinctFiles(RankFiles(o, n, placement, prefixes), &loaded_as);
  const std::vector<std::string> trace_paths = DistinctContents(files, &content_of);
  const int num_traces = static_cast<int>(trace_paths.size());

  std::vector<std::unique_ptr<et::Trace>>& traces = set.traces;
  std::vector<Status> load_status;
  et::LoadOptions load_options;
  load_options.strict = o.strict;
  LoadInParallel(trace_paths, load_options, traces, load_status);
  {
    Status problems =
        LoadProblems(o, n, placement != nullptr, files, content_of, load_status, load_options);
    if (!problems.ok()) return problems;
  }
  if (!placement && access(et::RankTracePath(o.workload, n).c_str(), F_OK) == 0) {
    set.warnings.push_back(et::RankTracePath(o.workload, n) + " exists, but the network (" +
                           o.network_config + ") has " + std::to_string(n) + " NPUs: only files " +
                           et::RankTracePath(o.workload, 0) + " .. " +
                           et::RankTracePath(o.workload, n - 1) + " are simulated");
  }
  // NPU r runs traces[trace_index[r]]; an idle NPU (no job runs on it), the last: no nodes.
  traces.push_back(std::make_unique<et::Trace>(et::Trace::Empty("(idle: no job)")));
  set.trace_index.resize(n);
  set.npu_trace.resize(n);
  set.npu_file.resize(n);
  for (int r = 0; r < n; ++r) {
    const int t = placement ? placement->TraceIndex(r) : r;
    set.trace_index[r] = t < 0 ? num_traces : content_of[loaded_as[t]];
    set.npu_trace[r] = traces[set.trace_index[r]].get();
    if (t >= 0) set.npu_file[r] = files[loaded_as[t]];
  }
  std::vector<int> copies_of(static_cast<size_t>(num_traces), 0);
  for (int t : content_of) ++copies_of[t];
  AddDependencyWarnings(traces, copies_of, set.warnings);
  return set;
}

}  // namespace orrery
