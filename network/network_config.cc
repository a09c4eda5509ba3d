#include "network/network_config.h"

#include <set>
#include <string>

#include "config/schema.h"
#include "network/machines.h"

namespace orrery {
namespace {

// The file as written, before it becomes a Topology.
struct NetworkFile {
  std::string machine = "dimensions";
  // machine: dimensions (ASTRA-sim's lists)
  std::vector<std::string> topology;
  std::vector<double> npus_count;
  std::vector<double> bandwidth;
  std::vector<double> latency;
  std::vector<double> lanes;  // optional, one per dimension
  // machine: torus, mesh
  std::vector<double> shape;
  double link_bandwidth = 0;
  double link_latency = 0;
  // machine: dgx
  int gpus_per_node = 8;
  int nodes = 0;
  double nvswitch_bandwidth = 0;
  double nvswitch_latency = 0;
  bool nic_per_gpu = true;
  int nics_per_node = 1;
  double nic_bandwidth = 0;
  double fabric_latency = 0;
  int leaf_radix = 0;
  int spines = 0;
  double oversubscription = 1;
  int pods = 1;
  int cores = 0;
  // machine: custom
  std::string custom_file;
  // every machine, read by the packet backend (and aware-forwarding by analytical-aware); defaults:
  // NetworkParams's
  uint64_t packet_mtu = NetworkParams().mtu;
  uint64_t packet_buffer_bytes = NetworkParams().buffer_bytes;
  NetworkParams::FlowControl packet_flow_control = NetworkParams().flow_control;
  NetworkParams::Routing packet_routing = NetworkParams().routing;
  uint64_t packet_pfc_xoff_bytes = NetworkParams().pfc_xoff_bytes;
  uint64_t packet_pfc_xon_bytes = NetworkParams().pfc_xon_bytes;
  // read by analytical-aware only
  NetworkParams::AwareForwarding aware_forwarding = NetworkParams().aware_forwarding;
  // every machine, read by analytical-aware and packet
  std::vector<std::string> slow_links;
  double slow_link_bandwidth_scale = 1;
};

const char* const kListKeys[] = {"topology", "npus_count", "bandwidth", "latency", "lanes"};

// Which keys each machine uses; `required` ones must be present.
struct KeyUse {
  const char* key;
  const char* machines;  // space-separated
  bool required;
};
const KeyUse kKeyUses[] = {
    {"topology", "dimensions", true},
    {"npus_count", "dimensions", true},
    {"bandwidth", "dimensions", true},
    {"latency", "dimensions", true},
    {"lanes", "dimensions", false},
    {"shape", "torus mesh", true},
    {"link-bandwidth", "torus mesh", true},
    {"link-latency", "torus mesh", true},
    {"gpus-per-node", "dgx", false},
    {"nodes", "dgx", true},
    {"nvswitch-bandwidth", "dgx", true},
    {"nvswitch-latency", "dgx", true},
    {"nic-per-gpu", "dgx", false},
    {"nics-per-node", "dgx", false},
    {"nic-bandwidth", "dgx", true},
    {"fabric-latency", "dgx", true},
    {"leaf-radix", "dgx", true},
    {"spines", "dgx", true},
    {"oversubscription", "dgx", false},
    {"pods", "dgx", false},
    {"cores", "dgx", false},
    {"custom-file", "custom", true},
};

bool UsedBy(const KeyUse& u, const std::string& machine) {
  return (" " + std::string(u.machines) + " ").find(" " + machine + " ") != std::string::npos;
}

// The keys of the machine, and the lists of machine: dimensions (ASTRA-sim's format).
void AddDimensionKeys(Schema<NetworkFile>& s) {
  using N = NetworkFile;
  s.Enum("machine", &N::machine, {"dimensions", "torus", "mesh", "dgx", "custom"})
      .Help(
          "What the file describes. dimensions: ASTRA-sim's per-dimension lists (topology, "
          "npus_count, bandwidth, latency). torus / mesh: a k-D torus or mesh (shape, "
          "link-bandwidth, link-latency). dgx: NVSwitch nodes on a leaf/spine[/core] fat-tree "
          "(gpus-per-node ... cores). custom: a device and link list (custom-file). Each machine "
          "uses only its own keys; network/README.md pictures each.")
      .AstraSim("Orrery only; absent means dimensions, ASTRA-sim's format.");
  const std::string dims_only = "required when machine is dimensions";
  s.StringList("topology", &N::topology)
      .Default(dims_only)
      .MinLength(1)
      .Allowed({"Ring", "FullyConnected", "Switch", "Mesh"})
      .Help(
          "Building block of each network dimension, dimension 0 first: Ring (bidirectional "
          "ring), FullyConnected (a link between every pair), Switch (every NPU linked to one "
          "switch), Mesh (a line: links both ways between neighbours, no wrap-around).")
      .AstraSim("Mesh is Orrery's.");
  s.NumberList("npus_count", &N::npus_count)
      .Default(dims_only)
      .MinLength(1)
      .Integral()
      .Greater(1)
      .AstraSim("Same rule there (> 1); here the product is also limited to 2^24.")
      .Help(
          "NPUs along each dimension; the machine has their product. NPU id = sum over d of "
          "address[d] * (product of npus_count below d): dimension 0 varies fastest.");
  s.NumberList("bandwidth", &N::bandwidth)
      .Default(dims_only)
      .MinLength(1)
      .Greater(0)
      .Unit("GB/s (GB = 2^30 B)")
      .Help("Bandwidth of each link of the dimension, per direction.");
  s.NumberList("latency", &N::latency)
      .Default(dims_only)
      .MinLength(1)
      .Min(0)
      .Max(1e12)
      .Unit("ns")
      .Help("Latency of each link (hop) of the dimension; may be fractional (kept to 1 ps).")
      .AstraSim("Same there; here also at most 1e12 ns.");
  s.NumberList("lanes", &N::lanes)
      .Default("1 per dimension")
      .MinLength(1)
      .Integral()
      .Min(1)
      .Max(65535)
      .AstraSim("Orrery only; read by the analytical backends (the packet backend needs 1).")
      .Help(
          "Parallel lanes per link of each dimension: a message takes one lane, at bandwidth / "
          "lanes, and up to lanes messages cross a link side by side, each paying its own "
          "latency; more wait first-come first-served. NCCL's channels run so: [16] with 16 "
          "active chunks gives each channel its own lane.");
}

// The keys of machine: torus and mesh.
void AddTorusMeshKeys(Schema<NetworkFile>& s) {
  using N = NetworkFile;
  const std::string orrery_only = "Orrery only.";
  s.NumberList("shape", &N::shape)
      .Default("required for torus, mesh")
      .MinLength(1)
      .Integral()
      .Greater(1)
      .AstraSim(orrery_only)
      .Help(
          "torus / mesh: NPUs along each dimension, dimension 0 first (varies fastest in the NPU "
          "id); also the logical dimensions of the system layer. [8, 8] is an 8 x 8 2-D torus.");
  s.Number("link-bandwidth", &N::link_bandwidth)
      .Default("required for torus, mesh")
      .Greater(0)
      .Unit("GB/s (GB = 2^30 B)")
      .AstraSim(orrery_only)
      .Help("torus / mesh: bandwidth of every link, per direction.");
  s.Number("link-latency", &N::link_latency)
      .Default("required for torus, mesh")
      .Min(0)
      .Max(1e12)
      .Unit("ns")
      .AstraSim(orrery_only)
      .Help("torus / mesh: latency of every link (hop).");
}

// The keys of machine: dgx and custom.
void AddDgxCustomKeys(Schema<NetworkFile>& s) {
  using N = NetworkFile;
  const std::string orrery_only = "Orrery only.";
  const std::string dgx_required = "required for dgx";
  s.Integer("gpus-per-node", &N::gpus_per_node)
      .Min(2)
      .AstraSim(orrery_only)
      .Help("dgx: GPUs in each node, all on the node's NVSwitch (logical dimension 0).");
  s.Integer("nodes", &N::nodes)
      .Default(dgx_required)
      .Min(2)
      .AstraSim(orrery_only)
      .Help("dgx: number of nodes (logical dimension 1). GPU id = node * gpus-per-node + local.");
  s.Number("nvswitch-bandwidth", &N::nvswitch_bandwidth)
      .Default(dgx_required)
      .Greater(0)
      .Unit("GB/s (GB = 2^30 B)")
      .AstraSim(orrery_only)
      .Help("dgx: bandwidth of each GPU's link to its NVSwitch, per direction.");
  s.Number("nvswitch-latency", &N::nvswitch_latency)
      .Default(dgx_required)
      .Min(0)
      .Max(1e12)
      .Unit("ns")
      .AstraSim(orrery_only)
      .Help("dgx: latency of a GPU <-> NVSwitch link (a GPU-to-GPU message in a node: 2 hops).");
  s.Bool("nic-per-gpu", &N::nic_per_gpu)
      .AstraSim(orrery_only)
      .Help(
          "dgx: 1 = every GPU has its own NIC (a link GPU <-> leaf); 0 = each node has "
          "nics-per-node NICs on its NVSwitch (links NVSwitch <-> leaf).");
  s.Integer("nics-per-node", &N::nics_per_node)
      .Min(1)
      .Max(4096)
      .AstraSim(orrery_only)
      .Help("dgx with nic-per-gpu 0: NICs per node, shared by its GPUs (ECMP picks one).");
  s.Number("nic-bandwidth", &N::nic_bandwidth)
      .Default(dgx_required)
      .Greater(0)
      .Unit("Gb/s (1e9 bit/s, as NICs are sold)")
      .AstraSim(orrery_only)
      .Help("dgx: bandwidth of each NIC (its link to the leaf), per direction. 400 = 50e9 B/s.");
  s.Number("fabric-latency", &N::fabric_latency)
      .Default(dgx_required)
      .Min(0)
      .Max(1e12)
      .Unit("ns")
      .AstraSim(orrery_only)
      .Help("dgx: latency of every fat-tree link: NIC <-> leaf, leaf <-> spine, spine <-> core.");
  s.Integer("leaf-radix", &N::leaf_radix)
      .Default(dgx_required)
      .Min(1)
      .AstraSim(orrery_only)
      .Help("dgx: NICs per leaf switch (NIC k is on leaf k / leaf-radix); must divide the NICs.");
  s.Integer("spines", &N::spines)
      .Default(dgx_required)
      .Min(1)
      .Max(65536)
      .AstraSim(orrery_only)
      .Help(
          "dgx: spine switches (per pod with pods > 1). Every leaf has one link to each spine "
          "(of its pod) of leaf-radix * nic-bandwidth / (oversubscription * spines). The whole "
          "machine may have at most 65536 switches (NVSwitches, leaves, spines x pods, cores) "
          "and 2^22 links, checked before it is built.");
  s.Number("oversubscription", &N::oversubscription)
      .Min(1)
      .Max(1e6)
      .AstraSim(orrery_only)
      .Help(
          "dgx: a leaf's NIC capacity divided by its uplink capacity (and, with pods > 1, a "
          "spine's downlink capacity divided by its core uplink capacity). 1 = full bisection.");
  s.Integer("pods", &N::pods)
      .Min(1)
      .AstraSim(orrery_only)
      .Help(
          "dgx: 1 = two tiers (leaf, spine); > 1 = three tiers: the leaves split evenly into "
          "pods, each with its own spines, and cores join every spine.");
  s.Integer("cores", &N::cores)
      .Default("required for dgx with pods > 1")
      .Min(1)
      .Max(65536)
      .AstraSim(orrery_only)
      .Help(
          "dgx with pods > 1: core switches; each spine has one link to each core of its "
          "downlink capacity / (oversubscription * cores).");
  s.String("custom-file", &N::custom_file)
      .Default("required for custom")
      .AstraSim(orrery_only)
      .Help(
          "custom: path of the device and link list (relative paths are relative to this "
          "YAML file); its format is in configs/README.md.");
}

// The keys of every machine: the packet backend's, aware-forwarding and slow links.
void AddEveryMachineKeys(Schema<NetworkFile>& s) {
  using N = NetworkFile;
  const std::string orrery_only = "Orrery only.";
  const std::string packet_only =
      "Orrery only; read by --network-backend packet, ignored otherwise.";
  s.Integer("packet-mtu", &N::packet_mtu)
      .Min(64)
      .Max(1 << 24)
      .Unit("bytes")
      .AstraSim(
          "Orrery only; read by --network-backend packet, and by analytical-aware with "
          "aware-forwarding: pipelined; ignored otherwise.")
      .Help(
          "packet: payload bytes per packet; a message is cut into ceil(size / mtu) packets. "
          "Packets are timed in whole picoseconds, so a packet must take at least 100 ps on "
          "every link (an MTU a faster link sends quicker is refused, naming the least it "
          "needs).");
  s.Enum("aware-forwarding", &N::aware_forwarding,
         {{"store-and-forward", NetworkParams::AwareForwarding::kStoreAndForward},
          {"pipelined", NetworkParams::AwareForwarding::kPipelined}})
      .AstraSim(
          "Orrery only; read by --network-backend analytical-aware, ignored otherwise. "
          "store-and-forward is ASTRA-sim's model.")
      .Help(
          "analytical-aware: how a chunk crosses relaying devices. store-and-forward: each hop "
          "takes the whole chunk before sending it on, per hop trunc(latency + size / bw) "
          "(ASTRA-sim). pipelined: the chunk moves in packets of packet-mtu bytes, each hop "
          "starts once the first packet is in; over H free links H x latency + size / bw + "
          "(H - 1) x mtu / bw, the packet backend's timing without per-packet events.");
  s.StringList("slow-links", &N::slow_links)
      .AstraSim(
          "Orrery only; read by analytical-aware and packet (an error with analytical-unaware).")
      .Help(
          "Links that run at slow-link-bandwidth-scale x their bandwidth (a degraded NVLink or "
          "NIC, a cable trained at a lower rate), named as --link-stats names them: "
          "'npu3->npu4', 'd1:npu2->sw1.2', 'npu8->leaf0#2'; 'a<->b' names both directions, "
          "and a name without its 'd<k>:' prefix or '#<n>' suffix also names the links those "
          "tell apart. A name that matches no link is an error.");
  s.Number("slow-link-bandwidth-scale", &N::slow_link_bandwidth_scale)
      .Greater(0)
      .AstraSim(orrery_only)
      .Help(
          "The slow-links' bandwidth as a fraction of what the machine gives them (0.5: half "
          "speed; above 1: faster); their latency is unchanged. Needs slow-links.");
  s.Integer("packet-buffer-bytes", &N::packet_buffer_bytes)
      .Min(0)
      .Max(1099511627776.0)
      .Unit("bytes")
      .AstraSim(packet_only)
      .Help(
          "packet: ingress buffer per port of every switch and relaying NPU. 0 = automatic, per "
          "link: ceil(2 x latency x bandwidth) + 16 MTU (line rate with credits). At least 2 MTU "
          "with credits; with PFC at least the headroom ceil(2 x latency x bandwidth) + 3 MTU "
          "plus one MTU.");
  s.Enum(
       "packet-flow-control", &N::packet_flow_control,
       {{"credit", NetworkParams::FlowControl::kCredit}, {"pfc", NetworkParams::FlowControl::kPfc}})
      .AstraSim(packet_only)
      .Help(
          "packet: how buffers stay lossless. credit: a port sends only with credits for the "
          "buffer at the far end (InfiniBand-like). pfc: a buffer above packet-pfc-xoff-bytes "
          "pauses the upstream port until it drains to packet-pfc-xon-bytes (RoCE-like).");
  s.Enum("packet-routing", &N::packet_routing,
         {{"ecmp", NetworkParams::Routing::kEcmp}, {"adaptive", NetworkParams::Routing::kAdaptive}})
      .AstraSim(packet_only)
      .Help(
          "packet: choice among equal shortest paths. ecmp: by a fixed hash of (source, "
          "destination, device), one path per flow. adaptive: per packet, the next hop with the "
          "fewest bytes queued (ties keep the ECMP choice).");
  s.Integer("packet-pfc-xoff-bytes", &N::packet_pfc_xoff_bytes)
      .Min(0)
      .Max(1099511627776.0)
      .Unit("bytes")
      .AstraSim(packet_only)
      .Help(
          "packet with pfc: ingress occupancy that pauses the upstream port. 0 = automatic: "
          "buffer - headroom. Otherwise 1 MTU .. buffer - headroom of every link.");
  s.Integer("packet-pfc-xon-bytes", &N::packet_pfc_xon_bytes)
      .Min(0)
      .Max(1099511627776.0)
      .Unit("bytes")
      .AstraSim(packet_only)
      .Help(
          "packet with pfc: occupancy at or below which a paused upstream port resumes. 0 = "
          "automatic: xoff - 2 MTU (xoff / 2 when xoff <= 2 MTU). Must be below xoff.");
}

Schema<NetworkFile> MakeNetworkSchema() {
  Schema<NetworkFile> s;
  AddDimensionKeys(s);
  AddTorusMeshKeys(s);
  AddDgxCustomKeys(s);
  AddEveryMachineKeys(s);
  return s;
}

BlockType BlockFromName(const std::string& name) {
  if (name == "FullyConnected") return BlockType::kFullyConnected;
  if (name == "Switch") return BlockType::kSwitch;
  if (name == "Mesh") return BlockType::kMesh;
  return BlockType::kRing;
}

// torus / mesh: the lists of the dimensional model with one bandwidth and latency.
StatusOr<Topology> TorusOrMeshFrom(const ConfigFile& file, const NetworkFile& n) {
  double total = 1;
  for (double d : n.shape) total *= d;
  if (total > kMaxNpus) {
    return Status::Error(file.WhereKey("shape") + ": key 'shape' describes " + FormatNumber(total) +
                         " NPUs; expected at most " + std::to_string(kMaxNpus));
  }
  std::vector<int> shape(n.shape.begin(), n.shape.end());
  return TorusOrMesh(n.machine == "torus", shape, Bandwidth::FromGiBps(n.link_bandwidth),
                     Time::FromNsDouble(n.link_latency));
}

StatusOr<Topology> DgxFrom(const ConfigFile& file, const NetworkFile& n,
                           const std::set<std::string>& present) {
  DgxSpec spec;
  spec.gpus_per_node = n.gpus_per_node;
  spec.nodes = n.nodes;
  spec.nvswitch_bandwidth = Bandwidth::FromGiBps(n.nvswitch_bandwidth);
  spec.nvswitch_latency = Time::FromNsDouble(n.nvswitch_latency);
  spec.nic_per_gpu = n.nic_per_gpu;
  spec.nics_per_node = n.nics_per_node;
  spec.nic_bandwidth = Bandwidth::FromBytesPerSec(n.nic_bandwidth * 1e9 / 8);
  spec.fabric_latency = Time::FromNsDouble(n.fabric_latency);
  spec.leaf_radix = n.leaf_radix;
  spec.spines = n.spines;
  spec.oversubscription = n.oversubscription;
  spec.pods = n.pods;
  spec.cores = n.cores;

  Status problems;
  const double gpus = static_cast<double>(n.gpus_per_node) * n.nodes;
  if (gpus > kMaxGraphNpus) {
    problems.Add(file.WhereKey("nodes") + ": nodes * gpus-per-node is " + FormatNumber(gpus) +
                 "; a dgx machine may have at most " + std::to_string(kMaxGraphNpus) +
                 " GPUs (its routes are a table of devices x GPUs)");
    return problems;
  }
  if (n.nic_per_gpu && present.count("nics-per-node")) {
    problems.Add(file.WhereKey("nics-per-node") +
                 ": key 'nics-per-node' is only used with nic-per-gpu: 0 (with nic-per-gpu 1 "
                 "every GPU has its own NIC)");
  }
  const int nics = n.nodes * (n.nic_per_gpu ? n.gpus_per_node : n.nics_per_node);
  if (nics % n.leaf_radix != 0) {
    problems.Add(file.WhereKey("leaf-radix") + ": key 'leaf-radix' is " +
                 std::to_string(n.leaf_radix) + " but the machine has " + std::to_string(nics) +
                 " NICs; expected a divisor of " + std::to_string(nics) +
                 " (every leaf gets leaf-radix NICs)");
  } else if ((nics / n.leaf_radix) % n.pods != 0) {
    problems.Add(file.WhereKey("pods") + ": key 'pods' is " + std::to_string(n.pods) +
                 " but there are " + std::to_string(nics / n.leaf_radix) +
                 " leaves; expected a divisor of the leaf count");
  }
  if (n.pods > 1 && !present.count("cores")) {
    problems.Add(file.path() + ": key 'cores' is missing; a three-tier fat-tree (pods " +
                 std::to_string(n.pods) + ") needs the number of core switches (>= 1)");
  }
  if (n.pods == 1 && present.count("cores")) {
    problems.Add(file.WhereKey("cores") +
                 ": key 'cores' is only used with pods > 1 (three tiers); this file has pods 1");
  }
  if (!problems.ok()) return problems;
  // Switches and links, counted before building any (spines x pods x cores overflows an int
  // and would build billions of links).
  const double leaves = static_cast<double>(nics) / n.leaf_radix;
  const double spines = static_cast<double>(n.spines) * n.pods;
  const double cores = n.pods > 1 ? n.cores : 0;
  const double switches = n.nodes + leaves + spines + cores;
  const double links = gpus + nics + leaves * n.spines + spines * cores;
  if (switches > kMaxDgxSwitches || links > kMaxDgxLinks) {
    problems.Add(file.WhereKey(n.pods > 1 ? "cores" : "spines") + ": spines " +
                 std::to_string(n.spines) + ", pods " + std::to_string(n.pods) +
                 (n.pods > 1 ? ", cores " + std::to_string(n.cores) : std::string()) +
                 " and leaf-radix " + std::to_string(n.leaf_radix) + " make " +
                 FormatNumber(switches) + " switches and " + FormatNumber(links) +
                 " links; a dgx machine may have at most " + std::to_string(kMaxDgxSwitches) +
                 " switches and " + std::to_string(kMaxDgxLinks) +
                 " links (fewer spines or cores, or a larger leaf-radix)");
    return problems;
  }
  StatusOr<Topology> t = BuildDgx(spec);
  if (!t.ok()) return t.status().WithContext(file.path());
  return t;
}

// The machine `file` describes, without its slow links.
StatusOr<Topology> MachineFrom(const std::string& path, const ConfigFile& file,
                               const NetworkFile& n, const std::set<std::string>& present,
                               Status problems) {
  if (file.Has("machine") && !present.count("machine"))
    return problems.Capped(kMaxProblemsPerFile, path);  // bad machine value
  if (present.count("slow-link-bandwidth-scale") && !file.Has("slow-links")) {
    problems.Add(
        file.WhereKey("slow-link-bandwidth-scale") +
        ": key 'slow-link-bandwidth-scale' scales the links of 'slow-links', which is "
        "missing; add slow-links: [\"npu0->npu1\", ...] (names as --link-stats gives them)");
  }

  // Each machine uses its own keys: a key of another machine is a mistake, not a no-op.
  for (const KeyUse& u : kKeyUses) {
    const bool used = UsedBy(u, n.machine);
    if (file.Has(u.key) && !used) {
      problems.Add(file.WhereKey(u.key) + ": key '" + u.key + "' is not used with machine: " +
                   n.machine + " (it belongs to machine: " + u.machines + ")");
    } else if (used && u.required && !file.Has(u.key)) {
      problems.Add(file.path() + ": required key '" + u.key +
                   "' is missing (machine: " + n.machine + " needs it)");
    }
  }
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, path);
  if (n.machine == "torus" || n.machine == "mesh") return TorusOrMeshFrom(file, n);
  if (n.machine == "dgx") return DgxFrom(file, n, present);
  if (n.machine == "custom") {
    std::string custom = n.custom_file;
    if (!custom.empty() && custom[0] != '/') {
      const size_t slash = path.rfind('/');
      if (slash != std::string::npos) custom = path.substr(0, slash + 1) + custom;
    }
    StatusOr<Topology> t = LoadCustomTopology(custom);
    if (!t.ok()) {
      return t.status().WithContext(file.WhereKey("custom-file") + ": custom-file '" +
                                    n.custom_file + "'");
    }
    return t;
  }

  // The lists describe one dimension per entry, so they must line up.
  std::string lengths;
  size_t first_length = 0;
  bool all_lists = true, same = true;
  for (const char* key : kListKeys) {
    const YAML::Node list = file.Get(key);
    if (!list.IsDefined() || !list.IsSequence()) {
      all_lists = all_lists && std::string(key) == "lanes";  // lanes is optional
      continue;
    }
    if (lengths.empty()) first_length = list.size();
    same = same && list.size() == first_length;
    lengths +=
        std::string(lengths.empty() ? "" : ", ") + key + " has " + std::to_string(list.size());
  }
  if (all_lists && !same) {
    problems.Add(path +
                 ": the lists topology, npus_count, bandwidth, latency (and lanes) must have "
                 "the same length (one entry per dimension), but " +
                 lengths);
  }
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, path);

  double total = 1;
  for (double d : n.npus_count) total *= d;
  if (total > kMaxNpus) {
    std::string product;
    for (double d : n.npus_count) product += (product.empty() ? "" : " x ") + FormatNumber(d);
    return Status::Error(file.WhereKey("npus_count") + ": key 'npus_count' describes " + product +
                         " = " + FormatNumber(total) + " NPUs; expected at most " +
                         std::to_string(kMaxNpus));
  }

  Topology t;
  for (size_t d = 0; d < n.topology.size(); ++d) {
    Dimension dim;
    dim.type = BlockFromName(n.topology[d]);
    dim.npus = static_cast<int>(n.npus_count[d]);
    dim.bandwidth = Bandwidth::FromGiBps(n.bandwidth[d]);
    dim.latency = Time::FromNsDouble(n.latency[d]);
    if (!n.lanes.empty()) dim.lanes = static_cast<int>(n.lanes[d]);
    t.dims.push_back(dim);
  }
  return t;
}

}  // namespace

StatusOr<Topology> LoadNetworkConfig(const std::string& path, NetworkParams* net_params) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  return LoadNetworkConfig(*file, net_params);
}

StatusOr<Topology> LoadNetworkConfig(const ConfigFile& config_file, NetworkParams* net_params) {
  const ConfigFile* file = &config_file;
  const std::string& path = file->path();
  NetworkFile n;
  std::set<std::string> present;
  Status problems = MakeNetworkSchema().Apply(*file, &n, &present);
  if (net_params != nullptr) {
    net_params->mtu = n.packet_mtu;
    net_params->buffer_bytes = n.packet_buffer_bytes;
    net_params->flow_control = n.packet_flow_control;
    net_params->routing = n.packet_routing;
    net_params->pfc_xoff_bytes = n.packet_pfc_xoff_bytes;
    net_params->pfc_xon_bytes = n.packet_pfc_xon_bytes;
    net_params->aware_forwarding = n.aware_forwarding;
  }
  StatusOr<Topology> t = MachineFrom(path, *file, n, present, std::move(problems));
  if (!t.ok()) return t;
  t->slow_links.names = n.slow_links;
  t->slow_links.bandwidth_scale = n.slow_link_bandwidth_scale;
  t->slow_links.where = file->WhereKey("slow-links");
  return t;
}

StatusOr<YAML::Node> NetworkConfigWithDefaults(const ConfigFile& file) {
  NetworkFile n;
  const Schema<NetworkFile> schema = MakeNetworkSchema();
  const Status problems = schema.Apply(file, &n);
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, file.path());
  if (n.machine == "dimensions" && n.lanes.empty()) n.lanes.assign(n.topology.size(), 1);
  return schema.WithDefaults(file, n, [&n](const std::string& key) {
    for (const KeyUse& u : kKeyUses) {
      if (key != u.key) continue;
      if (!UsedBy(u, n.machine)) return false;
      if (key == "nics-per-node") return !n.nic_per_gpu;
      if (key == "cores") return n.pods > 1;
      return true;
    }
    // machine, and the keys of every machine
    return key != "slow-link-bandwidth-scale" || !n.slow_links.empty();
  });
}

std::vector<KeyDoc> NetworkConfigKeys() { return MakeNetworkSchema().Docs(); }

}  // namespace orrery
