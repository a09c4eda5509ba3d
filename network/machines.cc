#include "network/machines.h"

#include <memory>
#include <string>
#include <utility>

namespace orrery {

Topology TorusOrMesh(bool torus, const std::vector<int>& shape, Bandwidth bw, Time latency) {
  Topology t;
  for (int n : shape) {
    Dimension d;
    d.type = torus ? BlockType::kRing : BlockType::kMesh;
    d.npus = n;
    d.bandwidth = bw;
    d.latency = latency;
    t.dims.push_back(d);
  }
  return t;
}

DgxShape ShapeOf(const DgxSpec& s) {
  DgxShape shape;
  shape.nics = s.nodes * (s.nic_per_gpu ? s.gpus_per_node : s.nics_per_node);
  shape.leaves = shape.nics / s.leaf_radix;
  shape.leaves_per_pod = shape.leaves / s.pods;
  // A leaf's uplinks carry 1 / oversubscription of what its NICs can send, split over the spines
  // it reaches; likewise a spine's uplinks carry 1 / oversubscription of its downlinks.
  const double leaf_down = s.leaf_radix * s.nic_bandwidth.bytes_per_sec();
  shape.leaf_spine = Bandwidth::FromBytesPerSec(leaf_down / (s.oversubscription * s.spines));
  if (s.pods > 1) {
    const double spine_down = shape.leaves_per_pod * shape.leaf_spine.bytes_per_sec();
    shape.spine_core = Bandwidth::FromBytesPerSec(spine_down / (s.oversubscription * s.cores));
  }
  return shape;
}

StatusOr<Topology> BuildDgx(const DgxSpec& s) {
  const DgxShape shape = ShapeOf(s);
  auto g = std::make_shared<PhysicalGraph>();
  const int gpus = s.gpus_per_node * s.nodes;
  g->AddNpus(gpus, /*forwards=*/false);  // GPUs do not relay other GPUs' traffic
  std::vector<int> nvswitch(s.nodes), leaf(shape.leaves), spine(s.spines * s.pods), core(s.cores);
  for (int n = 0; n < s.nodes; ++n)
    nvswitch[n] = g->AddDevice("nvs" + std::to_string(n), false, true);
  for (int l = 0; l < shape.leaves; ++l)
    leaf[l] = g->AddDevice("leaf" + std::to_string(l), false, true);
  for (size_t p = 0; p < spine.size(); ++p) {
    spine[p] = g->AddDevice("spine" + std::to_string(p), false, true);
  }
  if (s.pods > 1) {
    for (int c = 0; c < s.cores; ++c)
      core[c] = g->AddDevice("core" + std::to_string(c), false, true);
  }
  // Inside each node: every GPU to the node's NVSwitch.
  for (int gpu = 0; gpu < gpus; ++gpu) {
    g->AddBidirectional(gpu, nvswitch[gpu / s.gpus_per_node], s.nvswitch_bandwidth,
                        s.nvswitch_latency);
  }
  // NICs: NIC k is on leaf k / leaf_radix. A NIC is its link to the leaf. Its routing cost is 3,
  // so a GPU reaches the GPUs of its own node over the NVSwitch (cost 2), never over the leaf
  // (cost 6), even when both are on the same leaf; and with a node's NICs on its NVSwitch
  // (nic-per-gpu 0), a path through another node's NVSwitch (leaf, NVSwitch, leaf: cost 6) never
  // ties with the fabric's longest (leaf, spine, core, spine, leaf: cost 4). At cost 2 it did,
  // and ECMP sent some flows through a third node's NVSwitch, skipping the cores.
  for (int k = 0; k < shape.nics; ++k) {
    const int from = s.nic_per_gpu ? k : nvswitch[k / s.nics_per_node];
    g->AddBidirectional(from, leaf[k / s.leaf_radix], s.nic_bandwidth, s.fabric_latency, 3);
  }
  // Each leaf to every spine of its pod; each spine to every core.
  for (int l = 0; l < shape.leaves; ++l) {
    const int pod = l / shape.leaves_per_pod;
    for (int k = 0; k < s.spines; ++k) {
      g->AddBidirectional(leaf[l], spine[pod * s.spines + k], shape.leaf_spine, s.fabric_latency);
    }
  }
  if (s.pods > 1) {
    for (int sp : spine) {
      for (int c : core) g->AddBidirectional(sp, c, shape.spine_core, s.fabric_latency);
    }
  }
  g->description = "dgx: " + std::to_string(s.nodes) + " nodes x " +
                   std::to_string(s.gpus_per_node) + " GPUs, " + std::to_string(shape.nics) +
                   " NICs, " + std::to_string(shape.leaves) + " leaves, " +
                   std::to_string(spine.size()) + " spines" +
                   (s.pods > 1 ? ", " + std::to_string(s.cores) + " cores" : "");
  Status routed = g->BuildRoutes();
  if (!routed.ok()) return routed;

  Topology t;
  Dimension node;
  node.type = BlockType::kSwitch;
  node.npus = s.gpus_per_node;
  node.bandwidth = s.nvswitch_bandwidth;
  node.latency = s.nvswitch_latency;
  Dimension across;
  across.type = BlockType::kSwitch;
  across.npus = s.nodes;
  across.bandwidth = s.nic_bandwidth;
  across.latency = s.fabric_latency;
  t.dims = {node, across};
  t.graph = std::move(g);
  return t;
}

}  // namespace orrery
