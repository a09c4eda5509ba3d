// The network configuration file (ASTRA-sim's analytical network YAML).
//
//   StatusOr<Topology> t = LoadNetworkConfig("Ring_8npus.yml");
//   // topology: [Ring, Switch]  npus_count: [4, 2]  bandwidth: [150, 25]  latency: [100, 1000]
//   int n = t->num_npus();   // 8
//
// Bandwidth is GB/s per link per direction with GB = 2^30 bytes (as ASTRA-sim); latency is ns
// per hop. The four lists must have the same length; npus_count > 1, bandwidth > 0, latency >= 0.
//
// Beyond ASTRA-sim, `machine:` selects a whole machine described by a few keys instead:
//   machine: torus   shape: [8, 8]  link-bandwidth: 62  link-latency: 500      (or mesh)
//   machine: dgx     gpus-per-node: 8  nodes: 8  nvswitch-bandwidth: 450 ...   (fat-tree)
//   machine: custom  custom-file: cluster.topo                                  (device list)
// Every key and the custom file format: configs/README.md.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"
#include "config/schema.h"
#include "network/network.h"

namespace orrery {

// `net_params`, when given, receives the `packet-*` and `aware-forwarding` keys (defaults when
// absent).
StatusOr<Topology> LoadNetworkConfig(const std::string& path, NetworkParams* net_params = nullptr);
// The same for a file already read (or a section of a printed configuration).
StatusOr<Topology> LoadNetworkConfig(const ConfigFile& file, NetworkParams* net_params = nullptr);

// The configuration `file` gives with every key's effective value: its keys as written, and the
// others its machine uses with their defaults (lanes: 1 per dimension; nics-per-node only with
// nic-per-gpu 0, cores only with pods > 1, slow-link-bandwidth-scale only with slow-links, as
// the loader refuses them otherwise). Errors: LoadNetworkConfig's schema checks.
StatusOr<YAML::Node> NetworkConfigWithDefaults(const ConfigFile& file);

// Every key LoadNetworkConfig accepts (all four are required).
std::vector<KeyDoc> NetworkConfigKeys();

// A custom topology file (format in configs/README.md): NPUs, switches, bidirectional links,
// optional logical dimensions. Errors name the file and line. The routes are built (and the
// machine checked to be connected) before it returns.
StatusOr<Topology> LoadCustomTopology(const std::string& path);

// The largest machine a network file may describe (product of npus_count).
constexpr int kMaxNpus = 1 << 24;
// The largest dgx or custom machine (routing keeps a table of devices x NPUs).
constexpr int kMaxGraphNpus = 8192;
// A dgx machine's switches (NVSwitches, leaves, spines, cores) and links (each both ways).
constexpr int kMaxDgxSwitches = 1 << 16;
constexpr int kMaxDgxLinks = 1 << 22;

}  // namespace orrery
