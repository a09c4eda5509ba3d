// The network configuration file (ASTRA-sim's analytical network YAML).
//
//   StatusOr<Topology> t = LoadNetworkConfig("Ring_8npus.yml");
//   // topology: [Ring, Switch]  npus_count: [4, 2]  bandwidth: [150, 25]  latency: [100, 1000]
//   int n = t->num_npus();   // 8
//
// Bandwidth is GB/s per link per direction with GB = 2^30 bytes (as ASTRA-sim); latency is ns
// per hop. The four lists must have the same length; npus_count > 1, bandwidth > 0, latency >= 0.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"
#include "network/network.h"

namespace orrery {

StatusOr<Topology> LoadNetworkConfig(const std::string& path);

// Every key LoadNetworkConfig accepts (all four are required).
std::vector<KeyDoc> NetworkConfigKeys();

// The largest machine a network file may describe (product of npus_count).
constexpr int kMaxNpus = 1 << 24;

}  // namespace orrery
