#include "runner/system_params_from_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>

#include "config/schema.h"
#include "runner/options.h"
#include "system/algorithm_name.h"
#include "workload/custom_schedule.h"

namespace orrery {

StatusOr<SystemParams> SystemParamsFromConfig(const SystemConfig& c, const RunOptions& o,
                                              size_t num_dims) {
  SystemParams p;
  p.config_path = c.path;
  Status problems;
  const std::string where = c.path.empty() ? std::string("system configuration") : c.path;
  if (c.scheduling_policy == "LIFO") {
    p.scheduling = SchedulingPolicy::kLifo;
  } else if (c.scheduling_policy == "FIFO") {
    p.scheduling = SchedulingPolicy::kFifo;
  } else if (c.scheduling_policy == "EXPLICIT") {
    p.scheduling = SchedulingPolicy::kExplicit;
  } else {
    problems.Add(where + ": 'scheduling-policy' is '" + c.scheduling_policy +
                 "'; valid: LIFO, FIFO, EXPLICIT");
  }
  // The schema has already restricted both to these values.
  if (c.intra_dimension_scheduling == "smallestFirst") {
    p.intra_dimension = IntraDimensionPolicy::kSmallestFirst;
  } else if (c.intra_dimension_scheduling == "lessRemainingPhaseFirst") {
    p.intra_dimension = IntraDimensionPolicy::kLessRemainingPhaseFirst;
  } else if (c.intra_dimension_scheduling != "FIFO") {
    problems.Add(where + ": 'intra-dimension-scheduling' is '" + c.intra_dimension_scheduling +
                 "'; valid: FIFO, smallestFirst, lessRemainingPhaseFirst");
  }
  if (c.inter_dimension_scheduling == "offlineGreedy") {
    p.inter_dimension = InterDimensionPolicy::kOfflineGreedy;
  } else if (c.inter_dimension_scheduling == "roundRobin") {
    p.inter_dimension = InterDimensionPolicy::kRoundRobin;
  } else if (c.inter_dimension_scheduling != "ascending") {
    problems.Add(where + ": 'inter-dimension-scheduling' is '" + c.inter_dimension_scheduling +
                 "'; valid: ascending, offlineGreedy, roundRobin");
  }
  p.local_bw_aware = c.collective_optimization == "localBWAware";
  p.group_collectives = c.group_collectives == "hierarchical" ? GroupCollectives::kHierarchical
                                                              : GroupCollectives::kFlat;
  p.rooted = c.broadcast_reduce_algorithm == "ring" ? RootedAlgorithm::kRing
                                                    : RootedAlgorithm::kBinomialTree;
  p.active_chunks_per_dimension = c.active_chunks_per_dimension;
  p.p2p_chunk_bytes = static_cast<uint64_t>(c.p2p_chunk_size);
  p.preferred_dataset_splits = c.preferred_dataset_splits;
  if (c.endpoint_delay_ns.has_value()) {
    // The key is whole ns (the loader refuses fractions); the product is truncated as ASTRA-sim
    // does (int communication_delay = communication_delay * injection_scale), so 10 x 1.55 runs
    // as 15 ns there and here. Too large for int64 picoseconds: Time::FromNs saturates it, and
    // the first hand-off reports the overflow.
    const double ns = *c.endpoint_delay_ns * o.injection_scale;
    p.endpoint_delay_ns = ns < 9.2e15 ? static_cast<int64_t>(ns) : INT64_MAX;
  } else {
    p.endpoint_delay_ns = 10;
  }
  p.local_mem_bw_bytes_per_ns = c.local_mem_bw_gbps;  // GB/s (1e9 B/s) == bytes per ns

  if (o.queues_per_dim.empty()) {
    p.queues_per_dim.assign(num_dims, 1);
  } else if (o.queues_per_dim.size() == 1) {
    p.queues_per_dim.assign(num_dims, o.queues_per_dim[0]);
  } else if (o.queues_per_dim.size() == num_dims) {
    p.queues_per_dim = o.queues_per_dim;
  } else {
    problems.Add("--num-queues-per-dim has " + std::to_string(o.queues_per_dim.size()) +
                 " values but the network has " + std::to_string(num_dims) +
                 " dimensions; give one value (for every dimension) or one per dimension");
  }
  for (int q : o.queues_per_dim) {
    if (q < 1) problems.Add("--num-queues-per-dim must be >= 1, got " + std::to_string(q));
  }

  const std::pair<const std::vector<std::string>*, const char*> lists[kNumNativeColl] = {
      {&c.all_reduce_implementation, "all-reduce-implementation"},
      {&c.reduce_scatter_implementation, "reduce-scatter-implementation"},
      {&c.all_gather_implementation, "all-gather-implementation"},
      {&c.all_to_all_implementation, "all-to-all-implementation"},
  };
  for (int i = 0; i < kNumNativeColl; ++i) {
    for (const std::string& name : *lists[i].first) {
      StatusOr<AlgorithmSpec> a = ParseAlgorithm(name);
      if (a.ok()) {
        p.impl[i].push_back(*a);
      } else {
        problems.Merge(a.status().WithContext(where + ": '" + lists[i].second + "'"));
      }
    }
  }
  p.model_shared_bus = c.model_shared_bus;
  // ASTRA-sim keeps L, o and g in whole ticks (ns): fractions are dropped there too.
  p.loggp.L = static_cast<int64_t>(c.logp_L);
  p.loggp.o = static_cast<int64_t>(c.logp_o);
  p.loggp.g = static_cast<int64_t>(c.logp_g);
  p.loggp.G = c.logp_G;
  p.loggp.local_reduction_delay = c.local_reduction_delay;

  p.rendezvous = o.rendezvous;
  p.comm_scale = o.comm_scale;  // its range is checked with the other scales (RunSimulation)
  if (!problems.ok()) return problems;
  return p;
}

Status ConfigureCustomCollectives(const SystemConfig& c, SystemLayer& layer) {
  const std::string where = c.path.empty() ? std::string("system configuration") : c.path;
  Status problems;
  std::map<std::string, std::shared_ptr<const CustomAlgorithm>> loaded;  // by prefix
  auto load = [&](const std::string& prefix,
                  const std::string& key) -> std::shared_ptr<const CustomAlgorithm> {
    auto it = loaded.find(prefix);
    if (it != loaded.end()) return it->second;
    StatusOr<std::shared_ptr<const CustomAlgorithm>> a = LoadCustomAlgorithm(prefix);
    if (!a.ok()) {
      problems.Merge(a.status().WithContext(where + ": '" + key + "'"));
      return nullptr;
    }
    return loaded[prefix] = *a;
  };
  const struct {
    const std::vector<std::string>* prefixes;
    const char* key;
    CollectiveType type;
  } by_type[] = {
      {&c.all_reduce_implementation_custom, "all-reduce-implementation-custom",
       CollectiveType::kAllReduce},
      {&c.reduce_scatter_implementation_custom, "reduce-scatter-implementation-custom",
       CollectiveType::kReduceScatter},
      {&c.all_gather_implementation_custom, "all-gather-implementation-custom",
       CollectiveType::kAllGather},
      {&c.all_to_all_implementation_custom, "all-to-all-implementation-custom",
       CollectiveType::kAllToAll},
  };
  for (const auto& t : by_type) {
    if (t.prefixes->empty()) continue;  // the loader checked there is exactly one entry
    if (auto a = load(t.prefixes->front(), t.key)) layer.custom().SetForType(t.type, a);
  }
  const std::string& per_node = c.per_node_custom_implementation;
  if (!per_node.empty()) {
    const std::string key = where + ": 'per-node-custom-implementation' " + per_node;
    if (const std::string why = NotARegularFile(per_node); !why.empty()) {
      problems.Add(key + ": " + why);
      return problems;
    }
    // One document: YAML::LoadFile would drop a second one (after '---') without a word.
    StatusOr<YAML::Node> document = ReadYamlDocument(per_node);
    if (!document.ok()) {
      problems.Add(key + ": cannot read it as YAML (" + document.status().message() +
                   "; relative paths start from the working directory, as in ASTRA-sim)");
      return problems;
    }
    const YAML::Node root = *document;
    if (!root.IsMap()) {
      problems.Add(key + ": expected a map from Chakra node id to ET prefix, e.g. '42: algos/ar'");
      return problems;
    }
    std::map<unsigned long long, std::string> seen;  // node id -> as written
    for (const auto& entry : root) {
      const std::string id_text = entry.first.Scalar();
      // Digits only: strtoull alone takes '-1' (as 2^64 - 1), a sign or spaces, and saturates.
      char* end = nullptr;
      errno = 0;
      const unsigned long long id = std::strtoull(id_text.c_str(), &end, 10);
      const bool digits =
          !id_text.empty() &&
          std::all_of(id_text.begin(), id_text.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || *end != '\0' || errno == ERANGE || !entry.second.IsScalar()) {
        problems.Add(key + ": entry '" + id_text +
                     "': expected '<node id>: <ET prefix>' with an integer id from 0 to "
                     "18446744073709551615");
        continue;
      }
      if (auto [at, added] = seen.emplace(id, id_text); !added) {
        problems.Add(key + ": node " + std::to_string(id) + " is listed twice ('" + at->second +
                     "' and '" + id_text + "'); expected each node once");
        continue;
      }
      if (auto a = load(entry.second.Scalar(), "per-node-custom-implementation")) {
        layer.custom().SetForNode(id, a);
      }
    }
  }
  return problems;
}

}  // namespace orrery
