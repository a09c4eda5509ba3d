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
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <set>
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
#include "runner/machine.h"
#include "runner/print_config.h"
#include "runner/run.h"
#include "runner/run_flags.h"
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

constexpr const char* kUsage =
    "usage: orrery --workload-configuration=PREFIX|--jobs=FILE --system-configuration=FILE "
    "--network-configuration=FILE [options]\n"
    "       orrery --config=FILE [options]   (a configuration --print-config printed)\n"
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
    "side)\n\n";

// The subcommand argv[1] names, or null.
using Command = int (*)(int, char**);
Command Subcommand(const std::string& name) {
  static const std::pair<const char*, Command> kCommands[] = {
      {"sweep", orrery::SweepMain},
      {"validate", orrery::ValidateMain},
      {"trace-info", orrery::et::TraceInfoMain},
      {"convert-text", orrery::et::ConvertTextMain},
      {"generate-llm", orrery::et::GenerateLlmMain},
      {"calibrate", orrery::CalibrateMain},
      {"import", orrery::profile::ImportMain},
      {"analyze", orrery::analyze::AnalyzeMain},
      {"compare", orrery::analyze::CompareMain},
  };
  for (const auto& [n, command] : kCommands) {
    if (name == n) return command;
  }
  return nullptr;
}

// --log-level and --log-file: "" when set, else what is wrong.
std::string SetUpLogging(const orrery::RunFlags& f) {
  Log().set_level(spdlog::level::from_str(f.log_level));
  if (f.log_file.empty()) return "";
  // As every other output: spdlog would create a missing directory (a typo's tree).
  const std::string problem = orrery::OutputPathProblem("log-file", f.log_file, false);
  if (!problem.empty()) return problem;
  try {
    auto file = std::make_shared<spdlog::sinks::basic_file_sink_st>(f.log_file, true);
    file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] %l: %v");
    Log().sinks().push_back(file);
  } catch (const spdlog::spdlog_ex& e) {
    return "--log-file '" + f.log_file + "': " + e.what();
  }
  return "";
}

// A progress line on long runs, only when a person is watching stderr.
std::function<void(const orrery::Progress&)> ProgressLine(
    std::chrono::steady_clock::time_point t0) {
  return [t0](const orrery::Progress& p) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double done = p.nodes_total > 0 ? static_cast<double>(p.nodes_done) / p.nodes_total : 0;
    // The time left if the nodes still to do go as fast as those done.
    const std::string eta =
        done > 0.01
            ? ", about " + orrery::Time::FromNsDouble(wall * (1 - done) / done * 1e9).ToHuman() +
                  " left"
            : "";
    std::fprintf(stderr,
                 "\r  simulated %s, %.1f M events, %.1f M events/s, %.1f%% of nodes done%s ",
                 p.now.ToHuman().c_str(), p.events / 1e6, wall > 0 ? p.events / wall / 1e6 : 0.0,
                 100.0 * done, eta.c_str());
    std::fflush(stderr);
  };
}

// Writes the output files, then prints each NPU's finish and the summary to stdout.
int WriteResults(const orrery::RunFlags& f, const orrery::RunResult& r) {
  // Files first: if one cannot be written, the run fails before printing results.
  struct Output {
    const std::string& path;
    orrery::Status (*write)(const orrery::RunResult&, const std::string&);
  };
  for (const Output& out :
       {Output{f.timeline, orrery::WriteChromeTrace},
        Output{f.timeline_chakra, orrery::WriteChakraTimeline},
        Output{f.report, orrery::WriteReportJson}, Output{f.report_csv, orrery::WriteReportCsv}}) {
    if (out.path.empty()) continue;
    const orrery::Status s = out.write(r, out.path);
    if (!s.ok()) return Fail(s.message());
  }
  std::string out;
  out.reserve(static_cast<size_t>(r.num_npus()) * 80);
  char line[160];
  for (int i = 0; i < r.num_npus(); ++i) {
    const auto& s = r.npus[i];
    std::snprintf(line, sizeof line,
                  "sys[%d] finished, %lld cycles, exposed communication %lld cycles.\n", i,
                  static_cast<long long>(s.finish.WholeNs()),
                  static_cast<long long>(s.exposed_communication().WholeNs()));
    out += line;
  }
  if (r.local_mem_tracked) {
    for (int i = 0; i < r.num_npus(); ++i) {
      std::snprintf(line, sizeof line, "sys[%d] peak memory usage: %s\n", i,
                    orrery::FormatMemory(r.npus[i].peak_local_memory).c_str());
      out += line;
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fputs(orrery::SummaryTable(r).c_str(), stdout);
  return 0;
}

// Runs the simulation `o` describes and reports it.
int Simulate(const orrery::RunFlags& f, orrery::RunOptions o) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool tty = isatty(STDERR_FILENO) != 0 && Log().should_log(spdlog::level::info);
  if (tty) o.progress = ProgressLine(t0);
  o.node_trace = [](const std::string& line) { Log().info("{}", line); };
  orrery::StatusOr<orrery::RunResult> r = orrery::RunSimulation(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tty && r.ok() && r->events >= (uint64_t{1} << 22)) std::fprintf(stderr, "\n");
  if (!r.ok()) return Fail(r.status().message());
  if (f.dry_run) {
    std::fputs(orrery::DescribeRunCost(*r->estimate).c_str(), stdout);
    return 0;
  }
  if (f.jobs_alone) {
    const orrery::Status s = orrery::AddJobsAlone(o, &*r);
    if (!s.ok()) return Fail(s.message());
  }
  for (const auto& w : r->warnings) Log().warn("{}", w);
  for (const auto& note : r->shortcut_notes) Log().info("{}", note);
  if (!r->shortcut.empty()) Log().info("{}", r->shortcut);
  const int rc = WriteResults(f, *r);
  if (rc != 0) return rc;
  // Wall time goes to stderr so that stdout is bit-for-bit reproducible.
  Log().info("{} events in {:.3f} s of wall time ({:.2f} M events/s)", r->events, wall,
             wall > 0 ? static_cast<double>(r->events) / wall / 1e6 : 0.0);
  return 0;
}

// --print-config: the inputs are checked as a run checks them, then printed.
int PrintConfigAndStop(const orrery::RunFlags& f, const orrery::RunOptions& o) {
  orrery::StatusOr<orrery::Machine> machine = orrery::LoadMachine(o);
  if (!machine.ok()) return Fail(machine.status().message());
  orrery::StatusOr<std::string> text = orrery::PrintConfig(f, o);
  if (!text.ok()) return Fail(text.status().message());
  std::fputs(text->c_str(), stdout);
  return 0;
}

int Main(int argc, char** argv) {
  if (argc >= 2) {
    if (const Command command = Subcommand(argv[1])) return command(argc - 1, argv + 1);
  }
  po::options_description desc("orrery options (ASTRA-sim 2.0 flags, plus Orrery's)");
  desc.add_options()("help,h", "print this help")("version", "print the version");
  orrery::RunCommandFlagSchema().AddTo(&desc);
  orrery::RunFlagSchema().AddTo(&desc);
  po::variables_map vm;
  try {
    po::store(orrery::ParseFlags(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail(std::string(e.what()) + " (see --help)");
  }
  if (vm.count("help")) {
    std::cout << kVersion << "\n\n" << kUsage << desc << "\n";
    return 0;
  }
  if (vm.count("version")) {
    std::cout << kVersion << "\n";
    return 0;
  }
  orrery::RunCommandFlags command;
  orrery::RunFlags f;
  std::set<std::string> given;
  orrery::ConfigSections sections;
  orrery::Status problems = orrery::RunCommandFlagSchema().Apply(vm, &command);
  if (problems.ok() && !command.config.empty()) {
    problems = orrery::ReadPrintedConfig(command.config, &f, &given, &sections);
  }
  if (problems.ok()) problems = orrery::RunFlagSchema().Apply(vm, &f, &given);
  if (!problems.ok()) return Fail(problems.message());
  if (const std::string bad = SetUpLogging(f); !bad.empty()) return Fail(bad);
  orrery::StatusOr<orrery::RunOptions> o = orrery::RunOptionsFromFlags(f, given);
  if (!o.ok()) return Fail(o.status().message());
  if (!command.config.empty()) {
    const orrery::Status used = orrery::UsePrintedSections(sections, &*o);
    if (!used.ok()) return Fail(used.message());
  }
  if (command.print_config) return PrintConfigAndStop(f, *o);
  return Simulate(f, std::move(o).value());
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
