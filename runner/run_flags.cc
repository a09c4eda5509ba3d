#include "runner/run_flags.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>

#include "runner/estimate.h"
#include "workload/placement.h"

namespace orrery {

namespace {

using F = RunFlags;

// The inputs: ASTRA-sim 2.0's flags, spelled the same, and Orrery's.
void DeclareInputs(FlagSchema<F>& s) {
  s.String("workload-configuration", &F::workload)
      .Help("trace prefix: NPU r reads <prefix>.<r>.et");
  s.String("system-configuration", &F::system_config)
      .Help("system config (JSON or YAML; keys in configs/README.md)");
  s.String("network-configuration", &F::network_config).Help("network config (YAML)");
  s.String("remote-memory-configuration", &F::memory_config)
      .Help("remote memory config (JSON or YAML); none = NO_MEMORY_EXPANSION");
  s.String("comm-group-configuration", &F::comm_group_config)
      .Help(
          "communicator groups JSON {\"<id>\": [npus...]}; 'empty' means none; another path "
          "containing 'empty' is none only if no such file exists (ASTRA-sim ignores them all)");
  s.String("jobs", &F::jobs)
      .Help(
          "a jobs file (YAML) in place of --workload-configuration: several traces sharing the "
          "machine, each on its own NPUs (a list of jobs with 'workload', and optionally "
          "'name', 'npus' and 'comm-groups'); the summary gives each job's step time");
  s.Switch("jobs-alone", &F::jobs_alone)
      .Help(
          "with --jobs, also run each job alone on its NPUs (the other jobs removed) and give "
          "what sharing the machine costs it");
  s.Switch("replicate-trace", &F::replicate_trace)
      .Help(
          "run the trace's N rank files on the network's K*N NPUs as K copies: NPU r runs rank "
          "r % N of copy r / N; sends, receives and groups stay inside a copy, data-parallel "
          "groups (--dp-groups) span every copy");
  s.String("dp-groups", &F::dp_groups)
      .Help(
          "with --replicate-trace, the communicator groups that span every copy: 'world' (the "
          "default: the collectives without a pg_name), 'none' (K independent jobs), or a list "
          "of pg ids with or without 'world', e.g. world,2,3");
}

// How the machine runs.
void DeclareModel(FlagSchema<F>& s) {
  s.NumberList("num-queues-per-dim", &F::queues_per_dim)
      .Integral()
      .Min(1)
      .Max(1024)
      .Default("1")
      .Help("queues per network dimension: one number for all, or one per dimension");
  s.Number("injection-scale", &F::injection_scale)
      .Min(0)
      .Max(1e6)
      .Help("multiplies endpoint-delay (when the system config sets it)");
  s.Number("compute-scale", &F::compute_scale)
      .Greater(0)
      .Max(1e6)
      .Help("multiplies every compute duration");
  s.String("npu-compute-scale", &F::npu_compute_scale)
      .Help(
          "per-NPU compute factors on top of --compute-scale, e.g. 3:1.5,8-15:0.5 "
          "(stragglers, heterogeneous machines)");
  s.Number("comm-scale", &F::comm_scale)
      .Greater(0)
      .Max(1e6)
      .Help("multiplies every communication size");
  s.Bool("rendezvous-protocol", &F::rendezvous)
      .Help("handshake of 8192 B before each message (ASTRA-sim's rendezvous); given bare: true");
  s.Implicit("rendezvous-protocol", "true");
  s.Enum("network-backend", &F::backend,
         {{"analytical-aware", Backend::kAnalyticalAware},
          {"analytical-unaware", Backend::kAnalyticalUnaware},
          {"packet", Backend::kPacket}})
      .Help("the network model (docs/packet-backend.md)");
  s.String("nccl-model", &F::nccl_model)
      .Help(
          "NCCL model (a machine profile's nccl.yaml) choosing every collective's algorithm and "
          "protocol, in place of the system config's 'nccl-model'");
  s.String("nccl-algorithm", &F::nccl_algorithm)
      .Help(
          "with an NCCL model, run all-reduce, reduce-scatter and all-gather with these "
          "algorithms only (ring, tree, nvls, nvlstree), as NCCL_ALGO: one, a comma list, or ^ "
          "before it for all but (^nvls); other collectives and the protocol are still chosen");
  s.String("nccl-protocol", &F::nccl_protocol)
      .Help(
          "with an NCCL model, these protocols only (LL, LL128, Simple), as NCCL_PROTO: one, a "
          "comma list, or ^ before it for all but");
  s.Switch("strict", &F::strict).Help("dependencies on nodes missing from a trace are errors");
  s.Switch("exact", &F::exact)
      .Help(
          "simulate every NPU: no shortcut (by default NPUs whose timelines a symmetry of the "
          "run makes identical, such as data-parallel copies on a symmetric network, are "
          "simulated once per orbit; the results are the same)");
}

// What the run writes, and how it is guarded.
void DeclareOutputs(FlagSchema<F>& s) {
  s.String("link-stats", &F::link_stats)
      .Help("write per-link bytes, busy time and utilisation to this CSV file, most loaded first");
  s.String("timeline", &F::timeline)
      .Help("write a Chrome/Perfetto trace (JSON) of every NPU's nodes to this file");
  s.String("timeline-chakra", &F::timeline_chakra)
      .Help(
          "write ASTRA-sim's issue/callback lines (Chakra timeline_visualizer input) to this "
          "file");
  s.String("timeline-npus", &F::timeline_npus)
      .Help(
          "the NPUs the timelines show, ids and ranges, e.g. 0-7,64 (none = all); for large "
          "runs");
  s.Enum("timeline-chunks", &F::timeline_chunks, {"on", "off"})
      .Help(
          "on: --timeline shows every collective's chunk phases in lanes of their own; off: "
          "leaves them out (and does not keep them), for large runs");
  s.String("report", &F::report)
      .Help(
          "write the per-NPU breakdown, per-collective and per-link statistics (JSON) to this "
          "file");
  s.String("report-csv", &F::report_csv)
      .Help(
          "write the report as <prefix>.npus.csv, <prefix>.collectives.csv, "
          "<prefix>.links.csv, <prefix>.queues.csv, <prefix>.critical_path.csv");
  s.Switch("dry-run", &F::dry_run)
      .Help(
          "load the inputs, print the run's estimated cost (chunks, messages, events, memory, "
          "wall time) and stop without running it");
  s.String("max-memory", &F::max_memory)
      .Unit("bytes")
      .Help(
          "the memory a run may be estimated to need, e.g. 16G (none: the machine's available "
          "memory, at most 4 GiB); past it the run stops before it starts");
  s.Switch("force", &F::force).Help("run even when the estimated wall time is over an hour");
  s.String("log-level", &F::log_level)
      .Check([](const std::string& v) {
        return spdlog::level::from_str(v) != spdlog::level::off || v == "off"
                   ? ""
                   : "one of trace, debug, info, warn, error, off";
      })
      .AllowedText("trace, debug, info, warn, error, off")
      .Help("diagnostics shown");
  s.String("log-file", &F::log_file).Help("also write diagnostics to this file");
  s.String("logging-configuration", &F::logging_configuration)
      .Help("accepted for ASTRA-sim compatibility; not used");
  s.String("logging-folder", &F::logging_folder)
      .Help("accepted for ASTRA-sim compatibility; not used");
}

// What the run writes: timelines and reports need per-node activity kept.
Status SetOutputs(const RunFlags& f, RunOptions* o) {
  for (const auto& [flag, path] :
       {std::pair<const char*, const std::string&>{"timeline", f.timeline},
        {"timeline-chakra", f.timeline_chakra},
        {"report", f.report},
        {"report-csv", f.report_csv},
        {"link-stats", f.link_stats}}) {
    if (path.empty()) continue;
    const std::string problem = OutputPathProblem(flag, path, std::string(flag) == "report-csv");
    if (!problem.empty()) return Status::Error(problem);
  }
  if (!f.timeline_npus.empty() && f.timeline.empty() && f.timeline_chakra.empty()) {
    return Status::Error("--timeline-npus '" + f.timeline_npus +
                         "' selects NPUs for a timeline, but no --timeline or --timeline-chakra "
                         "is given");
  }
  if (f.timeline_chunks == "off" && f.timeline.empty()) {
    return Status::Error(
        "--timeline-chunks off leaves chunk lanes out of a --timeline, but none is given");
  }
  o->record = !f.timeline.empty() || !f.timeline_chakra.empty() || !f.report.empty() ||
              !f.report_csv.empty();
  // Only the Chrome trace shows them.
  o->record_chunk_phases = !f.timeline.empty() && f.timeline_chunks == "on";
  o->record_queue_lengths = !f.timeline.empty() || !f.report.empty() || !f.report_csv.empty();
  o->timeline_npus = f.timeline_npus;
  o->link_stats = f.link_stats;
  return Status::Ok();
}

}  // namespace

const FlagSchema<RunFlags>& RunFlagSchema() {
  static const FlagSchema<RunFlags>* schema = [] {
    auto* s = new FlagSchema<RunFlags>();
    DeclareInputs(*s);
    DeclareModel(*s);
    DeclareOutputs(*s);
    return s;
  }();
  return *schema;
}

const FlagSchema<RunCommandFlags>& RunCommandFlagSchema() {
  static const FlagSchema<RunCommandFlags>* schema = [] {
    auto* s = new FlagSchema<RunCommandFlags>();
    s->Switch("print-config", &RunCommandFlags::print_config)
        .Help(
            "print the run's effective configuration (flags, system, network, memory, NCCL "
            "model) as one YAML document and stop without running it (docs/cli.md)");
    s->String("config", &RunCommandFlags::config)
        .Help(
            "run the configuration --print-config printed (flags given as well override its "
            "flags)");
    return s;
  }();
  return *schema;
}

StatusOr<RunOptions> RunOptionsFromFlags(const RunFlags& f, const std::set<std::string>& given) {
  if (f.jobs_alone && f.jobs.empty()) {
    return Status::Error(
        "--jobs-alone applies only with --jobs (it runs each job of the jobs file alone)");
  }
  if (given.count("dp-groups") && f.dp_groups.find_first_not_of(" \t") == std::string::npos) {
    return Status::Error("--dp-groups is empty; expected " + DataParallelGroupsSyntax());
  }
  RunOptions o;
  o.workload = f.workload;
  o.system_config = f.system_config;
  o.network_config = f.network_config;
  o.memory_config = f.memory_config;
  o.comm_group_config = f.comm_group_config;
  o.backend = f.backend;
  for (double q : f.queues_per_dim) o.queues_per_dim.push_back(static_cast<int>(q));
  o.injection_scale = f.injection_scale;
  o.compute_scale = f.compute_scale;
  o.npu_compute_scale = f.npu_compute_scale;
  o.comm_scale = f.comm_scale;
  o.rendezvous = f.rendezvous;
  o.strict = f.strict;
  o.exact = f.exact;
  o.nccl_model = f.nccl_model;
  o.nccl_algorithm = f.nccl_algorithm;
  o.nccl_protocol = f.nccl_protocol;
  o.replicate_trace = f.replicate_trace;
  o.dp_groups = f.dp_groups;
  o.jobs = f.jobs;
  o.budget.force = f.force;
  o.estimate_only = f.dry_run;
  if (given.count("max-memory")) {  // an empty --max-memory= is refused, not ignored
    const Status set = SetMaxMemory(f.max_memory, "", &o.budget);
    if (!set.ok()) return set;
  }
  const Status outputs = SetOutputs(f, &o);
  if (!outputs.ok()) return outputs;
  return o;
}

std::string OutputPathProblem(const std::string& flag, const std::string& path, bool prefix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string what = "--" + flag + " '" + path + "'";
  if (fs::is_directory(path, ec) || path.back() == '/') {
    return what + " is a directory; expected a file" +
           (prefix ? " prefix (e.g. " + (fs::path(path) / "run").string() + " writes " +
                         (fs::path(path) / "run").string() + ".npus.csv, ...)"
                   : " path (e.g. " + (fs::path(path) / "out.json").string() + ")");
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) {
    return what + ": the directory '" + dir.string() + "' does not exist; create it first";
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return what + ": the directory '" + dir.string() + "' is not writable";
  }
  if (!prefix && fs::exists(path, ec) && access(path.c_str(), W_OK) != 0) {
    return what + ": the file exists and is not writable";
  }
  return "";
}

}  // namespace orrery
