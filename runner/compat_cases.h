// For tests: ASTRA-sim 2.0's published example runs (compat/astra-sim, unchanged inputs) with
// ASTRA-sim's own finish times (compat/astra-sim/REFERENCE.md), and the options that run them.
//
//   for (const CompatCase& c : kCompatCases) {
//     RunOptions o = CompatOptions(CompatDir(), c);  // o.backend = ...; RunSimulation(o)
//   }
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/test_data.h"
#include "runner/run.h"

namespace orrery {

// ../shared/compat through the runfiles ("" when the test lacks `@orrery_shared//:compat`).
inline std::string CompatDir() { return SharedDir("compat"); }

struct CompatCase {
  const char* workload;  // under examples/workload/microbenchmarks/
  const char* network;   // under examples/network/analytical/
  const char* system;    // under examples/system/native_collectives/
  int64_t unaware_ns;    // ASTRA-sim's finish time, congestion-unaware backend
  int64_t aware_ns;      // congestion-aware backend
};

inline constexpr CompatCase kCompatCases[] = {
    {"all_gather/16npus_1MB/all_gather", "Ring_16npus.yml", "Ring_4chunks.json", 323560, 323560},
    {"all_gather/4npus_1MB/all_gather", "Ring_4npus.yml", "Ring_4chunks.json", 64744, 64744},
    {"all_gather/8npus_1MB/all_gather", "Ring_8npus.yml", "Ring_4chunks.json", 151016, 151016},
    {"all_reduce/16npus_1MB/all_reduce", "Ring_16npus.yml", "Ring_4chunks.json", 99640, 99640},
    {"all_reduce/4npus_1MB/all_reduce", "Ring_4npus.yml", "Ring_4chunks.json", 43000, 43000},
    {"all_reduce/8npus_1MB/all_reduce", "HGX-H100-validated.yml", "HGX-H100-validated.json", 55222,
     57426},
    {"all_reduce/8npus_1MB/all_reduce", "Ring_8npus.yml", "Ring_4chunks.json", 64440, 64440},
    {"all_to_all/16npus_1MB/all_to_all", "Ring_16npus.yml", "Ring_4chunks.json", 391240, 391240},
    {"all_to_all/4npus_1MB/all_to_all", "Ring_4npus.yml", "Ring_4chunks.json", 41560, 41560},
    {"all_to_all/8npus_1MB/all_to_all", "Ring_8npus.yml", "Ring_4chunks.json", 125480, 125480},
    {"reduce_scatter/16npus_1MB/reduce_scatter", "Ring_16npus.yml", "Ring_4chunks.json", 50740,
     50740},
    {"reduce_scatter/4npus_1MB/reduce_scatter", "Ring_4npus.yml", "Ring_4chunks.json", 22240,
     22240},
    {"reduce_scatter/8npus_1MB/reduce_scatter", "Ring_8npus.yml", "Ring_4chunks.json", 33080,
     33080},
};

// The example's files under `dir` (../shared/compat), with no remote memory expansion.
inline RunOptions CompatOptions(const std::string& dir, const CompatCase& c) {
  const std::string ex = dir + "/astra-sim/examples/";
  RunOptions o;
  o.workload = ex + "workload/microbenchmarks/" + c.workload;
  o.network_config = ex + "network/analytical/" + c.network;
  o.system_config = ex + "system/native_collectives/" + c.system;
  o.memory_config = ex + "remote_memory/analytical/no_memory_expansion.json";
  return o;
}

}  // namespace orrery
