#include "runner/system_params_from_config.h"

#include <cstdlib>

#include "runner/run.h"

namespace orrery {

StatusOr<AlgorithmSpec> ParseAlgorithm(const std::string& name) {
  static const struct {
    const char* name;
    AlgorithmKind kind;
  } kNames[] = {
      {"ring", AlgorithmKind::kRing},
      {"oneRing", AlgorithmKind::kOneRing},
      {"direct", AlgorithmKind::kDirect},
      {"oneDirect", AlgorithmKind::kOneDirect},
      {"halvingDoubling", AlgorithmKind::kHalvingDoubling},
      {"oneHalvingDoubling", AlgorithmKind::kOneHalvingDoubling},
      {"doubleBinaryTree", AlgorithmKind::kDoubleBinaryTree},
      {"nvls", AlgorithmKind::kNvls},
      {"channelRing", AlgorithmKind::kChannelRing},
  };
  std::string base;
  int window = -1;
  const std::string problem = SplitCollectiveAlgorithm(name, &base, &window);
  if (!problem.empty()) {
    return Status::Error("collective algorithm '" + name + "': expected " + problem);
  }
  std::vector<std::string> valid;
  for (const auto& n : kNames) {
    if (base == n.name) return AlgorithmSpec{n.kind, window};
    valid.push_back(n.name);
  }
  std::string message = "unknown collective algorithm '" + name + "'";
  const std::string guess = DidYouMean(base, valid);
  if (!guess.empty()) message += " (did you mean '" + guess + "'?)";
  message +=
      "; valid: ring, oneRing, direct, direct<N>, oneDirect, oneDirect<N>, "
      "halvingDoubling, oneHalvingDoubling, doubleBinaryTree, nvls, channelRing";
  return Status::Error(message);
}

StatusOr<SystemParams> SystemParamsFromConfig(const SystemConfig& c, const RunOptions& o,
                                              size_t num_dims) {
  SystemParams p;
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
  p.local_bw_aware = c.collective_optimization == "localBWAware";
  p.active_chunks_per_dimension = c.active_chunks_per_dimension;
  p.preferred_dataset_splits = c.preferred_dataset_splits;
  if (c.endpoint_delay_ns.has_value()) {
    p.endpoint_delay_ns = static_cast<int64_t>(*c.endpoint_delay_ns * o.injection_scale);
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
  if (!c.all_reduce_implementation_custom.empty() ||
      !c.reduce_scatter_implementation_custom.empty() ||
      !c.all_gather_implementation_custom.empty() || !c.all_to_all_implementation_custom.empty() ||
      !c.per_node_custom_implementation.empty()) {
    problems.Add(where +
                 ": custom (MSCCL-style) collective implementations are not simulated in this "
                 "version; use the native '*-implementation' lists");
  }
  if (c.model_shared_bus) {
    problems.Add(where +
                 ": 'model-shared-bus' = 1 (the LogGP shared-bus model) is not "
                 "simulated in this version; set it to 0");
  }
  p.rendezvous = o.rendezvous;
  if (o.comm_scale <= 0) {
    problems.Add("--comm-scale must be > 0, got " + std::to_string(o.comm_scale));
  }
  p.comm_scale = o.comm_scale;
  if (!problems.ok()) return problems;
  return p;
}

}  // namespace orrery
