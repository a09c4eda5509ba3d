// The first stage of a run: the machine it simulates, as loaded and checked from the network,
// system and memory configurations, with the per-NPU knobs the flags add.
//
//   StatusOr<Machine> m = LoadMachine(options);   // every problem of the files and flags
//   if (!m.ok()) return m.status();
//   MakeNetwork(options.backend, sim, m->topology, m->net_params);
#pragma once

#include <vector>

#include "common/status.h"
#include "compute/roofline.h"
#include "config/system_config.h"
#include "memory/memory_config.h"
#include "network/network.h"
#include "runner/options.h"
#include "system/system_params.h"

namespace orrery {

struct Machine {
  Topology topology;
  NetworkParams net_params;
  SystemConfig system;
  MemoryConfig memory;      // NO_MEMORY_EXPANSION without --remote-memory-configuration
  SystemParams params;      // what the system layer needs, from `system` and the flags
  RooflineParams roofline;  // peak-perf and local-mem-bw, or the gpu-model's rates when named
  std::vector<double> npu_scales;   // --npu-compute-scale's factor per NPU (1 = as traced)
  std::vector<bool> timeline_npus;  // --timeline-npus: per NPU, shown; empty = every NPU
  int num_npus() const { return topology.num_npus(); }
};

// The flags alone: what is required, what excludes what, and the scales' ranges; every problem.
Status CheckRunOptions(const RunOptions& o);
// The flags, then the configuration files, each problem naming its file and key.
StatusOr<Machine> LoadMachine(const RunOptions& o);

}  // namespace orrery
