#include "runner/run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <set>

#include "common/event_queue.h"
#include "config/comm_group_config.h"
#include "config/network_config.h"
#include "config/schema.h"
#include "config/system_config.h"
#include "memory/memory_config.h"
#include "memory/remote_memory.h"
#include "network/network.h"
#include "runner/npu_scale.h"
#include "runner/system_params_from_config.h"
#include "system/collective_engine.h"
#include "workload/breakdown.h"
#include "workload/placement.h"

namespace orrery {

namespace {

// Whether the comm-group flag names no file. ASTRA-sim takes any path containing "empty" as
// none (its default is the word "empty"); here "" and "empty" are none, and another path with
// "empty" in it is none only when no such file exists (a warning says which way it went), so a
// real file under, say, /data/emptyset/ is not silently ignored.
bool NoCommGroupFile(const std::string& path, std::vector<std::string>* warnings) {
  if (path.empty() || path == "empty") return true;
  if (path.find("empty") == std::string::npos) return false;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    warnings->push_back("comm-group file " + path +
                        " is read, though ASTRA-sim would ignore it (its path contains "
                        "'empty')");
    return false;
  }
  warnings->push_back("comm-group file " + path +
                      " does not exist; no communicator groups, as in ASTRA-sim (which takes a "
                      "path containing 'empty' as none)");
  return true;
}

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

}  // namespace

namespace {

// Keeps what the system layer reports, for timelines and reports (RunOptions::record).
class PhaseRecorder : public SystemObserver {
 public:
  // `phases_of` (empty = all): the NPUs whose phases are kept, the timeline's.
  PhaseRecorder(int n, bool phases, bool queues, std::vector<bool> phases_of)
      : keep_phases_(phases),
        keep_queues_(queues),
        phases_of_(std::move(phases_of)),
        phases_(n),
        queues_(n) {}

  void OnPhaseDone(const PhaseRecord& r) override {
    if (!keep_phases_ || (!phases_of_.empty() && !phases_of_[static_cast<size_t>(r.npu)])) return;
    ChunkPhaseRecord c;
    c.node_id = r.token;  // the node index until Finish() maps it to the node id
    c.stream = r.stream;
    c.phase = r.phase;
    c.num_phases = r.num_phases;
    c.type = r.spec->type;
    c.algorithm = r.algorithm;
    c.queue = r.spec->queue;
    c.ring_size = r.spec->ring_size;
    c.bytes = r.spec->data_size;
    c.sender = r.spec->sender;
    c.receiver = r.spec->receiver;
    c.queued = r.queued;
    c.started = r.started;
    c.ended = r.ended;
    phases_[r.npu].push_back(c);
  }

  void OnQueueLength(int npu, int queue, Time t, int length) override {
    if (!keep_queues_) return;
    std::vector<QueueSample>& v = queues_[npu];
    // Several changes of a queue at one instant (other queues' changes between them): keep the
    // last.
    for (size_t i = v.size(); i-- > 0 && v[i].t == t;) {
      if (v[i].queue == queue) {
        v[i].length = length;
        return;
      }
    }
    v.push_back(QueueSample{t, queue, length});
  }

  // NPU r ran *npu_trace[r].
  void Finish(const std::vector<const et::Trace*>& npu_trace, RunResult& result) {
    for (size_t r = 0; r < phases_.size(); ++r) {
      const et::Trace& t = *npu_trace[r];
      for (ChunkPhaseRecord& c : phases_[r]) c.node_id = t.id(static_cast<uint32_t>(c.node_id));
    }
    result.phases = std::move(phases_);
    result.queues = std::move(queues_);
  }

 private:
  const bool keep_phases_, keep_queues_;
  const std::vector<bool> phases_of_;
  std::vector<std::vector<ChunkPhaseRecord>> phases_;
  std::vector<std::vector<QueueSample>> queues_;
};

}  // namespace

StatusOr<RunResult> RunSimulation(const RunOptions& o) {
  RunResult result;
  Status problems;
  if (o.jobs.empty() && o.workload.empty()) {
    problems.Add("--workload-configuration (or --jobs) is required");
  }
  if (!o.jobs.empty()) {
    if (!o.workload.empty()) {
      problems.Add("--jobs " + o.jobs + " and --workload-configuration " + o.workload +
                   " were both given; expected one: --jobs names each job's workload");
    }
    if (o.replicate_trace) {
      problems.Add("--replicate-trace does not apply with --jobs " + o.jobs +
                   " (each job runs its own trace on its own NPUs)");
    }
    if (!o.comm_group_config.empty() && o.comm_group_config != "empty") {
      problems.Add("--comm-group-configuration " + o.comm_group_config +
                   " does not apply with --jobs " + o.jobs +
                   "; give each job its groups with its 'comm-groups' key");
    }
  }
  if (o.system_config.empty()) problems.Add("--system-configuration is required");
  if (o.network_config.empty()) problems.Add("--network-configuration is required");
  // Scales beyond 1e6 would overflow simulated time (int64 picoseconds, about 106 days).
  if (!(o.compute_scale > 0 && o.compute_scale <= 1e6)) {
    problems.Add("--compute-scale is " + FormatNumber(o.compute_scale) +
                 "; expected a number > 0 and <= 1e6 (2 = compute takes twice as long)");
  }
  if (!(o.injection_scale >= 0 && o.injection_scale <= 1e6)) {
    problems.Add("--injection-scale is " + FormatNumber(o.injection_scale) +
                 "; expected a number >= 0 and <= 1e6 (it multiplies endpoint-delay)");
  }
  if (!(o.comm_scale > 0 && o.comm_scale <= 1e6)) {
    problems.Add("--comm-scale is " + FormatNumber(o.comm_scale) +
                 "; expected a number > 0 and <= 1e6 (it multiplies every communication size)");
  }
  if (!problems.ok()) return problems;

  NetworkParams net_params;
  StatusOr<Topology> topology = LoadNetworkConfig(o.network_config, &net_params);
  StatusOr<SystemConfig> system = LoadSystemConfig(o.system_config);
  MemoryConfig memory_config;
  if (!o.memory_config.empty()) {
    StatusOr<MemoryConfig> m = LoadMemoryConfig(o.memory_config);
    if (m.ok())
      memory_config = *m;
    else
      problems.Merge(m.status());
  }
  if (!topology.ok()) problems.Merge(topology.status());
  if (!system.ok()) problems.Merge(system.status());
  if (!problems.ok()) return problems;

  if (system->roofline_enabled) {
    if (!(system->peak_perf_tflops > 0)) {
      problems.Add(o.system_config + ": 'roofline-enabled' is on but 'peak-perf' is " +
                   FormatNumber(system->peak_perf_tflops) +
                   "; the roofline needs a peak compute rate > 0 TFLOPS (e.g. 900)");
    }
    if (!(system->local_mem_bw_gbps > 0)) {
      problems.Add(o.system_config + ": 'roofline-enabled' is on but 'local-mem-bw' is " +
                   FormatNumber(system->local_mem_bw_gbps) +
                   "; the roofline needs a memory bandwidth > 0 GB/s (e.g. 1600)");
    }
    if (!problems.ok()) return problems;
  }

  {
    Status supported = CheckBackendSupports(o.backend, *topology, net_params);
    if (!supported.ok()) return supported.WithContext(o.network_config);
    Status slow = CheckSlowLinks(o.backend, *topology, net_params);  // names its file and line
    if (!slow.ok()) return slow;
  }
  const int n = topology->num_npus();
  {
    Status fits = CheckMemoryFitsNetwork(memory_config, n, o.network_config);
    if (!fits.ok()) return fits;
  }
  StatusOr<std::vector<double>> npu_scales = ParseNpuScales(o.npu_compute_scale, n);
  if (!npu_scales.ok()) return npu_scales.status();
  if (!o.timeline_npus.empty()) {
    StatusOr<std::vector<bool>> shown = ParseNpuSet(o.timeline_npus, n, "--timeline-npus");
    if (!shown.ok()) return shown.status();
    result.timeline_npus = std::move(shown).value();
  }
  StatusOr<SystemParams> params = SystemParamsFromConfig(*system, o, topology->dims.size());
  if (!params.ok()) return params.status();
  for (const Dimension& d : topology->dims)
    params->whole_chunks = params->whole_chunks || d.lanes > 1;

  // The trace's ranks: one file per NPU, or with --replicate-trace the files there are, run as
  // n / ranks copies, or with --jobs each job's files on its NPUs.
  std::vector<std::string> prefixes, comm_group_files;
  StatusOr<std::unique_ptr<Placement>> planned = PlanPlacement(o, n, &prefixes, &comm_group_files);
  if (!planned.ok()) return planned.status();
  std::unique_ptr<Placement> placement = std::move(planned).value();
  if (placement) result.placement = placement->Describe();
  const bool jobs = placement && placement->jobs();
  if (placement && !jobs) result.copy_ranks = placement->ranks();
  for (int j = 0; jobs && j < placement->copies(); ++j) {
    JobResult job;
    job.name = placement->JobName(j);
    job.npus = placement->CopyNpus(j);
    result.jobs.push_back(std::move(job));
  }
  // One file per NPU and the last one missing: said before millions of paths are resolved and
  // opened (a 2^24-NPU network with an 8-rank trace took minutes and gigabytes to say so).
  if (!placement && access(et::RankTracePath(o.workload, n - 1).c_str(), F_OK) != 0) {
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
  }
  // trace_paths[i]: the file of loaded trace i.
  std::vector<std::string> trace_paths;
  if (jobs) {
    for (int j = 0; j < placement->copies(); ++j) {
      for (int r = 0; r < placement->RanksOfCopy(j); ++r) {
        trace_paths.push_back(et::RankTracePath(prefixes[j], r));
      }
    }
  } else {
    const int ranks = placement ? placement->ranks() : n;
    for (int r = 0; r < ranks; ++r) trace_paths.push_back(et::RankTracePath(o.workload, r));
  }
  // Jobs that name the same trace files (however the path is written) share them once loaded,
  // as copies of one trace do: loaded_as[i] is the loaded trace of trace_paths[i].
  std::vector<int> loaded_as(trace_paths.size());
  {
    std::map<std::string, int> first;  // canonical path -> loaded trace
    std::vector<std::string> distinct;
    for (size_t i = 0; i < trace_paths.size(); ++i) {
      char canonical[PATH_MAX];
      const std::string key =
          realpath(trace_paths[i].c_str(), canonical) != nullptr ? canonical : trace_paths[i];
      auto it = first.emplace(key, static_cast<int>(distinct.size())).first;
      if (it->second == static_cast<int>(distinct.size())) distinct.push_back(trace_paths[i]);
      loaded_as[i] = it->second;
    }
    trace_paths = std::move(distinct);
  }
  const int num_traces = static_cast<int>(trace_paths.size());

  // Traces: one file per rank, loaded in parallel (each rank independently; same result).
  std::vector<std::unique_ptr<et::Trace>> traces(num_traces);
  std::vector<Status> load_status(num_traces);
  et::LoadOptions load_options;
  load_options.strict = o.strict;
#pragma omp parallel for schedule(dynamic, 16)
  for (int r = 0; r < num_traces; ++r) {
    // No exception may leave the loop's body (it would end the program): out of memory is this
    // rank's error.
    try {
      StatusOr<et::Trace> t = et::Trace::Load(trace_paths[r], load_options);
      if (t.ok()) {
        traces[r] = std::make_unique<et::Trace>(std::move(t).value());
      } else {
        load_status[r] = t.status();
      }
    } catch (const std::bad_alloc&) {
      traces[r].reset();
      load_status[r] = Status::Error(trace_paths[r] + ": " + kOutOfMemory);
    }
  }
  int failed_ranks = 0, missing_files = 0;
  for (int r = 0; r < num_traces; ++r) {
    if (load_status[r].ok()) continue;
    if (++failed_ranks <= 8) problems.Merge(load_status[r]);
    if (access(trace_paths[r].c_str(), F_OK) != 0) ++missing_files;
  }
  if (failed_ranks > 8) {
    problems.Add("... and " + std::to_string(failed_ranks - 8) + " more trace files failed");
  }
  if (missing_files > 0 && !placement) {
    problems.Add("the network (" + o.network_config + ") has " + std::to_string(n) +
                 " NPUs, so the workload needs files " + et::RankTracePath(o.workload, 0) + " .. " +
                 et::RankTracePath(o.workload, n - 1));
  }
  if (missing_files > 0) {
    const std::string hint = PrefixIsAFile(o.workload);
    if (!hint.empty()) problems.Add(hint);
  }
  if (failed_ranks > 0) return problems;
  if (!placement && access(et::RankTracePath(o.workload, n).c_str(), F_OK) == 0) {
    result.warnings.push_back(et::RankTracePath(o.workload, n) + " exists, but the network (" +
                              o.network_config + ") has " + std::to_string(n) +
                              " NPUs: only files " + et::RankTracePath(o.workload, 0) + " .. " +
                              et::RankTracePath(o.workload, n - 1) + " are simulated");
  }
  // NPU r runs traces[trace_index[r]]; an idle NPU (no job runs on it), the last: no nodes.
  traces.push_back(std::make_unique<et::Trace>(et::Trace::Empty("(idle: no job)")));
  std::vector<int> trace_index(n);
  std::vector<const et::Trace*> npu_trace(n);
  for (int r = 0; r < n; ++r) {
    const int t = placement ? placement->TraceIndex(r) : r;
    trace_index[r] = t < 0 ? num_traces : loaded_as[t];
    npu_trace[r] = traces[trace_index[r]].get();
  }
  uint64_t dangling = 0;
  int dangling_files = 0;
  std::string example;
  for (int r = 0; r < num_traces; ++r) {
    if (traces[r]->dangling_dependency_count() == 0) continue;
    dangling += traces[r]->dangling_dependency_count();
    ++dangling_files;
    if (example.empty() && !traces[r]->dangling_dependency_sample().empty()) {
      const auto& d = traces[r]->dangling_dependency_sample().front();
      example = "e.g. node " + std::to_string(d.node_id) + " of " + traces[r]->path() +
                " depends on node " + std::to_string(d.missing_id);
    }
  }
  if (dangling > 0) {
    result.warnings.push_back(
        std::to_string(dangling) + " dependencies in " + std::to_string(dangling_files) +
        " trace file(s) name nodes that are not in the file (" + example +
        "); they are treated as already satisfied (--strict makes this an error)");
  }

  int ctrl_ignored_files = 0;
  std::string ctrl_example;
  for (int r = 0; r < num_traces; ++r) {
    if (traces[r]->ctrl_deps_ignored().empty()) continue;
    if (ctrl_ignored_files++ == 0) {
      ctrl_example = traces[r]->ctrl_deps_ignored();  // names the file already
    }
  }
  if (ctrl_ignored_files > 0) {
    result.warnings.push_back("ctrl_deps form a cycle in " + std::to_string(ctrl_ignored_files) +
                              " trace file(s), so only data_deps order their nodes (" +
                              ctrl_example + ")");
  }

  Simulation sim;
  std::unique_ptr<Network> net = MakeNetwork(o.backend, sim, *topology, net_params);
  result.network_model = DescribeNetworkModel(o.backend, *topology, net_params);
  SystemLayer system_layer(sim, *net, *params);
  // Communicator groups: one file for the trace, or one per job (its 'comm-groups').
  for (size_t job = 0; job < comm_group_files.size(); ++job) {
    const std::string& file = comm_group_files[job];
    if (NoCommGroupFile(file, &result.warnings)) continue;
    // Members are the trace's ranks: NPUs, or with --replicate-trace ranks of every copy, or
    // with --jobs ranks of the job. With copies, a data-parallel group may have one member: it
    // spans the copies.
    int num_ranks = n;
    std::string member = "an NPU id";
    const std::set<int>* one_member_ok = nullptr;
    if (jobs) {
      num_ranks = placement->RanksOfCopy(static_cast<int>(job));
      member = "a rank of job '" + placement->JobName(static_cast<int>(job)) + "'";
    } else if (placement) {
      num_ranks = placement->ranks();
      member = "a rank of the trace";
      one_member_ok = &placement->data_parallel().groups;
    }
    StatusOr<std::map<int, std::vector<int>>> groups =
        LoadCommGroupConfig(file, num_ranks, one_member_ok, member);
    if (!groups.ok() && jobs) {
      return groups.status().WithContext(
          o.jobs + ": job '" + placement->JobName(static_cast<int>(job)) + "', 'comm-groups'");
    }
    if (!groups.ok()) return groups.status();
    for (auto& [id, members] : *groups) {
      Status s;
      if (!placement) {
        s = system_layer.AddGroup(id, members);
      } else if (jobs) {
        s = placement->Define(system_layer, id, members, placement->Npu(static_cast<int>(job), 0))
                .status();
      } else {
        // Defined for every copy: a data-parallel group once, spanning them all (Define returns
        // it again for the other copies), any other group once per copy.
        for (int c = 0; c < placement->copies() && s.ok(); ++c) {
          s = placement->Define(system_layer, id, members, placement->Npu(c, 0)).status();
        }
      }
      if (!s.ok()) return s.WithContext(file);
    }
  }
  {
    Status custom = ConfigureCustomCollectives(*system, system_layer);
    if (!custom.ok()) return custom;
  }
  // NCCL's per-call choice of algorithm and protocol (system key nccl-model).
  std::unique_ptr<NcclTuner> tuner;
  {
    std::string model_path = o.nccl_model;
    if (model_path.empty() && !system->nccl_model.empty()) {
      model_path = system->nccl_model;
      const size_t slash = o.system_config.rfind('/');
      if (model_path[0] != '/' && slash != std::string::npos) {
        model_path = o.system_config.substr(0, slash + 1) + model_path;
      }
    }
    if (model_path.empty() && (!o.nccl_algorithm.empty() || !o.nccl_protocol.empty())) {
      return Status::Error("an NCCL " +
                           (o.nccl_algorithm.empty() ? "protocol ('" + o.nccl_protocol
                                                     : "algorithm ('" + o.nccl_algorithm) +
                           "') was asked for, but there is no NCCL model: set 'nccl-model' in " +
                           o.system_config +
                           " or give --nccl-model (e.g. "
                           "configs/machines/hgx-h100/nccl.yaml)");
    }
    if (!model_path.empty()) {
      const std::string where = o.nccl_model.empty()
                                    ? o.system_config + ": 'nccl-model' " + system->nccl_model
                                    : "NCCL model " + o.nccl_model;
      StatusOr<NcclModel> model = LoadNcclModel(model_path);
      if (!model.ok()) return model.status().WithContext(where);
      StatusOr<std::unique_ptr<NcclTuner>> t =
          NcclTuner::Make(*model, o.nccl_algorithm, o.nccl_protocol, *topology, net_params,
                          o.backend, *params, &system_layer, *net);
      if (!t.ok()) return t.status().WithContext(where);
      tuner = std::move(*t);
      tuner->set_forcing_flag(o.nccl_algorithm_flag);
    }
  }
  // A list of algorithms shorter than the network's dimensions is ASTRA-sim's way of running a
  // collective over the first dimensions only: legal, and easy to do by mistake (a 1-D system
  // file on a 3-D network all-reduces inside dimension 0), so it is said.
  if (!tuner) {
    const std::pair<const std::vector<std::string>*, const char*> lists[] = {
        {&system->all_reduce_implementation, "all-reduce-implementation"},
        {&system->reduce_scatter_implementation, "reduce-scatter-implementation"},
        {&system->all_gather_implementation, "all-gather-implementation"},
        {&system->all_to_all_implementation, "all-to-all-implementation"},
    };
    const std::vector<std::string>* customs[] = {
        &system->all_reduce_implementation_custom, &system->reduce_scatter_implementation_custom,
        &system->all_gather_implementation_custom, &system->all_to_all_implementation_custom};
    const size_t dims = topology->dims.size();
    std::map<size_t, std::string> short_lists;  // by length: the keys
    for (size_t i = 0; i < 4; ++i) {
      const size_t k = lists[i].first->size();
      if (k == 0 || k >= dims || !customs[i]->empty()) continue;
      // A one* or channelRing entry flattens the whole machine into one ring: it spans it.
      if (std::any_of(params->impl[i].begin(), params->impl[i].end(),
                      [](const AlgorithmSpec& a) { return IsFlattened(a.kind); })) {
        continue;
      }
      std::string& keys = short_lists[k];
      keys += (keys.empty() ? "'" : ", '") + std::string(lists[i].second) + "'";
    }
    // ASTRA-sim's one* algorithms flatten the machine into one ring, so on several dimensions
    // they send messages between NPUs that differ in more than one. Its congestion-unaware
    // backend charges such a message the lowest differing dimension alone; Orrery's charges
    // every dimension it crosses (network/README.md), so the times differ from ASTRA-sim's there.
    const auto wide = [](const auto& d) { return d.npus > 1; };
    if (o.backend == Backend::kAnalyticalUnaware &&
        std::count_if(topology->dims.begin(), topology->dims.end(), wide) > 1) {
      std::string keys;
      for (size_t i = 0; i < 4; ++i) {
        if (!customs[i]->empty()) continue;
        if (std::any_of(params->impl[i].begin(), params->impl[i].end(), [](const AlgorithmSpec& a) {
              return IsFlattened(a.kind) && a.kind != AlgorithmKind::kChannelRing;
            })) {
          keys += (keys.empty() ? "'" : ", '") + std::string(lists[i].second) + "'";
        }
      }
      if (!keys.empty()) {
        result.warnings.push_back(
            o.system_config + ": a one* algorithm (in " + keys + ") flattens the network's " +
            std::to_string(dims) +
            " dimensions into one of all NPUs; a message between NPUs that differ in several "
            "dimensions crosses each of them here, where ASTRA-sim's congestion-unaware backend "
            "charges the lowest one alone, so collectives run with it may take longer than in "
            "ASTRA-sim "
            "(network/README.md, analytical-unaware)");
      }
    }
    for (const auto& [k, keys] : short_lists) {
      int spanned = 1;
      for (size_t d = 0; d < k; ++d) spanned *= topology->dims[d].npus;
      result.warnings.push_back(
          o.system_config + ": " + keys + " list" +
          (keys.find(',') == std::string::npos ? "s " : " ") + std::to_string(k) + " algorithm" +
          (k > 1 ? "s" : "") + " for the network's " + std::to_string(dims) +
          " dimensions: as in ASTRA-sim, such a collective over all NPUs (no communicator group) "
          "runs over the first " +
          std::to_string(k) + " only (groups of " + std::to_string(spanned) + " of the " +
          std::to_string(n) + " NPUs); give one algorithm per dimension to span them all");
    }
  }
  {
    // The run's cost, from its inputs (runner/estimate.h), before anything grows with it.
    CostInputs in;
    in.topology = &*topology;
    in.net = &net_params;
    in.params = &*params;
    in.backend = o.backend;
    in.replay_only = system->replay_only;
    in.comm_slots = system->communication_slots;
    in.npu_trace = npu_trace;
    in.system_config = o.system_config;
    for (const auto& t : traces) in.loaded_bytes += t->MemoryBytes();
    in.group_size = [&](int npu, std::string_view pg) {
      const StatusOr<int> g = ParseGroup(pg);
      if (!g.ok()) return 0;
      const std::optional<int> id = placement ? placement->Lookup(*g, npu) : std::optional(*g);
      const std::vector<int>* m = id && *id != 0 ? system_layer.GroupMembers(*id) : nullptr;
      return m != nullptr ? static_cast<int>(m->size()) : 0;
    };
    result.estimate = EstimateRunCost(in);
    if (o.estimate_only) return result;
    if (Status within = CheckRunBudget(*result.estimate, o.budget); !within.ok()) return within;
  }
  RemoteMemory memory(sim, memory_config, n);
  // Only when it keeps something: the system layer makes a record for every phase and queue
  // change it reports (a sweep keeps neither).
  std::unique_ptr<PhaseRecorder> recorder;
  if (o.record && (o.record_chunk_phases || o.record_queue_lengths)) {
    recorder = std::make_unique<PhaseRecorder>(n, o.record_chunk_phases, o.record_queue_lengths,
                                               result.timeline_npus);
    system_layer.set_observer(recorder.get());
  }

  if (placement != nullptr) {
    const Placement* names = placement.get();
    system_layer.set_group_namer([names](int id) { return names->GroupName(id); });
  }
  WorkloadParams wp;
  wp.roofline_enabled = system->roofline_enabled;
  wp.roofline.peak_perf_flops = system->peak_perf_tflops * 1e12;
  wp.roofline.local_mem_bw_bytes_per_s = system->local_mem_bw_gbps * 1e9;
  wp.replay_only = system->replay_only;
  wp.compute_scale = o.compute_scale;
  wp.collective_launch_latency = Time::FromNsDouble(system->collective_launch_latency_ns);
  wp.protocol_efficiency = system->protocol_efficiency;
  wp.track_local_mem = system->track_local_mem;
  wp.comm_slots = system->communication_slots;
  wp.tuner = tuner.get();
  wp.placement = placement.get();
  wp.keep_activities = o.record;
  if (system->trace_enabled) wp.trace_nodes = o.node_trace;

  std::vector<std::unique_ptr<NpuExecutor>> executors;
  executors.reserve(n);
  // One copy of each rank's slot classes, however many NPUs run that rank.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> slot_classes(traces.size());
  for (int r = 0; r < n; ++r) {
    WorkloadParams npu_wp = wp;
    npu_wp.compute_scale = o.compute_scale * (*npu_scales)[r];
    const int t = trace_index[r];
    std::shared_ptr<const std::vector<uint8_t>>& classes = slot_classes[t];
    if (classes == nullptr) classes = NpuExecutor::SlotClassesOf(*traces[t]);
    executors.push_back(
        std::make_unique<NpuExecutor>(r, *traces[t], system_layer, &memory, npu_wp, classes));
  }
  if (o.progress) {
    uint64_t total = 0;
    for (int r = 0; r < n; ++r) total += npu_trace[r]->size();
    sim.SetTicker(
        [&sim, &executors, &o, total] {
          Progress p;
          p.now = sim.now();
          p.events = sim.events_processed();
          p.nodes_total = total;
          for (const auto& e : executors) p.nodes_done += e->stats().nodes_done;
          o.progress(p);
        },
        uint64_t{1} << 22);
  }
  if (o.record) net->RecordQueueDepths();
  for (auto& e : executors) e->Start();
  sim.Run();
  result.events = sim.events_processed();

  for (auto& e : executors) {
    if (!e->error().ok()) return e->error();
  }
  if (!net->error().ok()) return net->error();
  std::vector<int> stuck;  // NPUs that did not finish
  for (auto& e : executors) {
    if (!e->finished()) stuck.push_back(e->npu());
  }
  // Those held by a send or receive first: the others usually wait in collectives for them.
  std::stable_partition(stuck.begin(), stuck.end(),
                        [&](int npu) { return executors[npu]->WaitsOnPointToPoint(); });
  // What the first 8 unfinished NPUs were doing, `lines` lines each.
  auto describe_unfinished = [&](Status* s, int lines) {
    for (size_t i = 0; i < stuck.size(); ++i) {
      if (i == 8) {
        s->Add("... and " + std::to_string(stuck.size() - 8) + " more NPUs");
        break;
      }
      for (const auto& line : executors[stuck[i]]->DescribeStuck(lines)) s->Add("  " + line);
    }
  };
  if (sim.time_overflowed()) {
    Status s = Status::Error(
        "the run went past the end of simulated time (int64 picoseconds, about 106 days) after " +
        sim.now().ToHuman() +
        ": an input makes something take longer than that (look for a huge duration_micros, "
        "comm_size, tensor_size or latency, or a tiny bandwidth or peak-perf); what each NPU "
        "was running:");
    describe_unfinished(&s, 3);
    return s;
  }
  if (!stuck.empty()) {
    Status s = Status::Error("the simulation cannot finish: " + std::to_string(stuck.size()) +
                             " of " + std::to_string(n) + " NPUs are stuck at " +
                             sim.now().ToHuman() + " (nothing left to happen)");
    for (const auto& line : net->DescribeStuck(6)) s.Add("  " + line);
    describe_unfinished(&s, 6);
    // A collective some member never issued, before the messages left waiting because of it.
    for (const auto& line : system_layer.DescribeIncompleteCollectives(8)) s.Add("  " + line);
    for (const auto& line : system_layer.matcher().DescribePending(10)) s.Add("  " + line);
    return s;
  }
  // Every NPU finished, but a message was sent that no receive ever took: in ASTRA-sim the send
  // completes on arrival, so the trace would silently "work". It is a broken trace; say so.
  if (system_layer.matcher().unreceived_messages() > 0 ||
      system_layer.matcher().pending_receives() > 0) {
    // A collective some member never issued (a broadcast's root sent to it) comes first.
    const std::vector<std::string> incomplete = system_layer.DescribeIncompleteCollectives(8);
    Status s = Status::Error(
        incomplete.empty()
            ? "the simulation finished with unmatched point-to-point traffic: " +
                  std::to_string(system_layer.matcher().unreceived_messages()) +
                  " message(s) were sent that no NPU received (a COMM_RECV with the same "
                  "source, destination, tag and size is missing)"
            : std::string("the simulation finished, but not every member of a collective ran "
                          "it (its messages to the others were never received)"));
    for (const auto& line : incomplete) s.Add("  " + line);
    for (const auto& line : system_layer.matcher().DescribePending(10)) s.Add("  " + line);
    return s;
  }
  if (system->track_local_mem && o.job_alone < 0) {
    // ASTRA-sim's file per NPU: <local-mem-trace-filename>.<npu>.json.
    result.local_mem_tracked = true;
    for (auto& e : executors) {
      const std::string path =
          system->local_mem_trace_filename + "." + std::to_string(e->npu()) + ".json";
      Status written = e->memory_tracker()->WriteChromeTrace(path);
      if (!written.ok()) return written.WithContext(o.system_config);
    }
  }
  for (auto& e : executors) {
    result.npus.push_back(e->stats());
    if (e->memory_tracker())
      result.npus.back().peak_local_memory = e->memory_tracker()->PeakBytes();
    result.breakdown.push_back(e->breakdown());
    result.end = std::max(result.end, e->stats().finish);
  }
  for (std::string& w : net->Warnings(result.end)) result.warnings.push_back(std::move(w));
  for (JobResult& job : result.jobs) {
    for (int npu : job.npus) {
      const Time finish = executors[npu]->stats().finish;
      if (job.slowest_npu < 0 || finish > job.finish) {
        job.finish = finish;
        job.slowest_npu = npu;
      }
    }
  }
  if (!o.link_stats.empty()) {
    Status written = WriteLinkStats(o.link_stats, net->Links(), result.end);
    if (!written.ok()) return written;
  }
  if (tuner) result.nccl_choices = tuner->tuned();
  if (placement) {
    const std::vector<int> undefined = placement->UndefinedDataParallelGroups();
    for (int g : undefined) {
      result.warnings.push_back(
          "--dp-groups names communicator group " + std::to_string(g) +
          ", which neither --comm-group-configuration nor a METADATA node of the trace defines; "
          "no collective ran in it");
    }
    // A data-parallel group that is defined but that no node of the trace names (pg_name): the
    // copies then ran independently, which --dp-groups did not ask for.
    std::set<int> named;
    if (!placement->data_parallel().groups.empty()) {
      for (const std::unique_ptr<et::Trace>& t : traces) {
        if (!t) continue;
        for (uint32_t i = 0; i < t->size(); ++i) {
          const std::optional<std::string_view> pg = t->pg_name(i);
          if (!pg) continue;
          const StatusOr<int> g = ParseGroup(*pg);
          if (g.ok()) named.insert(*g);
        }
      }
    }
    for (int g : placement->data_parallel().groups) {
      if (named.count(g) != 0 ||
          std::find(undefined.begin(), undefined.end(), g) != undefined.end()) {
        continue;
      }
      result.warnings.push_back("--dp-groups names communicator group " + std::to_string(g) +
                                ", which no node of the trace names (pg_name); no collective ran "
                                "in it, so the copies ran independently there");
    }
  }
  result.links = net->Links();  // cheap: one entry per link (the summary shows the busiest)
  if (o.record) {
    if (recorder) recorder->Finish(npu_trace, result);
    result.port_queues = net->QueueDepths();
    result.activity.resize(n);
    // A send's or receive's peer as an NPU: with --replicate-trace, the rank in NPU r's copy.
    auto peer_npu = [&](int r, int64_t rank) {
      return placement ? placement->PeerNpu(r, rank) : static_cast<int>(rank);
    };
    std::vector<CriticalPathNpu> path_input(n);
    for (int r = 0; r < n; ++r) {
      path_input[r].activities = &executors[r]->activities();
      path_input[r].joins = &executors[r]->joins();
      path_input[r].point_to_point = &executors[r]->point_to_point();
      path_input[r].finish = executors[r]->stats().finish;
    }
    for (const PathSegment& seg : FindCriticalPath(path_input)) {
      const et::Trace& t = *npu_trace[seg.npu];
      CriticalPathStep step;
      step.npu = seg.npu;
      step.node_id = t.id(seg.node);
      step.name = std::string(t.name(seg.node));
      step.track = seg.track;
      step.type = t.type(seg.node);
      step.start = seg.start;
      step.end = seg.end;
      step.link = seg.link;
      if (seg.from_node != kNoNode) {
        step.from_npu = seg.from_npu;
        step.from_node_id = npu_trace[seg.from_npu]->id(seg.from_node);
      }
      result.critical_path.push_back(std::move(step));
    }
    for (int r = 0; r < n; ++r) {
      const et::Trace& t = *npu_trace[r];
      std::vector<NodeRecord>& out = result.activity[r];
      out.reserve(executors[r]->activities().size());
      // Bytes as simulated (after --comm-scale) and the NPUs each collective ran with.
      std::unordered_map<uint32_t, const CollectiveJoin*> join_of;
      for (const CollectiveJoin& j : executors[r]->joins()) join_of.emplace(j.node, &j);
      std::unordered_map<uint32_t, uint64_t> p2p_bytes;
      for (const PointToPoint& m : executors[r]->point_to_point()) p2p_bytes[m.node] = m.bytes;
      for (const Activity& a : executors[r]->activities()) {
        NodeRecord rec;
        rec.id = t.id(a.node);
        rec.name = std::string(t.name(a.node));
        rec.track = a.track;
        rec.start = a.start;
        rec.end = a.end;
        rec.type = t.type(a.node);
        switch (rec.type) {
          case et::NodeType::kCommColl:
            rec.collective = t.comm_type(a.node);
            if (auto pg = t.pg_name(a.node)) rec.group = std::string(*pg);
            if (auto j = join_of.find(a.node); j != join_of.end()) {
              rec.bytes = j->second->bytes;
              rec.group_size = j->second->members;
            } else {  // a host-side operator (is_cpu_op): CPU work, no collective ran
              rec.bytes = t.comm_size(a.node).value_or(0);
              rec.group_size = n;
              StatusOr<int> g = ParseGroup(rec.group);
              std::optional<int> id;
              if (g.ok()) id = placement ? placement->Lookup(*g, r) : std::optional<int>(*g);
              const std::vector<int>* members =
                  id && *id != 0 ? system_layer.GroupMembers(*id) : nullptr;
              if (members != nullptr) rec.group_size = static_cast<int>(members->size());
            }
            break;
          case et::NodeType::kCommSend:
          case et::NodeType::kCommRecv: {
            const bool send = rec.type == et::NodeType::kCommSend;
            auto b = p2p_bytes.find(a.node);
            rec.bytes = b != p2p_bytes.end() ? b->second : t.comm_size(a.node).value_or(0);
            rec.peer = peer_npu(r, (send ? t.comm_dst(a.node) : t.comm_src(a.node)).value_or(-1));
            break;
          }
          case et::NodeType::kMemLoad:
          case et::NodeType::kMemStore:
          case et::NodeType::kComp:
            rec.bytes = t.tensor_size(a.node).value_or(0);
            break;
          default:
            break;
        }
        out.push_back(std::move(rec));
      }
    }
  }
  return result;
}

Status AddJobsAlone(const RunOptions& o, RunResult* result) {
  for (size_t j = 0; j < result->jobs.size(); ++j) {
    RunOptions alone = o;
    alone.job_alone = static_cast<int>(j);
    alone.record = false;
    alone.link_stats.clear();
    alone.progress = nullptr;
    StatusOr<RunResult> r = RunSimulation(alone);
    if (!r.ok()) {
      return r.status().WithContext("--jobs-alone: job '" + result->jobs[j].name + "' alone");
    }
    result->jobs[j].alone = r->jobs.at(0).finish;
  }
  return Status::Ok();
}

Status WriteLinkStats(const std::string& path, std::vector<LinkStats> links, Time end) {
  std::stable_sort(links.begin(), links.end(), [](const LinkStats& a, const LinkStats& b) {
    return a.busy != b.busy ? a.busy > b.busy : a.name < b.name;
  });
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::Error("--link-stats " + path + ": cannot create the file");
  // Backends with output queues (packet) add port columns after the common ones.
  bool ports = false;
  for (const LinkStats& l : links) ports = ports || l.port.has_value();
  std::fprintf(f, "rank,link,bytes,busy_ns,utilisation%s\n",
               ports ? ",max_queue_bytes,mean_queue_bytes,pause_ns,drops" : "");
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkStats& l = links[i];
    const double util = end.ps() > 0 ? static_cast<double>(l.busy.ps()) / end.ps() : 0.0;
    std::fprintf(f, "%zu,%s,%llu,%.3f,%.6f", i + 1, l.name.c_str(),
                 static_cast<unsigned long long>(l.bytes), l.busy.Ns(), util);
    if (ports) {
      const LinkStats::Port p = l.port.value_or(LinkStats::Port());
      std::fprintf(f, ",%llu,%.3f,%.3f,%llu", static_cast<unsigned long long>(p.max_queue_bytes),
                   p.mean_queue_bytes, p.paused.Ns(), static_cast<unsigned long long>(p.drops));
    }
    std::fprintf(f, "\n");
  }
  if (std::fclose(f) != 0) return Status::Error("--link-stats " + path + ": write failed");
  return Status::Ok();
}

}  // namespace orrery
