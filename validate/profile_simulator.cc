// ForEachIndex, GeomeanAbs and ProfileSimulator (validate.h): a machine profile's collectives
// simulated as nccl-tests runs them.
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
#include "config/schema.h"
#include "config/system_config.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"
#include "network/network_config.h"
#include "runner/run.h"
#include "validate/training.h"
#include "validate/validate.h"
#include "validate/validate_internal.h"

namespace orrery {

namespace validate_internal {

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

std::string ValidCollectives() {
  std::string out;
  for (const auto& [name, c] : Collectives()) {
    out += (out.empty() ? "" : ", ") + name + (name == "alltoall" ? " (or all_to_all)" : "");
  }
  return out;
}

}  // namespace validate_internal

namespace {

using validate_internal::Collectives;
using validate_internal::ValidCollectives;

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

}  // namespace

Status ForEachIndex(size_t n, int jobs, const std::function<void(size_t)>& f,
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
  // No exception may leave the loop's body (it would end the program): out of memory is said
  // once the loop is done.
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
  return out_of_memory ? Status::Error(kOutOfMemory) : Status::Ok();
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

}  // namespace orrery
