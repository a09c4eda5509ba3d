// orrery: simulate a distributed training step from Chakra traces.
//
//   orrery --workload-configuration=examples/all_reduce/all_reduce
//          --system-configuration=system.json --network-configuration=network.yml
//          [--remote-memory-configuration=memory.json] [--network-backend=analytical-aware]
//
// Flags are ASTRA-sim 2.0's, spelled the same; `--flag=value` and `--flag value` both work.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/status.h"
#include "runner/run.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kVersion = "orrery 0.1";

// Diagnostics go to stderr as "error: ..." / "warning: ..." lines; stdout holds only results.
spdlog::logger& Log() {
  static std::shared_ptr<spdlog::logger> log = [] {
    auto l = spdlog::stderr_logger_st("orrery");
    l->set_pattern("%l: %v");
    return l;
  }();
  return *log;
}

int Fail(const std::string& message) {
  Log().error("{}", message);
  return 1;
}

std::vector<std::string> OptionNames(const po::options_description& d) {
  std::vector<std::string> names;
  for (const auto& o : d.options()) names.push_back("--" + o->long_name());
  return names;
}

void PrintSummary(const orrery::RunResult& r, double wall_s) {
  using orrery::Time;
  const int n = r.num_npus();
  int slowest = 0;
  Time compute, comm, exposed;
  for (int i = 0; i < n; ++i) {
    if (r.npus[i].finish > r.npus[slowest].finish) slowest = i;
    compute += r.npus[i].gpu_compute + r.npus[i].cpu_compute;
    comm += r.npus[i].communication;
    exposed += r.npus[i].exposed_communication();
  }
  auto avg = [n](Time t) { return Time::FromPs(t.ps() / (n > 0 ? n : 1)).ToHuman(); };
  std::printf("\nsummary: %d NPUs, step time %s (slowest: NPU %d)\n", n, r.end.ToHuman().c_str(),
              slowest);
  std::printf("  per NPU (mean)   compute %s | communication %s | exposed communication %s\n",
              avg(compute).c_str(), avg(comm).c_str(), avg(exposed).c_str());
  // Wall time goes to stderr so that stdout is bit-for-bit reproducible.
  std::fprintf(stderr, "%llu events in %.3f s of wall time (%.2f M events/s)\n",
               static_cast<unsigned long long>(r.events), wall_s,
               wall_s > 0 ? static_cast<double>(r.events) / wall_s / 1e6 : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  orrery::RunOptions o;
  std::string backend = "analytical-aware";
  std::string queues = "1";
  std::string logging_config, logging_folder;
  bool rendezvous = false;
  po::options_description desc("orrery options (ASTRA-sim 2.0 flags, plus Orrery's)");
  desc.add_options()("help,h", "print this help")("version", "print the version")(
      "workload-configuration", po::value(&o.workload),
      "trace prefix: NPU r reads <prefix>.<r>.et")(
      "system-configuration", po::value(&o.system_config), "system config (JSON or YAML)")(
      "network-configuration", po::value(&o.network_config), "network config (YAML)")(
      "remote-memory-configuration", po::value(&o.memory_config),
      "remote memory config (JSON or YAML); default NO_MEMORY_EXPANSION")(
      "comm-group-configuration", po::value(&o.comm_group_config)->default_value("empty"),
      "communicator groups JSON {\"<id>\": [npus...]}; a path containing 'empty' means none")(
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
      "analytical-aware | analytical-unaware")(
      "link-stats", po::value(&o.link_stats),
      "write per-link bytes, busy time and utilisation to this CSV file, most loaded first")(
      "strict", po::bool_switch(&o.strict),
      "dependencies on nodes missing from a trace are errors")(
      "logging-configuration", po::value(&logging_config),
      "accepted for ASTRA-sim compatibility; not used")(
      "logging-folder", po::value(&logging_folder),
      "accepted for ASTRA-sim compatibility; not used");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(desc)
                  .style(po::command_line_style::unix_style)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::string flag = e.get_option_name();
    std::string msg = "unknown flag '" + flag + "'";
    const std::string guess = orrery::DidYouMean(flag, OptionNames(desc));
    if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
    return Fail(msg + " (see --help)");
  } catch (const po::error& e) {
    return Fail(std::string(e.what()) + " (see --help)");
  }
  if (vm.count("help")) {
    std::cout << kVersion << "\n\n" << desc << "\n";
    return 0;
  }
  if (vm.count("version")) {
    std::cout << kVersion << "\n";
    return 0;
  }
  orrery::StatusOr<orrery::Backend> b = orrery::ParseBackend(backend);
  if (!b.ok()) return Fail("--network-backend: " + b.status().message());
  o.backend = *b;
  o.rendezvous = rendezvous;
  {
    std::stringstream ss(queues);
    std::string item;
    while (std::getline(ss, item, ',')) {
      try {
        size_t used = 0;
        const int q = std::stoi(item, &used);
        if (used != item.size() || q < 1) throw std::invalid_argument(item);
        o.queues_per_dim.push_back(q);
      } catch (const std::exception&) {
        return Fail("--num-queues-per-dim is '" + queues +
                    "'; expected a number >= 1 or a comma-separated list of them");
      }
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  orrery::StatusOr<orrery::RunResult> r = orrery::RunSimulation(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) return Fail(r.status().message());
  for (const auto& w : r->warnings) Log().warn("{}", w);
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
  std::fwrite(out.data(), 1, out.size(), stdout);
  PrintSummary(*r, wall);
  return 0;
}
