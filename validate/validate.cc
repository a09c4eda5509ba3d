#include "validate/validate.h"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "et_feeder/trace.h"
#include "et_feeder/writer.h"
#include "runner/run.h"
#include "validate/nccl_tests.h"

namespace orrery {

namespace {

std::string Flow(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string Profile(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    if (Exists(dir + "/" + stem + ext)) return dir + "/" + stem + ext;
  }
  return "";
}

struct Collective {
  ChakraProtoMsg::CollectiveCommType type;
  const char* impl_key;
};

}  // namespace

double GeomeanAbs(const std::vector<double>& errors) {
  if (errors.empty()) return 0;
  double log_sum = 0;
  for (double e : errors) log_sum += std::log(std::max(std::fabs(e), 1e-6));
  return std::exp(log_sum / static_cast<double>(errors.size()));
}

StatusOr<ValidationReport> Validate(const ValidateOptions& o) {
  const std::string system = Profile(o.machine, "system");
  const std::string network = Profile(o.machine, "network");
  const std::string memory = Profile(o.machine, "memory");
  if (system.empty() || network.empty()) {
    return Status::Error(o.machine +
                         ": not a machine profile: it needs system.yaml and "
                         "network.yaml (and optionally memory.yaml)");
  }
  YAML::Node net;
  try {
    net = YAML::LoadFile(network);
  } catch (const YAML::Exception& e) {
    return Status::Error(network + ": " + e.what());
  }
  const YAML::Node counts = net["npus_count"];
  if (!counts || !counts.IsSequence() || counts.size() == 0) {
    return Status::Error(network + ": no npus_count list");
  }
  int profile_npus = 1;
  for (const YAML::Node& c : counts) profile_npus *= c.as<int>();

  StatusOr<std::vector<NcclMeasurement>> ms =
      LoadNcclMeasurements(o.measurements, o.gpus > 0 ? o.gpus : profile_npus, o.collective);
  if (!ms.ok()) return ms.status();
  static const std::map<std::string, Collective> kCollectives = {
      {"all_reduce", {ChakraProtoMsg::ALL_REDUCE, "all-reduce-implementation"}},
      {"all_gather", {ChakraProtoMsg::ALL_GATHER, "all-gather-implementation"}},
      {"reduce_scatter", {ChakraProtoMsg::REDUCE_SCATTER, "reduce-scatter-implementation"}},
      {"alltoall", {ChakraProtoMsg::ALL_TO_ALL, "all-to-all-implementation"}}};
  ValidationReport report;
  report.collective = ms->front().collective;
  auto coll = kCollectives.find(report.collective);
  if (coll == kCollectives.end()) {
    return Status::Error(o.measurements + ": collective '" + report.collective +
                         "' cannot be simulated yet; supported: all_reduce, all_gather, "
                         "reduce_scatter, alltoall");
  }
  if (o.algorithm != "auto" && o.algorithm != "ring") {
    return Status::Error("--algorithm '" + o.algorithm +
                         "' is not simulated yet; supported: auto (the profile's), ring");
  }
  std::string work = o.work_dir;
  if (work.empty()) {
    char tmpl[] = "/tmp/orrery-validate.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Status::Error("cannot create a scratch directory");
    work = tmpl;
  }
  std::string system_file = system;
  if (o.algorithm == "ring") {
    YAML::Node sys = YAML::LoadFile(system);
    YAML::Node impl(YAML::NodeType::Sequence);
    for (size_t d = 0; d < counts.size(); ++d) impl.push_back("ring");
    sys[coll->second.impl_key] = impl;
    system_file = work + "/system.yaml";
    std::ofstream(system_file) << Flow(sys) << "\n";
  }
  std::vector<double> errors;
  for (const NcclMeasurement& m : *ms) {
    // The network at the measured scale: the last dimension (nodes) grows or shrinks.
    std::string network_file = network;
    if (m.gpus != profile_npus) {
      const int per_last = profile_npus / counts[counts.size() - 1].as<int>();
      if (counts.size() < 2 || m.gpus % per_last != 0) {
        return Status::Error(m.source + ": measured on " + std::to_string(m.gpus) + " GPUs, but " +
                             network + " has " + std::to_string(profile_npus) +
                             " NPUs and no node dimension to scale to that");
      }
      YAML::Node scaled = YAML::Clone(net);
      scaled["npus_count"][counts.size() - 1] = m.gpus / per_last;
      network_file = work + "/network_" + std::to_string(m.gpus) + ".yaml";
      std::ofstream(network_file) << Flow(scaled) << "\n";
    }
    for (const NcclRow& row : m.rows) {
      if (row.size < o.min_size) continue;
      // nccl-tests' size is the gathered output for all_gather; Chakra's comm_size is a rank's
      // part there, and the buffer for the others.
      const uint64_t comm_size =
          report.collective == "all_gather" ? row.size / static_cast<uint64_t>(m.gpus) : row.size;
      const std::string prefix = work + "/" + report.collective + "_" + std::to_string(m.gpus) +
                                 "_" + std::to_string(row.size);
      for (int r = 0; r < m.gpus; ++r) {
        Status s = et::WriteTraceFile(
            et::RankTracePath(prefix, r),
            {et::MakeCollNode(0, report.collective, coll->second.type, comm_size)});
        if (!s.ok()) return s;
      }
      RunOptions run;
      run.workload = prefix;
      run.system_config = system_file;
      run.network_config = network_file;
      run.memory_config = memory;
      run.backend = o.backend;
      StatusOr<RunResult> r = RunSimulation(run);
      if (!r.ok()) return r.status().WithContext(o.machine);
      for (int k = 0; k < m.gpus; ++k) std::remove(et::RankTracePath(prefix, k).c_str());
      ValidationRow v;
      v.source = m.source;
      v.gpus = m.gpus;
      v.size = row.size;
      v.measured_us = row.time_us;
      v.simulated_us = r->end.Ns() / 1e3;
      v.error = (v.simulated_us - v.measured_us) / v.measured_us;
      errors.push_back(v.error);
      report.rows.push_back(v);
    }
  }
  if (o.work_dir.empty()) {
    std::remove((work + "/system.yaml").c_str());
    for (const NcclMeasurement& m : *ms) {
      std::remove((work + "/network_" + std::to_string(m.gpus) + ".yaml").c_str());
    }
    rmdir(work.c_str());
  }
  if (report.rows.empty()) {
    return Status::Error(o.measurements + ": no rows of at least " + std::to_string(o.min_size) +
                         " bytes");
  }
  report.geomean_abs_error = GeomeanAbs(errors);
  return report;
}

std::string FormatValidation(const ValidationReport& r) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%6s %14s %14s %14s %9s\n", "GPUs", "size (B)", "measured us",
                "simulated us", "error");
  out += line;
  for (const ValidationRow& v : r.rows) {
    std::snprintf(line, sizeof line, "%6d %14llu %14.2f %14.2f %+8.1f%%\n", v.gpus,
                  static_cast<unsigned long long>(v.size), v.measured_us, v.simulated_us,
                  100 * v.error);
    out += line;
  }
  std::snprintf(line, sizeof line, "geomean error: %.1f%% over %zu sizes\n",
                100 * r.geomean_abs_error, r.rows.size());
  return out + line;
}

Status WriteValidationJson(const ValidationReport& r, const std::string& path) {
  std::ofstream f(path);
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  f << "{\n  \"collective\": \"" << r.collective
    << "\",\n  \"geomean_abs_error\": " << r.geomean_abs_error << ",\n  \"rows\": [\n";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const ValidationRow& v = r.rows[i];
    f << "    {\"gpus\": " << v.gpus << ", \"size\": " << v.size
      << ", \"measured_us\": " << v.measured_us << ", \"simulated_us\": " << v.simulated_us
      << ", \"error\": " << v.error << "}" << (i + 1 < r.rows.size() ? ",\n" : "\n");
  }
  f << "  ]\n}\n";
  return f ? Status::Ok() : Status::Error(path + ": write failed");
}

int ValidateMain(int argc, char** argv) {
  namespace po = boost::program_options;
  ValidateOptions o;
  std::string report, backend = "analytical-aware";
  po::options_description desc(
      "orrery validate: simulate what nccl-tests measured and report the error");
  desc.add_options()("help,h", "print this help")("nccl-tests", po::value(&o.measurements),
                                                  "nccl-tests log, or a CSV of measurements")(
      "machine", po::value(&o.machine), "machine profile directory (configs/machines/...)")(
      "algorithm", po::value(&o.algorithm)->default_value("auto"), "auto (the profile's) | ring")(
      "min-size", po::value(&o.min_size)->default_value(0), "leave out smaller sizes (bytes)")(
      "gpus", po::value(&o.gpus)->default_value(0),
      "GPU count of a CSV without a gpus column (default: the profile's)")(
      "collective", po::value(&o.collective), "collective of an input that does not name it")(
      "network-backend", po::value(&backend)->default_value("analytical-aware"),
      "analytical-aware | analytical-unaware | packet")("report", po::value(&report),
                                                        "also write the rows as JSON");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "error: validate: %s (see orrery validate --help)\n", e.what());
    return 1;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (o.measurements.empty() || o.machine.empty()) {
    std::fprintf(stderr, "error: validate: --nccl-tests LOG and --machine DIR are required\n");
    return 1;
  }
  StatusOr<Backend> b = ParseBackend(backend);
  if (!b.ok()) {
    std::fprintf(stderr, "error: --network-backend: %s\n", b.status().message().c_str());
    return 1;
  }
  o.backend = *b;
  StatusOr<ValidationReport> r = Validate(o);
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
    return 1;
  }
  if (!report.empty()) {
    Status s = WriteValidationJson(*r, report);
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::fputs(FormatValidation(*r).c_str(), stdout);
  return 0;
}

}  // namespace orrery
