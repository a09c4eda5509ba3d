#include "validate/validate.h"

#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <new>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

#include "common/flags.h"
#include "common/json.h"
#include "config/network_config.h"
#include "config/schema.h"
#include "config/system_config.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"
#include "runner/run.h"
#include "validate/training.h"

namespace orrery {

namespace {

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string ProfileFile(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    if (Exists(dir + "/" + stem + ext)) return dir + "/" + stem + ext;
  }
  return "";
}

struct Collective {
  ChakraProtoMsg::CollectiveCommType type;
};

const std::map<std::string, Collective>& Collectives() {
  static const std::map<std::string, Collective> kCollectives = {
      {"all_reduce", {ChakraProtoMsg::ALL_REDUCE}},
      {"all_gather", {ChakraProtoMsg::ALL_GATHER}},
      {"reduce_scatter", {ChakraProtoMsg::REDUCE_SCATTER}},
      {"alltoall", {ChakraProtoMsg::ALL_TO_ALL}},
      {"broadcast", {ChakraProtoMsg::BROADCAST}},
      {"reduce", {ChakraProtoMsg::REDUCE}}};
  return kCollectives;
}

// For messages: the collectives validate simulates (Collectives(), and all_to_all's other name).
std::string ValidCollectives() {
  std::string out;
  for (const auto& [name, c] : Collectives()) {
    out += (out.empty() ? "" : ", ") + name + (name == "alltoall" ? " (or all_to_all)" : "");
  }
  return out;
}

}  // namespace

void ForEachIndex(size_t n, int jobs, const std::function<void(size_t)>& f,
                  const std::vector<double>* cost, const std::string& progress) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (cost != nullptr) {
    std::stable_sort(order.begin(), order.end(),
                     [cost](size_t a, size_t b) { return (*cost)[a] > (*cost)[b]; });
  }
  const int threads = jobs > 0 ? jobs : omp_get_num_procs();
  const long long count = static_cast<long long>(n);
  size_t done = 0, width = 0;
  // No exception may leave the loop's body (it would end the program): out of memory is
  // thrown again once the loop is done, for main() to say.
  std::atomic<bool> out_of_memory{false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long long i = 0; i < count; ++i) {
    try {
      f(order[static_cast<size_t>(i)]);
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
    if (!progress.empty()) {
#pragma omp critical(validate_progress)
      {
        const std::string line =
            "  " + progress + ": " + std::to_string(++done) + " of " + std::to_string(n);
        width = std::max(width, line.size());
        std::fprintf(stderr, "\r%s", line.c_str());
        std::fflush(stderr);
      }
    }
  }
  if (!progress.empty() && width > 0) {
    std::fprintf(stderr, "\r%s\r", std::string(width, ' ').c_str());
    std::fflush(stderr);
  }
  if (out_of_memory) throw std::bad_alloc();
}

double GeomeanAbs(const std::vector<double>& errors) {
  if (errors.empty()) return 0;
  double log_sum = 0;
  for (double e : errors) log_sum += std::log(std::max(std::fabs(e), 1e-6));
  return std::exp(log_sum / static_cast<double>(errors.size()));
}

// ---------------------------------------------------------------------------------------------
// ProfileSimulator

StatusOr<ProfileSimulator> ProfileSimulator::Open(const std::string& dir,
                                                  const std::string& work_dir, Backend backend) {
  ProfileSimulator p;
  p.dir_ = dir;
  p.backend_ = backend;
  p.system_ = ProfileFile(dir, "system");
  p.network_ = ProfileFile(dir, "network");
  p.memory_ = ProfileFile(dir, "memory");
  if (p.system_.empty() || p.network_.empty()) {
    return Status::Error(dir +
                         ": not a machine profile: it needs system.yaml and network.yaml "
                         "(and optionally memory.yaml and nccl.yaml)");
  }
  // Checked as any run checks it, before its npus_count is read (and rewritten for other GPU
  // counts: Network).
  StatusOr<Topology> topo = LoadNetworkConfig(p.network_);
  if (!topo.ok()) return topo.status();
  StatusOr<YAML::Node> read = ReadYamlDocument(p.network_);
  if (!read.ok()) return read.status();
  YAML::Node net = *read;
  const YAML::Node counts = net["npus_count"];
  if (!counts || !counts.IsSequence() || counts.size() == 0) {
    return Status::Error(p.network_ +
                         ": a machine profile's network is written as dimensions (topology, "
                         "npus_count, bandwidth, latency), so that validate can scale its last "
                         "dimension to the measured GPU count; this one has no npus_count list");
  }
  StatusOr<SystemConfig> system = LoadSystemConfig(p.system_);
  if (!system.ok()) return system.status();
  p.splits_ = std::max(1, system->preferred_dataset_splits);
  p.npus_ = topo->num_npus();
  p.dims_ = static_cast<int>(topo->dims.size());
  p.per_node_ = topo->NpusPerNode();
  const std::string nccl = ProfileFile(dir, "nccl");
  if (!nccl.empty()) {
    StatusOr<NcclModel> m = LoadNcclModel(nccl);
    if (!m.ok()) return m.status();
    p.nccl_ = *m;
    p.has_nccl_ = true;
  }
  p.work_ = work_dir;
  if (p.work_.empty()) {
    char tmpl[] = "/tmp/orrery-validate.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Status::Error("cannot create a scratch directory");
    p.work_ = tmpl;
    p.own_work_ = true;
  }
  return p;
}

ProfileSimulator::ProfileSimulator(ProfileSimulator&& o) noexcept
    : dir_(std::move(o.dir_)),
      system_(std::move(o.system_)),
      network_(std::move(o.network_)),
      memory_(std::move(o.memory_)),
      work_(std::move(o.work_)),
      own_work_(o.own_work_),
      npus_(o.npus_),
      dims_(o.dims_),
      per_node_(o.per_node_),
      splits_(o.splits_),
      has_nccl_(o.has_nccl_),
      nccl_(std::move(o.nccl_)),
      backend_(o.backend_),
      files_(std::move(o.files_)),
      serial_(o.serial_.load()) {
  o.own_work_ = false;
  o.files_.clear();
}

ProfileSimulator::~ProfileSimulator() {
  for (const std::string& f : files_) std::remove(f.c_str());
  if (own_work_) rmdir(work_.c_str());
}

StatusOr<std::string> ProfileSimulator::Network(int gpus, const std::string& source, int nodes) {
  // The hosts the measurement ran on must be the profile's nodes: 8 GPUs on two hosts are not
  // one NVSwitch node, and 16 on four hosts not two nodes of 8.
  const int node_size = dims_ > 1 ? per_node_ : npus_;
  if (nodes > 0 && (nodes == 1 ? gpus > node_size
                               : dims_ < 2 || gpus % nodes != 0 || gpus / nodes != node_size)) {
    const std::string per_host =
        gpus % nodes == 0 ? std::to_string(gpus / nodes) + " per host" : "unevenly";
    return Status::Error(source + ": measured on " + std::to_string(gpus) + " GPUs on " +
                         std::to_string(nodes) + " host" + (nodes > 1 ? "s" : "") + " (" +
                         per_host + "; the Rank lines' host names, or a 'nodes' column), but " +
                         dir_ + " has " +
                         (dims_ > 1 ? std::to_string(node_size) + " GPUs per node"
                                    : "one node of " + std::to_string(node_size) + " GPUs") +
                         "; compare it on a profile of that layout");
  }
  if (gpus == npus_ || InOneNode(gpus)) return network_;
  StatusOr<YAML::Node> read = ReadYamlDocument(network_);
  if (!read.ok()) return read.status();
  YAML::Node net = *read;
  const YAML::Node counts = net["npus_count"];
  const YAML::Node topology = net["topology"];
  const bool one_switch = counts.size() == 1 && topology.IsSequence() && topology.size() == 1 &&
                          topology[0].as<std::string>() == "Switch";
  if (one_switch && gpus >= 2 && gpus < npus_) {
    // Fewer GPUs on one switch: the others stay idle, each used GPU keeps its own links.
    net["npus_count"][0] = gpus;
  } else {
    if (counts.size() >= 2 && gpus % per_node_ != 0) {
      return Status::Error(source + ": measured on " + std::to_string(gpus) + " GPUs, which are " +
                           "not whole nodes of " + network_ + " (" + std::to_string(per_node_) +
                           " GPUs per node): 2 to " + std::to_string(per_node_) +
                           " GPUs, or a multiple of " + std::to_string(per_node_));
    }
    if (counts.size() < 2) {
      return Status::Error(
          source + ": measured on " + std::to_string(gpus) + " GPUs, but " + network_ + " has " +
          std::to_string(npus_) + " NPUs and no node dimension to scale to that" +
          (one_switch ? " (one switch: 2 to " + std::to_string(npus_) + " GPUs)" : std::string()));
    }
    net["npus_count"][counts.size() - 1] = Nodes(gpus);
  }
  const std::string file = work_ + "/network_" + std::to_string(gpus) + ".yaml";
  std::ofstream(file) << FlowYaml(net) << "\n";
  files_.push_back(file);
  return file;
}

StatusOr<std::string> ProfileSimulator::System(const std::string& algorithm, double latency_us,
                                               double efficiency) {
  if (algorithm.empty() && latency_us < 0 && efficiency < 0) return system_;
  StatusOr<YAML::Node> read = ReadYamlDocument(system_);
  if (!read.ok()) return read.status();
  YAML::Node sys = *read;
  // This file runs one explicit choice: the profile's NCCL model (a path relative to the
  // profile, which this scratch file is not in) does not apply to it.
  sys.remove("nccl-model");
  if (!algorithm.empty()) {
    auto impl = NcclImplementations(algorithm, dims_);
    if (!impl.ok()) return impl.status().WithContext(dir_);
    for (const auto& [key, list] : *impl) {
      YAML::Node l(YAML::NodeType::Sequence);
      for (const std::string& a : list) l.push_back(a);
      sys[key] = l;
    }
  }
  // NCCL's broadcast and reduce are ring algorithms, whichever algorithm the others run.
  if (!algorithm.empty()) sys["broadcast-reduce-algorithm"] = "ring";
  if (latency_us >= 0) sys["collective-launch-latency"] = latency_us * 1e3;
  if (efficiency > 0) sys["protocol-efficiency"] = std::min(efficiency, 1.0);
  const std::string file = work_ + "/system_" + std::to_string(serial_.fetch_add(1)) + ".yaml";
  std::ofstream(file) << FlowYaml(sys) << "\n";
  files_.push_back(file);
  return file;
}

StatusOr<double> ProfileSimulator::TimeUs(const std::string& collective, int gpus, uint64_t size,
                                          const std::string& system_file,
                                          const std::string& network_file) {
  StatusOr<RunResult> r = Run(collective, gpus, size, system_file, network_file, nullptr);
  if (!r.ok()) return r.status();
  return r->end.Ns() / 1e3;
}

StatusOr<ProfileSimulator::Tuned> ProfileSimulator::NcclTimeUs(const std::string& collective,
                                                               int gpus, uint64_t size,
                                                               const std::string& algorithm,
                                                               const std::string& protocol,
                                                               const std::string& network_file) {
  if (!has_nccl_) return Status::Error(dir_ + ": no nccl.yaml");
  RunOptions extra;
  extra.nccl_model = nccl_.path;
  extra.nccl_algorithm = algorithm;
  extra.nccl_protocol = protocol;
  StatusOr<RunResult> r = Run(collective, gpus, size, system_, network_file, &extra);
  if (!r.ok()) return r.status();
  if (r->nccl_choices.size() != 1) {
    return Status::Error(dir_ + ": expected one tuned collective, got " +
                         std::to_string(r->nccl_choices.size()));
  }
  return Tuned{r->end.Ns() / 1e3, r->nccl_choices.front().choice};
}

StatusOr<RunResult> ProfileSimulator::Run(const std::string& collective, int gpus, uint64_t size,
                                          const std::string& system_file,
                                          const std::string& network_file, const RunOptions* nccl) {
  auto coll = Collectives().find(collective);
  if (coll == Collectives().end()) {
    return Status::Error("collective '" + collective +
                         "' is not one validate simulates; valid: " + ValidCollectives());
  }
  // nccl-tests' size is the gathered output for all_gather; Chakra's comm_size is a rank's part
  // there, and the buffer for the others.
  const uint64_t comm_size = collective == "all_gather" ? size / static_cast<uint64_t>(gpus) : size;
  // A name of this run's own: other runs may be writing theirs at the same time.
  const std::string prefix = work_ + "/" + collective + "_" + std::to_string(gpus) + "_run" +
                             std::to_string(serial_.fetch_add(1));
  // GPUs inside one node of a larger profile: a group of the first node's NPUs, the rest idle.
  const bool group = InOneNode(gpus) && gpus < npus_;
  const int npus = group ? npus_ : gpus;
  std::string groups;
  if (group) {
    groups = prefix + "_groups.json";
    std::ofstream out(groups);
    out << "{\"1\": [";
    for (int r = 0; r < gpus; ++r) out << (r ? ", " : "") << r;
    out << "]}\n";
    if (!out) return Status::Error(groups + ": write failed");
  }
  for (int r = 0; r < npus; ++r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (r < gpus) {
      nodes.push_back(et::MakeCollNode(0, collective, coll->second.type, comm_size));
      if (group) et::SetStringAttr(&nodes.back(), "pg_name", "1");
    }
    Status s = et::WriteTraceFile(et::RankTracePath(prefix, r), nodes);
    if (!s.ok()) return s;
  }
  RunOptions run;
  run.comm_group_config = groups;
  run.workload = prefix;
  run.system_config = system_file;
  run.network_config = network_file;
  run.memory_config = memory_;
  run.backend = backend_;
  if (nccl != nullptr) {
    run.nccl_model = nccl->nccl_model;
    run.nccl_algorithm = nccl->nccl_algorithm;
    run.nccl_algorithm_flag = "--algorithm";
    run.nccl_protocol = nccl->nccl_protocol;
  }
  StatusOr<RunResult> r = RunSimulation(run);
  for (int k = 0; k < npus; ++k) std::remove(et::RankTracePath(prefix, k).c_str());
  if (group) std::remove(groups.c_str());
  if (!r.ok()) {
    // Named by what the log measured, not by this run's scratch trace.
    std::string message = r.status().message();
    const std::string what =
        collective + " of " + std::to_string(size) + " B on " + std::to_string(gpus) + " GPUs: ";
    for (int k = 0; k < npus; ++k) {
      const std::string scratch = et::RankTracePath(prefix, k) + ": NPU " + std::to_string(k) +
                                  " node 0 '" + collective + "': ";
      for (size_t at = message.find(scratch); at != std::string::npos;
           at = message.find(scratch, at + what.size())) {
        message.replace(at, scratch.size(), what);
      }
    }
    return Status::Error(message).WithContext(dir_);
  }
  return r;
}

StatusOr<std::vector<NcclMeasurement>> ProfileSimulator::Load(const MeasurementOptions& o) const {
  // A CSV without GPU counts runs on the profile's NPUs (unless it has node counts).
  StatusOr<std::vector<NcclMeasurement>> ms = LoadNcclMeasurements(
      o.measurements, o.gpus, o.collective, IsNcclCsv(o.measurements) ? npus_ : 0);
  if (!ms.ok()) return ms;
  for (const NcclMeasurement& m : *ms) {
    if (o.gpus > 0 && m.gpus_from_file && m.gpus != o.gpus) {
      return Status::Error(m.source + ": --gpus is " + std::to_string(o.gpus) + " but the file " +
                           "gives " + std::to_string(m.gpus) + " GPUs (its 'gpus' column or Rank " +
                           "lines); leave --gpus out, or --only-gpus to keep some GPU counts");
    }
    if (m.collective != ms->front().collective) {
      return Status::Error(o.measurements + ": holds runs of more than one collective (" +
                           ms->front().source + ": " + ms->front().collective + ", " + m.source +
                           ": " + m.collective +
                           "); give each collective's runs in a file of their own");
    }
  }
  std::vector<NcclMeasurement> kept;
  for (NcclMeasurement& m : *ms) {
    if (!o.only_gpus.empty() &&
        std::find(o.only_gpus.begin(), o.only_gpus.end(), m.gpus) == o.only_gpus.end()) {
      continue;
    }
    m.empty_rows = 0;
    double empty_sum = 0;
    for (const NcclRow& r : m.rows) {
      if (r.size != 0) continue;
      ++m.empty_rows;
      empty_sum += o.in_place && r.in_place_us > 0 ? r.in_place_us : r.time_us;
    }
    if (o.harness_floor_us > 0) {
      m.harness_floor_us = o.harness_floor_us;
    } else if (o.harness_floor_us == MeasurementOptions::kHarnessFloorAuto && m.empty_rows > 0) {
      m.harness_floor_us = empty_sum / m.empty_rows;
    }
    const uint64_t least = std::max<uint64_t>(o.min_size, 1);
    m.rows.erase(std::remove_if(m.rows.begin(), m.rows.end(),
                                [&](const NcclRow& r) { return r.size < least; }),
                 m.rows.end());
    // One size several times (nccl-tests -d all or -o all runs each type or op in turn): said,
    // as each row counts in the geomean and in a fit.
    {
      std::map<uint64_t, int> times;
      for (const NcclRow& r : m.rows) ++times[r.size];
      int repeated = 0;
      uint64_t first = 0;
      for (const auto& [size, k] : times) {
        if (k > 1 && repeated++ == 0) first = size;
      }
      if (repeated > 0) {
        m.notes.push_back(m.source + ": " + std::to_string(repeated) + " size" +
                          (repeated > 1 ? "s appear" : " appears") + " more than once (" +
                          std::to_string(first) + " " + std::to_string(times[first]) +
                          " times; nccl-tests -d all or -o all runs each data type or operation "
                          "in turn): every row counts in the geomean and in a fit");
      }
    }
    // An all-gather's size is every rank's part together (nccl-tests prints count x GPUs), so
    // it is a whole number of parts; 4 B on 8 GPUs had run as parts of 0 B.
    if (m.collective == "all_gather") {
      for (const NcclRow& r : m.rows) {
        if (r.size % static_cast<uint64_t>(m.gpus) != 0) {
          return Status::Error(m.source + ": all_gather size " + std::to_string(r.size) +
                               " is not a whole number of parts on " + std::to_string(m.gpus) +
                               " GPUs (nccl-tests' size is the gathered output, GPUs x each "
                               "rank's part); expected a multiple of " +
                               std::to_string(m.gpus));
        }
      }
    }
    if (o.in_place) {
      auto none = [](const NcclRow& r) { return !(r.in_place_us > 0); };
      const auto missing = std::find_if(m.rows.begin(), m.rows.end(), none);
      if (missing != m.rows.end()) {
        const auto n = std::count_if(m.rows.begin(), m.rows.end(), none);
        return Status::Error(m.source + ": --in-place, but size " + std::to_string(missing->size) +
                             (n > 1 ? " (and " + std::to_string(n - 1) + " more)" : "") +
                             " has no in-place time (N/A, a log of one group of columns, or a "
                             "CSV without busbw_GBps_in_place); leave --in-place out to compare "
                             "the out-of-place times");
      }
      for (NcclRow& r : m.rows) r.time_us = r.in_place_us;
    }
    if (!m.rows.empty()) kept.push_back(std::move(m));
  }
  if (kept.empty()) {
    // Named by what left nothing: --min-size or the 0-byte rule, and --only-gpus.
    std::string why;
    if (o.min_size > 1) {
      why = " of at least " + std::to_string(o.min_size) + " bytes";
    } else if (o.only_gpus.empty()) {
      why =
          " of 1 byte or more (rows of 0 bytes are left out: NCCL runs nothing for an empty "
          "buffer)";
    }
    if (!o.only_gpus.empty()) why += " on the GPU counts --only-gpus keeps";
    return Status::Error(o.measurements + ": no rows" + why);
  }
  return kept;
}

// ---------------------------------------------------------------------------------------------
// Validate

StatusOr<ValidationReport> Validate(const ValidateOptions& o) {
  StatusOr<ProfileSimulator> sim = ProfileSimulator::Open(o.machine, o.work_dir, o.backend);
  if (!sim.ok()) return sim.status();
  StatusOr<std::vector<NcclMeasurement>> ms = sim->Load(o);
  if (!ms.ok()) return ms.status();
  ValidationReport report;
  report.input = o.measurements;
  report.collective = ms->front().collective;
  if (Collectives().count(report.collective) == 0) {
    return Status::Error(o.measurements + ": collective '" + report.collective +
                         "' is not one validate simulates; valid: " + ValidCollectives());
  }
  if (o.algorithm != "auto") {
    if (StatusOr<std::set<std::string>> a = NcclAlgorithmsIn(o.algorithm); !a.ok()) {
      return a.status().WithContext("--algorithm (or auto)");
    }
  }
  if (o.protocol != "auto") {
    if (StatusOr<std::set<std::string>> p = NcclProtocolsIn(o.protocol); !p.ok()) {
      return p.status().WithContext("--protocol (or auto)");
    }
  }
  for (const NcclMeasurement& m : *ms) {
    report.notes.insert(report.notes.end(), m.notes.begin(), m.notes.end());
    if (!m.gpus_from_file && o.gpus == 0) {
      report.notes.push_back(m.source + " gives no GPU count (no 'gpus' column): compared on " +
                             "the profile's " + std::to_string(m.gpus) +
                             " NPUs; give --gpus N if it was measured on N GPUs");
    }
    if (m.empty_rows > 0) {
      report.notes.push_back(m.source + ": " + std::to_string(m.empty_rows) + " row" +
                             (m.empty_rows > 1 ? "s" : "") +
                             " of 0 bytes left out: NCCL runs nothing for an empty buffer, so "
                             "the time there is nccl-tests' own overhead");
    }
  }
  if (o.in_place) report.notes.push_back("in-place times compared (--in-place)");
  if (o.backend == Backend::kAnalyticalUnaware) {
    report.notes.push_back(
        "--network-backend analytical-unaware: every message moves at its link's rate (a lane's, "
        "with lanes) whatever else is in flight, so a collective that keeps more chunks on a link "
        "than it has lanes (NCCL's channels) runs faster than the link allows; the shipped "
        "profiles are calibrated on analytical-aware");
  }
  for (const NcclMeasurement& m : *ms) {
    if (m.harness_floor_us <= 0) {
      // One thread driving several GPUs is a floor of its own this log cannot measure.
      if (m.gpus_per_thread > 1 && o.harness_floor_us != 0) {
        const std::string g = std::to_string(m.gpus_per_thread);
        report.notes.push_back(
            m.source + ": one thread drives " + g + " GPUs (nccl-tests -g " + g +
            ", the header's nGpus) and issues each iteration's calls to them in turn, so rows "
            "far below 1 MiB may sit at that harness's own time per iteration (33.5-34.7 us for "
            "-g 8 on 8 x A100), which this log has no rows of 0 bytes to measure; "
            "--harness-floor US compares them at it");
      }
      continue;
    }
    char floor[32];
    std::snprintf(floor, sizeof floor, "%.2f", m.harness_floor_us);
    report.notes.push_back(
        m.source + ": nccl-tests' own time per iteration is " + floor + " us (" +
        (o.harness_floor_us > 0 ? std::string("--harness-floor")
                                : "the mean of its rows of 0 bytes, which time the harness alone") +
        "); no row can be measured below it, so a simulated time below it is compared as it "
        "(marked *); --harness-floor none compares the collective alone");
  }
  // Each measurement's network and system files first (they are written once, in order), then
  // every row's simulation, side by side (o.jobs), then the rows in their order: the report is
  // the same whatever the number of jobs, and so is the first error.
  struct Plan {
    std::string algorithm, protocol, system, network;
  };
  std::vector<Plan> plans;
  std::vector<std::pair<size_t, const NcclRow*>> todo;  // (measurement, row)
  for (const NcclMeasurement& m : *ms) {
    Plan plan;
    plan.algorithm = o.algorithm != "auto" ? o.algorithm : m.algorithm;
    plan.protocol = o.protocol != "auto" ? o.protocol : m.protocol;
    if (StatusOr<std::set<std::string>> a = NcclAlgorithmsIn(plan.algorithm); !a.ok()) {
      return a.status().WithContext(m.source + ": the log's NCCL_ALGO '" + m.algorithm + "'");
    }
    if (StatusOr<std::set<std::string>> p = NcclProtocolsIn(plan.protocol); !p.ok()) {
      return p.status().WithContext(m.source + ": the log's NCCL_PROTO '" + m.protocol + "'");
    }
    if (sim->nccl() == nullptr && !plan.protocol.empty()) {
      return Status::Error(m.source + ": NCCL_PROTO '" + plan.protocol + "' needs an NCCL model, " +
                           "and " + o.machine + " has no nccl.yaml");
    }
    if (sim->nccl() == nullptr && !plan.algorithm.empty() && !IsNcclAlgorithm(plan.algorithm)) {
      return Status::Error(m.source + ": NCCL_ALGO '" + plan.algorithm + "' (a list, or all " +
                           "but some) needs an NCCL model to choose among them, and " + o.machine +
                           " has no nccl.yaml; give one algorithm");
    }
    StatusOr<std::string> network = sim->Network(m.gpus, m.source, m.nodes);
    if (!network.ok()) return network.status();
    plan.network = *network;
    // With an NCCL model, every row runs NCCL's choice for its size, chosen as in any run
    // with 'nccl-model' (runner/nccl_tuner.h); without one, the profile's system file.
    if (sim->nccl() == nullptr) {
      StatusOr<std::string> f = sim->System(plan.algorithm, -1, -1);
      if (!f.ok()) return f.status();
      plan.system = *f;
    }
    for (const NcclRow& row : m.rows) todo.push_back({plans.size(), &row});
    plans.push_back(std::move(plan));
  }
  // A size a measurement repeats (several runs in one log) is simulated once: the same inputs
  // give the same time, and a log of one row repeated 200,000 times is one simulation.
  std::vector<size_t> distinct_of(todo.size());  // row -> its simulation
  std::vector<size_t> distinct;                  // simulation -> its first row
  {
    std::map<std::pair<size_t, uint64_t>, size_t> first;  // (measurement, size) -> simulation
    std::vector<uint64_t> repeated(ms->size(), 0);
    for (size_t i = 0; i < todo.size(); ++i) {
      const auto key = std::make_pair(todo[i].first, todo[i].second->size);
      auto [it, added] = first.emplace(key, distinct.size());
      if (added) distinct.push_back(i);
      if (!added) ++repeated[todo[i].first];
      distinct_of[i] = it->second;
    }
    for (size_t m = 0; m < ms->size(); ++m) {
      if (repeated[m] == 0) continue;
      report.notes.push_back((*ms)[m].source + ": " + std::to_string(repeated[m]) + " row" +
                             (repeated[m] > 1 ? "s repeat sizes" : " repeats a size") +
                             " of earlier rows; each size is simulated once and compared with "
                             "every row of it");
    }
  }
  std::vector<StatusOr<ProfileSimulator::Tuned>> simulated(distinct.size(),
                                                           Status::Error("not simulated"));
  std::vector<double> cost;  // the bytes the GPUs move, roughly: largest first
  for (size_t i : distinct) {
    cost.push_back(static_cast<double>(todo[i].second->size) * (*ms)[todo[i].first].gpus);
  }
  ForEachIndex(
      distinct.size(), o.jobs,
      [&](size_t d) {
        const size_t i = distinct[d];
        const int gpus = (*ms)[todo[i].first].gpus;
        const uint64_t size = todo[i].second->size;
        const Plan& plan = plans[todo[i].first];
        if (sim->nccl() != nullptr) {
          simulated[d] = sim->NcclTimeUs(report.collective, gpus, size, plan.algorithm,
                                         plan.protocol, plan.network);
        } else {
          StatusOr<double> us =
              sim->TimeUs(report.collective, gpus, size, plan.system, plan.network);
          simulated[d] = us.ok()
                             ? StatusOr<ProfileSimulator::Tuned>(ProfileSimulator::Tuned{*us, ""})
                             : StatusOr<ProfileSimulator::Tuned>(us.status());
        }
      },
      &cost, o.progress ? "validate " + o.measurements + ": sizes simulated" : "");
  std::vector<double> errors;
  for (size_t i = 0; i < todo.size(); ++i) {
    const NcclMeasurement& m = (*ms)[todo[i].first];
    const StatusOr<ProfileSimulator::Tuned>& sim_row = simulated[distinct_of[i]];
    if (!sim_row.ok()) return sim_row.status().WithContext(m.source);
    ValidationRow v;
    v.source = m.source;
    v.gpus = m.gpus;
    v.size = todo[i].second->size;
    v.measured_us = todo[i].second->time_us;
    v.collective_us = sim_row->time_us;
    v.simulated_us = std::max(v.collective_us, m.harness_floor_us);
    v.choice = sim_row->choice;
    v.error = (v.simulated_us - v.measured_us) / v.measured_us;
    errors.push_back(v.error);
    report.rows.push_back(v);
  }
  report.geomean_abs_error = GeomeanAbs(errors);
  return report;
}

std::string FormatValidation(const ValidationReport& r) {
  std::string out;
  for (const std::string& note : r.notes) out += "note: " + note + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%6s %14s %14s %14s %9s  %s\n", "GPUs", "size (B)",
                "measured us", "simulated us", "error", "NCCL choice");
  out += line;
  for (const ValidationRow& v : r.rows) {
    std::snprintf(
        line, sizeof line, "%6d %14llu %14.2f %14.2f %+8.1f%%  %s\n", v.gpus,
        static_cast<unsigned long long>(v.size), v.measured_us, v.simulated_us, 100 * v.error,
        ((v.choice.empty() ? "(profile)" : v.choice) + (v.AtFloor() ? " *" : "")).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "geomean error: %.1f%% over %zu sizes\n",
                100 * r.geomean_abs_error, r.rows.size());
  return out + line;
}

namespace {

// One report's fields as JSON members, each line starting with `indent`.
std::string ReportJsonFields(const ValidationReport& r, const std::string& indent) {
  std::ostringstream f;
  f << std::setprecision(12);  // a time of 1234567.89 us as it is, not 1.23457e+06
  f << indent << "\"collective\": " << JsonString(r.collective) << ",\n"
    << indent << "\"geomean_abs_error\": " << r.geomean_abs_error << ",\n"
    << indent << "\"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) f << (i ? ", " : "") << JsonString(r.notes[i]);
  f << "],\n" << indent << "\"rows\": [\n";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const ValidationRow& v = r.rows[i];
    f << indent << "  {\"gpus\": " << v.gpus << ", \"size\": " << v.size
      << ", \"measured_us\": " << v.measured_us << ", \"simulated_us\": " << v.simulated_us
      << ", \"error\": " << v.error << ", \"choice\": " << JsonString(v.choice)
      << ", \"collective_us\": " << v.collective_us
      << ", \"at_harness_floor\": " << (v.AtFloor() ? "true" : "false") << "}"
      << (i + 1 < r.rows.size() ? ",\n" : "\n");
  }
  f << indent << "]\n";
  return f.str();
}

Status WriteText(const std::string& text, const std::string& path) {
  std::ofstream f(path);
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  f << text;
  f.close();  // a full disk shows when the buffer is written out
  return f ? Status::Ok() : Status::Error(path + ": write failed: " + std::strerror(errno));
}

std::vector<double> AllErrors(const std::vector<ValidationReport>& reports) {
  std::vector<double> errors;
  for (const ValidationReport& r : reports) {
    for (const ValidationRow& row : r.rows) errors.push_back(row.error);
  }
  return errors;
}

}  // namespace

Status WriteValidationJson(const ValidationReport& r, const std::string& path) {
  return WriteText("{\n" + ReportJsonFields(r, "  ") + "}\n", path);
}

Status CheckDistinctInputs(const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      std::error_code error;
      if (std::filesystem::equivalent(inputs[i], inputs[j], error) && !error) {
        return Status::Error("--nccl-tests '" + inputs[i] + "' is the same file as '" + inputs[j] +
                             "': give each input once");
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<ValidationReport>> ValidateEach(const ValidateOptions& options,
                                                     const std::vector<std::string>& more) {
  std::vector<std::string> inputs = {options.measurements};
  inputs.insert(inputs.end(), more.begin(), more.end());
  Status distinct = CheckDistinctInputs(inputs);
  if (!distinct.ok()) return distinct;
  std::vector<ValidationReport> reports;
  for (const std::string& input : inputs) {
    ValidateOptions one = options;
    one.measurements = input;
    StatusOr<ValidationReport> r = Validate(one);
    if (!r.ok()) return r.status();
    reports.push_back(std::move(*r));
  }
  return reports;
}

std::string FormatValidations(const std::vector<ValidationReport>& reports) {
  if (reports.size() == 1) return FormatValidation(reports[0]);
  std::string out;
  for (const ValidationReport& r : reports) out += "== " + r.input + "\n" + FormatValidation(r);
  const std::vector<double> errors = AllErrors(reports);
  char line[128];
  std::snprintf(line, sizeof line, "geomean error: %.1f%% over %zu sizes of %zu inputs\n",
                100 * GeomeanAbs(errors), errors.size(), reports.size());
  return out + line;
}

Status WriteValidationsJson(const std::vector<ValidationReport>& reports, const std::string& path) {
  if (reports.size() == 1) return WriteValidationJson(reports[0], path);
  const std::vector<double> errors = AllErrors(reports);
  std::ostringstream f;
  f << std::setprecision(12);
  f << "{\n  \"geomean_abs_error\": " << GeomeanAbs(errors) << ",\n  \"sizes\": " << errors.size()
    << ",\n  \"inputs\": [\n";
  for (size_t i = 0; i < reports.size(); ++i) {
    f << "    {\n      \"file\": " << JsonString(reports[i].input) << ",\n"
      << ReportJsonFields(reports[i], "      ") << "    }" << (i + 1 < reports.size() ? "," : "")
      << "\n";
  }
  f << "  ]\n}\n";
  return WriteText(f.str(), path);
}

namespace {

// "16" -> 16; spaces around it are allowed; "4.5", "8x", "0" and "-2" are not GPU counts.
bool ParseGpuCount(const std::string& text, int* v) {
  const size_t b = text.find_first_not_of(" \t");
  if (b == std::string::npos) return false;
  const std::string item = text.substr(b, text.find_last_not_of(" \t") - b + 1);
  if (item.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  const long long x = std::strtoll(item.c_str(), nullptr, 10);
  if (errno != 0 || x < 1 || x > std::numeric_limits<int>::max()) return false;
  *v = static_cast<int>(x);
  return true;
}

}  // namespace

StatusOr<std::vector<int>> ParseGpuList(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int v = 0;
    if (!ParseGpuCount(item, &v)) {
      return Status::Error(flag + " '" + text + "': bad GPU count '" + item +
                           "'; expected whole numbers >= 1 separated by commas, e.g. 16,32");
    }
    out.push_back(v);
  }
  if (out.empty()) {
    return Status::Error(flag + " '" + text +
                         "': no GPU count; expected whole numbers >= 1 separated by commas, "
                         "e.g. 16,32");
  }
  return out;
}

MeasurementCommandLine::MeasurementCommandLine(const char* tool, const char* description,
                                               MeasurementOptions* o, const char* only_gpus_help,
                                               std::vector<std::string>* more_inputs,
                                               const char* more_help)
    : tool_(tool), desc_(description), o_(o), more_inputs_(more_inputs) {
  namespace po = boost::program_options;
  desc_.add_options()("help,h", "print this help");
  const std::string help =
      std::string(
          "nccl-tests log, or a CSV of measurements; give it again for each further "
          "input, ") +
      more_help;
  desc_.add_options()("nccl-tests", po::value(&inputs_)->composing(), help.c_str());
  desc_.add_options()("machine", po::value(&o->machine),
                      "machine profile directory (configs/machines/...)")(
      "min-size", po::value(&min_size_)->default_value(min_size_),
      "leave out smaller sizes (bytes)")(
      "gpus", po::value(&gpus_),
      "GPU count of an input that does not give it: a CSV without a gpus column (default: the "
      "profile's, unless it has a nodes column), a log without '#  Rank' lines")(
      "only-gpus", po::value(&only_), only_gpus_help)(
      "collective", po::value(&o->collective), "collective of an input that does not name it")(
      "in-place", po::bool_switch(&o->in_place),
      "compare the in-place times (nccl-tests' second group of columns) instead of the "
      "out-of-place ones; out of place, NCCL's all-gather also copies each rank's own part, "
      "which Orrery does not model")(
      "harness-floor", po::value(&floor_)->default_value(floor_),
      "nccl-tests' own time per iteration, below which no row is measured: auto (the mean of "
      "the input's rows of 0 bytes, which time the harness alone; none without such rows) | "
      "none | a time in us (0.001 to 1e9)")("network-backend",
                                            po::value(&backend_)->default_value(backend_),
                                            "analytical-aware | analytical-unaware | packet")(
      "jobs", po::value(&jobs_)->default_value(jobs_),
      "simulations run at once, each size its own; 0 = all cores (the results are the same "
      "whatever the number)");
}

int MeasurementCommandLine::Parse(int argc, char** argv) {
  namespace po = boost::program_options;
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc_), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "error: %s: %s (see orrery %s --help)\n", tool_.c_str(), e.what(),
                 tool_.c_str());
    return 1;
  }
  if (vm.count("help")) {
    std::cout << desc_ << "\n";
    return 0;
  }
  if (!inputs_.empty()) {
    o_->measurements = inputs_[0];
    more_inputs_->assign(inputs_.begin() + 1, inputs_.end());
  }
  if (o_->measurements.empty() || o_->machine.empty()) {
    std::fprintf(stderr, "error: %s: --nccl-tests LOG and --machine DIR are required\n",
                 tool_.c_str());
    return 1;
  }
  {
    // Read as text: boost would take "-1" for an unsigned flag as 2^64 - 1.
    const std::string t = min_size_;
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || errno != 0) {
      std::fprintf(stderr,
                   "error: %s: --min-size '%s': expected a whole number of bytes >= 0, e.g. "
                   "1048576\n",
                   tool_.c_str(), t.c_str());
      return 1;
    }
    o_->min_size = v;
  }
  if (vm.count("gpus")) {
    if (!ParseGpuCount(gpus_, &o_->gpus)) {
      std::fprintf(stderr, "error: %s: --gpus '%s': expected a whole number of GPUs >= 1, e.g. 8\n",
                   tool_.c_str(), gpus_.c_str());
      return 1;
    }
  }
  if (!only_.empty()) {
    StatusOr<std::vector<int>> g = ParseGpuList("--only-gpus", only_);
    if (!g.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", tool_.c_str(), g.status().message().c_str());
      return 1;
    }
    o_->only_gpus = *g;
  }
  if (floor_ == "auto") {
    o_->harness_floor_us = MeasurementOptions::kHarnessFloorAuto;
  } else if (floor_ == "none") {
    o_->harness_floor_us = 0;
  } else if (!ParseMeasuredTime(floor_, &o_->harness_floor_us)) {
    std::fprintf(stderr, "error: %s: --harness-floor '%s': expected auto, none or %s, e.g. 34\n",
                 tool_.c_str(), floor_.c_str(), kMeasuredTimeRange);
    return 1;
  }
  StatusOr<Backend> b = ParseBackend(backend_);
  if (!b.ok()) {
    std::fprintf(stderr, "error: --network-backend: %s\n", b.status().message().c_str());
    return 1;
  }
  o_->backend = *b;
  o_->progress = isatty(STDERR_FILENO) != 0;
  {
    const std::string& t = jobs_;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(t.c_str(), &end, 10);
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || errno != 0 ||
        v > 4096) {
      std::fprintf(stderr,
                   "error: %s: --jobs '%s': expected 0 (all cores) to 4096 simulations at once\n",
                   tool_.c_str(), t.c_str());
      return 1;
    }
    o_->jobs = static_cast<int>(v);
  }
  return -1;
}

int ValidateMain(int argc, char** argv) {
  // validate --training RUNS.yaml: whole training steps against published throughput.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--training" || arg.rfind("--training=", 0) == 0) {
      return TrainingValidateMain(argc, argv);
    }
  }
  namespace po = boost::program_options;
  ValidateOptions o;
  std::vector<std::string> more;
  const std::string kNotGiven = "\x01";  // --report absent (an empty name is an error)
  std::string report = kNotGiven;
  MeasurementCommandLine cli("validate",
                             "orrery validate: simulate what nccl-tests measured and report the "
                             "error",
                             &o, "keep only measurements on these GPU counts, e.g. 16,32", &more,
                             "each validated and printed, then the error over all of them");
  cli.options().add_options()("algorithm", po::value(&o.algorithm)->default_value("auto"),
                              "auto (NCCL's fastest choice from the profile's nccl.yaml, or the "
                              "log's NCCL_ALGO) | ring | tree | nvls | nvlstree, as NCCL_ALGO: "
                              "a comma list, or ^ before it for all but")(
      "protocol", po::value(&o.protocol)->default_value("auto"),
      "auto (NCCL's choice by size, or the log's NCCL_PROTO) | LL | LL128 | Simple, as "
      "NCCL_PROTO: a comma list, or ^ before it for all but; needs the profile's nccl.yaml")(
      "report", po::value(&report), "also write the rows as JSON");
  const int done = cli.Parse(argc, argv);
  if (done >= 0) return done;
  if (report.empty()) {
    std::fprintf(stderr, "error: --report needs a file name (FILE.json)\n");
    return 1;
  }
  StatusOr<std::vector<ValidationReport>> r = ValidateEach(o, more);
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
    return 1;
  }
  if (report != kNotGiven) {
    Status s = WriteValidationsJson(*r, report);
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::fputs(FormatValidations(*r).c_str(), stdout);
  return 0;
}

}  // namespace orrery
