// The system configuration file (ASTRA-sim's system JSON; any YAML works, JSON is YAML).
//
//   StatusOr<SystemConfig> c = LoadSystemConfig("configs/system/ring.json");
//   if (!c.ok()) { std::cerr << c.status().message(); return 1; }
//   int splits = c->preferred_dataset_splits;
//
// Every key is declared once in system_config.cc with its meaning, unit and default, and is
// documented in configs/README.md. Unknown keys, wrong types and impossible values are errors
// naming the file, the key, the bad value and what would be valid (with a "did you mean").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"

namespace orrery {

struct SystemConfig {
  std::string scheduling_policy = "LIFO";                   // LIFO | FIFO | EXPLICIT
  std::string collective_optimization = "baseline";         // baseline | localBWAware
  std::string group_collectives = "flat";                   // flat | hierarchical
  std::string broadcast_reduce_algorithm = "binomialTree";  // binomialTree | ring
  int active_chunks_per_dimension = 1;
  int preferred_dataset_splits = 1;
  // endpoint-delay in ns; empty when the key is absent (then 10 ns and --injection-scale does
  // not apply, as in ASTRA-sim).
  std::optional<double> endpoint_delay_ns;
  int local_reduction_delay = 1;  // cycles (shared-bus model only)
  bool model_shared_bus = false;
  double logp_L = 0, logp_o = 0, logp_g = 0, logp_G = 0;
  double peak_perf_tflops = 0;   // TFLOPS (1e12 FLOP/s)
  double local_mem_bw_gbps = 0;  // GB/s, decimal (1e9 B/s)
  bool roofline_enabled = false;
  // A GPU model (compute/gpu_model.h) whose rates the roofline takes in place of peak-perf and
  // local-mem-bw; relative to this file's directory. "" = those keys.
  std::string gpu_model;
  // What real collective libraries add to the network's time (Orrery's; see configs/README.md).
  double collective_launch_latency_ns = 0;  // fixed cost before every collective starts
  double protocol_efficiency = 1;           // payload share of the bytes a collective moves
  // An NCCL model (nccl/nccl_model.h) choosing each collective's algorithm, protocol, floor and
  // efficiency by size and group; relative to this file's directory. "" = the keys above.
  std::string nccl_model;
  // Collectives, sends and remote-memory accesses an NPU runs at once (1: ASTRA-sim's one slot).
  int communication_slots = 1;
  // Bytes per piece of a point-to-point message (NCCL's p2p chunk); 0 = whole messages.
  int64_t p2p_chunk_size = 0;
  bool trace_enabled = false;
  bool replay_only = false;
  bool track_local_mem = false;
  std::string local_mem_trace_filename = "local_mem_trace";
  // Native algorithm names per logical dimension, as written ("ring", "direct<4>", ...).
  std::vector<std::string> all_reduce_implementation;
  std::vector<std::string> reduce_scatter_implementation;
  std::vector<std::string> all_gather_implementation;
  std::vector<std::string> all_to_all_implementation;
  // Custom (MSCCL-style) algorithms: exactly one ET prefix each when present.
  std::vector<std::string> all_reduce_implementation_custom;
  std::vector<std::string> reduce_scatter_implementation_custom;
  std::vector<std::string> all_gather_implementation_custom;
  std::vector<std::string> all_to_all_implementation_custom;
  std::string per_node_custom_implementation;
  // Accepted for compatibility with ASTRA-sim 1.0 example files.
  std::string intra_dimension_scheduling = "FIFO";
  std::string inter_dimension_scheduling = "ascending";
  bool boost_mode = false;
  std::string path;  // the file it came from, for messages
};

StatusOr<SystemConfig> LoadSystemConfig(const std::string& path);

// Every key LoadSystemConfig accepts, with type, unit, default and meaning (for docs and --help).
std::vector<KeyDoc> SystemConfigKeys();

// "" when `name` is a native collective algorithm ("ring", "direct<4>", ...); otherwise what
// would be valid, with a suggestion.
std::string CheckCollectiveAlgorithmName(const std::string& name);

// Splits a native algorithm name into its base and direct window: "direct4" and "direct<4>"
// (ASTRA-sim spells it the first way) -> ("direct", 4); "ring" -> ("ring", -1). Returns "" or
// what would be valid; CheckCollectiveAlgorithmName uses it.
std::string SplitCollectiveAlgorithm(const std::string& name, std::string* base, int* window);

}  // namespace orrery
