// orrery: simulate a distributed training step from Chakra traces.
//
//   orrery --workload-configuration=examples/all_reduce/all_reduce
//          --system-configuration=system.json --network-configuration=network.yml
//          [--remote-memory-configuration=memory.json] [--network-backend=packet]
//
// Flags are ASTRA-sim 2.0's, spelled the same; `--flag=value` and `--flag value` both work.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "analyze/analyze_main.h"
#include "analyze/compare.h"
#include "common/flags.h"
#include "common/status.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/text_workload.h"
#include "et_feeder/trace_info.h"
#include "profile/import_main.h"
#include "report/outputs.h"
#include "runner/run.h"
#include "sweep/sweep.h"
#include "validate/calibrate.h"
#include "validate/validate.h"
#include "workload/placement.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kVersion = "orrery 0.1";

// Diagnostics go to stderr as "error: ..." / "warning: ..." lines (and to --log-file when
// given); stdout holds only results.
std::shared_ptr<spdlog::logger>& Logger() {
  static std::shared_ptr<spdlog::logger> log = [] {
    auto l = spdlog::stderr_logger_st("orrery");
    l->set_pattern("%l: %v");
    return l;
  }();
  return log;
}
spdlog::logger& Log() { return *Logger(); }

int Fail(const std::string& message) {
  Log().error("{}", message);
  return 1;
}

// Whether an output flag's file (or, with `prefix`, the files <path>.*.csv) can be written,
// checked before the run so that a typo does not cost a whole simulation: "" when it can, else
// what is wrong.
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

}  // namespace

namespace {

int Main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "sweep") return orrery::SweepMain(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "validate") {
    return orrery::ValidateMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "trace-info") {
    return orrery::et::TraceInfoMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "convert-text") {
    return orrery::et::ConvertTextMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "generate-llm") {
    return orrery::et::GenerateLlmMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "calibrate") {
    return orrery::CalibrateMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "import") {
    return orrery::profile::ImportMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "analyze") {
    return orrery::analyze::AnalyzeMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::string(argv[1]) == "compare") {
    return orrery::analyze::CompareMain(argc - 1, argv + 1);
  }
  orrery::RunOptions o;
  std::string backend = "analytical-aware";
  std::string queues = "1";
  std::string logging_config, logging_folder;
  std::string timeline, timeline_chakra, report, report_csv, log_level = "info", log_file;
  bool rendezvous = false;
  bool jobs_alone = false;
  po::options_description desc("orrery options (ASTRA-sim 2.0 flags, plus Orrery's)");
  desc.add_options()("help,h", "print this help")("version", "print the version")(
      "workload-configuration", po::value(&o.workload),
      "trace prefix: NPU r reads <prefix>.<r>.et")(
      "system-configuration", po::value(&o.system_config), "system config (JSON or YAML)")(
      "network-configuration", po::value(&o.network_config), "network config (YAML)")(
      "remote-memory-configuration", po::value(&o.memory_config),
      "remote memory config (JSON or YAML); default NO_MEMORY_EXPANSION")(
      "comm-group-configuration", po::value(&o.comm_group_config)->default_value("empty"),
      "communicator groups JSON {\"<id>\": [npus...]}; 'empty' (the default) means none; another "
      "path containing 'empty' is none only if no such file exists (ASTRA-sim ignores them all)")(
      "num-queues-per-dim", po::value(&queues)->default_value("1"),
      "queues per network dimension: one number for all, or a comma list")(
      "injection-scale", po::value(&o.injection_scale)->default_value(1.0),
      "multiplies endpoint-delay (when the system config sets it)")(
      "compute-scale", po::value(&o.compute_scale)->default_value(1.0),
      "multiplies every compute duration")(
      "npu-compute-scale", po::value(&o.npu_compute_scale),
      "per-NPU compute factors on top of --compute-scale, e.g. 3:1.5,8-15:0.5 (stragglers, "
      "heterogeneous machines)")("comm-scale", po::value(&o.comm_scale)->default_value(1.0),
                                 "multiplies every communication size")(
      "rendezvous-protocol", po::value(&rendezvous)->implicit_value(true)->default_value(false),
      "handshake of 8192 B before each message (ASTRA-sim's rendezvous)")(
      "network-backend", po::value(&backend)->default_value("analytical-aware"),
      "analytical-aware | analytical-unaware | packet")(
      "nccl-model", po::value(&o.nccl_model),
      "NCCL model (a machine profile's nccl.yaml) choosing every collective's algorithm and "
      "protocol, in place of the system config's 'nccl-model'")(
      "nccl-algorithm", po::value(&o.nccl_algorithm),
      "with an NCCL model, run all-reduce, reduce-scatter and all-gather with these "
      "algorithms only (ring, tree, nvls, nvlstree), as NCCL_ALGO: one, a comma list, or ^ "
      "before it for all but (^nvls); other collectives and the protocol are still chosen")(
      "nccl-protocol", po::value(&o.nccl_protocol),
      "with an NCCL model, these protocols only (LL, LL128, Simple), as NCCL_PROTO: one, a comma "
      "list, or ^ before it for all but")(
      "link-stats", po::value(&o.link_stats),
      "write per-link bytes, busy time and utilisation to this CSV file, most loaded first")(
      "strict", po::bool_switch(&o.strict),
      "dependencies on nodes missing from a trace are errors")(
      "replicate-trace", po::bool_switch(&o.replicate_trace),
      "run the trace's N rank files on the network's K*N NPUs as K copies: NPU r runs rank "
      "r % N of copy r / N; sends, receives and groups stay inside a copy, data-parallel groups "
      "(--dp-groups) span every copy")(
      "dp-groups", po::value(&o.dp_groups),
      "with --replicate-trace, the communicator groups that span every copy: 'world' (the "
      "default: the collectives without a pg_name), 'none' (K independent jobs), or a list of "
      "pg ids with or without 'world', e.g. world,2,3")(
      "jobs", po::value(&o.jobs),
      "a jobs file (YAML) in place of --workload-configuration: several traces sharing the "
      "machine, each on its own NPUs (a list of jobs with 'workload', and optionally 'name', "
      "'npus' and 'comm-groups'); the summary gives each job's step time")(
      "jobs-alone", po::bool_switch(&jobs_alone),
      "with --jobs, also run each job alone on its NPUs (the other jobs removed) and give what "
      "sharing the machine costs it")(
      "timeline", po::value(&timeline),
      "write a Chrome/Perfetto trace (JSON) of every NPU's nodes to this file")(
      "timeline-chakra", po::value(&timeline_chakra),
      "write ASTRA-sim's issue/callback lines (Chakra timeline_visualizer input) to this file")(
      "timeline-npus", po::value(&o.timeline_npus),
      "the NPUs the timelines show, ids and ranges, e.g. 0-7,64 (default: all); for large runs")(
      "report", po::value(&report),
      "write the per-NPU breakdown, per-collective and per-link statistics (JSON) to this file")(
      "report-csv", po::value(&report_csv),
      "write the report as <prefix>.npus.csv, <prefix>.collectives.csv, <prefix>.links.csv, "
      "<prefix>.queues.csv, <prefix>.critical_path.csv")(
      "log-level", po::value(&log_level)->default_value("info"),
      "diagnostics shown: trace, debug, info, warn, error, off")(
      "log-file", po::value(&log_file), "also write diagnostics to this file")(
      "logging-configuration", po::value(&logging_config),
      "accepted for ASTRA-sim compatibility; not used")(
      "logging-folder", po::value(&logging_folder),
      "accepted for ASTRA-sim compatibility; not used");

  po::variables_map vm;
  try {
    po::store(orrery::ParseFlags(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail(std::string(e.what()) + " (see --help)");
  }
  if (vm.count("help")) {
    std::cout
        << kVersion << "\n\n"
        << "usage: orrery --workload-configuration=PREFIX|--jobs=FILE --system-configuration=FILE "
           "--network-configuration=FILE [options]\n"
           "       orrery sweep|validate|calibrate --help   (parameter sweeps; NCCL "
           "validation and calibration)\n"
           "       orrery convert-text --help   (ASTRA-sim 1.0 text workloads to Chakra ET "
           "files)\n"
           "       orrery trace-info PATH [--json FILE]   (what a Chakra trace holds)\n"
           "       orrery generate-llm --help   (a GPT or Llama training step with data, tensor "
           "and pipeline parallelism, as Chakra ET files)\n"
           "       orrery import --help    (PyTorch profiles to Chakra ET files)\n"
           "       orrery analyze --help   (where a measured or simulated run's GPU time went)\n"
           "       orrery compare MEASURED.json SIMULATED.json   (two analyze reports side by "
           "side)\n\n"
        << desc << "\n";
    return 0;
  }
  if (vm.count("version")) {
    std::cout << kVersion << "\n";
    return 0;
  }
  if (jobs_alone && o.jobs.empty()) {
    return Fail("--jobs-alone applies only with --jobs (it runs each job of the jobs file alone)");
  }
  if (vm.count("dp-groups") && o.dp_groups.find_first_not_of(" \t") == std::string::npos) {
    return Fail("--dp-groups is empty; expected " + orrery::DataParallelGroupsSyntax());
  }
  {
    const spdlog::level::level_enum level = spdlog::level::from_str(log_level);
    if (level == spdlog::level::off && log_level != "off") {
      return Fail("--log-level is '" + log_level +
                  "'; expected one of trace, debug, info, warn, error, off");
    }
    Log().set_level(level);
    if (!log_file.empty()) {
      // As every other output: spdlog would create a missing directory (a typo's tree).
      const std::string problem = OutputPathProblem("log-file", log_file, false);
      if (!problem.empty()) return Fail(problem);
      try {
        auto file = std::make_shared<spdlog::sinks::basic_file_sink_st>(log_file, true);
        file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] %l: %v");
        Log().sinks().push_back(file);
      } catch (const spdlog::spdlog_ex& e) {
        return Fail("--log-file '" + log_file + "': " + e.what());
      }
    }
  }
  orrery::StatusOr<orrery::Backend> b = orrery::ParseBackend(backend);
  if (!b.ok()) return Fail("--network-backend: " + b.status().message());
  o.backend = *b;
  o.rendezvous = rendezvous;
  // Comma-separated; every item is a number, the empty one after a trailing comma too.
  for (size_t begin = 0;;) {
    const size_t comma = queues.find(',', begin);
    const std::string item = queues.substr(begin, comma - begin);
    try {
      size_t used = 0;
      const int q = std::stoi(item, &used);
      if (used != item.size() || q < 1 || q > 1024) throw std::invalid_argument(item);
      o.queues_per_dim.push_back(q);
    } catch (const std::exception&) {
      return Fail("--num-queues-per-dim is '" + queues +
                  "'; expected a number from 1 to 1024 or a comma-separated list of them");
    }
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }

  for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"timeline", timeline},
                                   {"timeline-chakra", timeline_chakra},
                                   {"report", report},
                                   {"report-csv", report_csv},
                                   {"link-stats", o.link_stats}}) {
    if (path.empty()) continue;
    const std::string problem = OutputPathProblem(flag, path, std::string(flag) == "report-csv");
    if (!problem.empty()) return Fail(problem);
  }
  if (!o.timeline_npus.empty() && timeline.empty() && timeline_chakra.empty()) {
    return Fail("--timeline-npus '" + o.timeline_npus +
                "' selects NPUs for a timeline, but no --timeline or --timeline-chakra is given");
  }
  o.record =
      !timeline.empty() || !timeline_chakra.empty() || !report.empty() || !report_csv.empty();
  o.record_chunk_phases = !timeline.empty();  // only the Chrome trace shows them
  o.record_queue_lengths = !timeline.empty() || !report.empty() || !report_csv.empty();
  const auto t0 = std::chrono::steady_clock::now();
  // A progress line on long runs, only when a person is watching stderr.
  const bool tty = isatty(STDERR_FILENO) != 0 && Log().should_log(spdlog::level::info);
  if (tty) {
    o.progress = [t0](const orrery::Progress& p) {
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr,
                   "\r  simulated %s, %.1f M events, %.1f M events/s, %.1f%% of nodes done ",
                   p.now.ToHuman().c_str(), p.events / 1e6, wall > 0 ? p.events / wall / 1e6 : 0.0,
                   p.nodes_total > 0 ? 100.0 * p.nodes_done / p.nodes_total : 0.0);
      std::fflush(stderr);
    };
  }
  o.node_trace = [](const std::string& line) { Log().info("{}", line); };
  orrery::StatusOr<orrery::RunResult> r = orrery::RunSimulation(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tty && r.ok() && r->events >= (uint64_t{1} << 22)) std::fprintf(stderr, "\n");
  if (!r.ok()) return Fail(r.status().message());
  if (jobs_alone) {
    const orrery::Status s = orrery::AddJobsAlone(o, &*r);
    if (!s.ok()) return Fail(s.message());
  }
  for (const auto& w : r->warnings) Log().warn("{}", w);
  // Files first: if one cannot be written, the run fails before printing results.
  struct Output {
    const std::string& path;
    orrery::Status (*write)(const orrery::RunResult&, const std::string&);
  };
  for (const Output& out :
       {Output{timeline, orrery::WriteChromeTrace},
        Output{timeline_chakra, orrery::WriteChakraTimeline},
        Output{report, orrery::WriteReportJson}, Output{report_csv, orrery::WriteReportCsv}}) {
    if (out.path.empty()) continue;
    const orrery::Status s = out.write(*r, out.path);
    if (!s.ok()) return Fail(s.message());
  }
  std::string out;
  out.reserve(static_cast<size_t>(r->num_npus()) * 80);
  char line[160];
  for (int i = 0; i < r->num_npus(); ++i) {
    const auto& s = r->npus[i];
    std::snprintf(line, sizeof line,
                  "sys[%d] finished, %lld cycles, exposed communication %lld cycles.\n", i,
                  static_cast<long long>(s.finish.WholeNs()),
                  static_cast<long long>(s.exposed_communication().WholeNs()));
    out += line;
  }
  if (r->local_mem_tracked) {
    for (int i = 0; i < r->num_npus(); ++i) {
      std::snprintf(line, sizeof line, "sys[%d] peak memory usage: %s\n", i,
                    orrery::FormatMemory(r->npus[i].peak_local_memory).c_str());
      out += line;
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fputs(orrery::SummaryTable(*r).c_str(), stdout);
  // Wall time goes to stderr so that stdout is bit-for-bit reproducible.
  Log().info("{} events in {:.3f} s of wall time ({:.2f} M events/s)", r->events, wall,
             wall > 0 ? static_cast<double>(r->events) / wall / 1e6 : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rc = 1;
  try {
    rc = Main(argc, argv);
  } catch (const std::bad_alloc&) {
    // A machine or trace larger than the memory this process may use (a million NPUs need
    // gigabytes): said, not an abort.
    std::fprintf(stderr, "error: %s\n", orrery::kOutOfMemory);
    return 1;
  }
  // Results printed to a full disk or a closed pipe are lost: that is a failure, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "error: writing the results to standard output failed: %s\n",
                 std::strerror(errno));
    return rc != 0 ? rc : 1;
  }
  return rc;
}
