#include "runner/system_setup.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "config/comm_group_config.h"
#include "nccl/nccl_model.h"

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

}  // namespace

Status DefineGroups(const RunOptions& o, TraceSet& set, SystemLayer& system_layer,
                    std::vector<std::string>* warnings) {
  const int n = system_layer.num_npus();
  const std::vector<std::string>& comm_group_files = set.comm_group_files;
  const std::unique_ptr<Placement>& placement = set.placement;
  const bool jobs = placement && placement->jobs();
  // Communicator groups: one file for the trace, or one per job (its 'comm-groups').
  for (size_t job = 0; job < comm_group_files.size(); ++job) {
    const std::string& file = comm_group_files[job];
    if (NoCommGroupFile(file, warnings)) continue;
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
  return Status::Ok();
}

StatusOr<std::unique_ptr<NcclTuner>> MakeRunTuner(const RunOptions& o, const Machine& m,
                                                  SystemLayer& system_layer, const Network& net) {
  // NCCL's per-call choice of algorithm and protocol (system key nccl-model).
  std::unique_ptr<NcclTuner> tuner;
  std::string model_path = o.nccl_model;
  if (model_path.empty() && !m.system.nccl_model.empty()) {
    model_path = m.system.nccl_model;
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
                                  ? o.system_config + ": 'nccl-model' " + m.system.nccl_model
                                  : "NCCL model " + o.nccl_model;
    StatusOr<NcclModel> model = LoadNcclModel(model_path);
    if (!model.ok()) return model.status().WithContext(where);
    StatusOr<std::unique_ptr<NcclTuner>> t =
        NcclTuner::Make(*model, o.nccl_algorithm, o.nccl_protocol, m.topology, m.net_params,
                        o.backend, m.params, &system_layer, net);
    if (!t.ok()) return t.status().WithContext(where);
    tuner = std::move(*t);
    tuner->set_forcing_flag(o.nccl_algorithm_flag);
  }
  return tuner;
}

std::vector<std::string> ImplementationListWarnings(const RunOptions& o, const Machine& m) {
  std::vector<std::string> out;
  // A list of algorithms shorter than the network's dimensions is ASTRA-sim's way of running a
  // collective over the first dimensions only: legal, and easy to do by mistake (a 1-D system
  // file on a 3-D network all-reduces inside dimension 0), so it is said.
  {
    const std::pair<const std::vector<std::string>*, const char*> lists[] = {
        {&m.system.all_reduce_implementation, "all-reduce-implementation"},
        {&m.system.reduce_scatter_implementation, "reduce-scatter-implementation"},
        {&m.system.all_gather_implementation, "all-gather-implementation"},
        {&m.system.all_to_all_implementation, "all-to-all-implementation"},
    };
    const std::vector<std::string>* customs[] = {
        &m.system.all_reduce_implementation_custom, &m.system.reduce_scatter_implementation_custom,
        &m.system.all_gather_implementation_custom, &m.system.all_to_all_implementation_custom};
    const size_t dims = m.topology.dims.size();
    std::map<size_t, std::string> short_lists;  // by length: the keys
    for (size_t i = 0; i < 4; ++i) {
      const size_t k = lists[i].first->size();
      if (k == 0 || k >= dims || !customs[i]->empty()) continue;
      // A one* or channelRing entry flattens the whole machine into one ring: it spans it.
      if (std::any_of(m.params.impl[i].begin(), m.params.impl[i].end(),
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
        std::count_if(m.topology.dims.begin(), m.topology.dims.end(), wide) > 1) {
      std::string keys;
      for (size_t i = 0; i < 4; ++i) {
        if (!customs[i]->empty()) continue;
        if (std::any_of(m.params.impl[i].begin(), m.params.impl[i].end(),
                        [](const AlgorithmSpec& a) {
                          return IsFlattened(a.kind) && a.kind != AlgorithmKind::kChannelRing;
                        })) {
          keys += (keys.empty() ? "'" : ", '") + std::string(lists[i].second) + "'";
        }
      }
      if (!keys.empty()) {
        out.push_back(
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
      for (size_t d = 0; d < k; ++d) spanned *= m.topology.dims[d].npus;
      out.push_back(
          o.system_config + ": " + keys + " list" +
          (keys.find(',') == std::string::npos ? "s " : " ") + std::to_string(k) + " algorithm" +
          (k > 1 ? "s" : "") + " for the network's " + std::to_string(dims) +
          " dimensions: as in ASTRA-sim, such a collective over all NPUs (no communicator group) "
          "runs over the first " +
          std::to_string(k) + " only (groups of " + std::to_string(spanned) + " of the " +
          std::to_string(m.num_npus()) +
          " NPUs); give one algorithm per dimension to span them all");
    }
  }
  return out;
}

}  // namespace orrery
