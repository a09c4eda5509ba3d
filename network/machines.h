// Whole machines described by a few numbers: torus / mesh, and a DGX/HGX-style cluster of
// NVSwitch nodes on a fat-tree. Each comes with logical dimensions for the system layer.
//
//   Topology t = TorusOrMesh(/*torus=*/true, {8, 8}, Bandwidth::FromGiBps(62), Time::FromNs(500));
//   // t.dims = [Ring 8, Ring 8]: the congestion-aware backend builds the wrap-around links.
//
//   DgxSpec s;  s.gpus_per_node = 8;  s.nodes = 8;  ...  s.leaf_radix = 32;  s.spines = 4;
//   Topology dgx = BuildDgx(s);  // dgx.graph: GPUs, NVSwitches, leaves, spines; dims = [8, 8]
//
// Pictures in words of what each builds: network/README.md. Values are assumed valid (the
// network config loader checks them and names the bad key).
#pragma once

#include <vector>

#include "common/units.h"
#include "network/graph.h"
#include "network/network.h"

namespace orrery {

// `shape[d]` NPUs along dimension d (dimension 0 varies fastest). Torus: Ring dimensions (a link
// each way to both neighbours, wrap-around included, shorter way round); mesh: Mesh dimensions
// (no wrap-around). Routing is dimension-ordered. Every link has `bw` per direction and `latency`.
Topology TorusOrMesh(bool torus, const std::vector<int>& shape, Bandwidth bw, Time latency);

struct DgxSpec {
  int gpus_per_node = 8;
  int nodes = 2;
  Bandwidth nvswitch_bandwidth;  // per GPU <-> NVSwitch link, per direction
  Time nvswitch_latency;
  bool nic_per_gpu = true;  // else `nics_per_node` NICs on the node's NVSwitch
  int nics_per_node = 1;
  Bandwidth nic_bandwidth;  // per NIC, per direction
  Time fabric_latency;      // every NIC, leaf, spine and core link
  int leaf_radix = 32;      // NICs per leaf switch
  int spines = 1;           // per pod
  double oversubscription = 1;
  int pods = 1;  // > 1: three tiers
  int cores = 0;
};

// Number of NICs, leaves and the derived uplink bandwidths, for messages and docs.
struct DgxShape {
  int nics = 0;
  int leaves = 0;
  int leaves_per_pod = 0;
  Bandwidth leaf_spine;  // per leaf -> spine link
  Bandwidth spine_core;  // per spine -> core link (three tiers)
};
DgxShape ShapeOf(const DgxSpec& s);

// Builds the graph (routes included) and the logical dimensions [gpus_per_node, nodes].
// Fails only when the graph is too large to route.
StatusOr<Topology> BuildDgx(const DgxSpec& s);

}  // namespace orrery
