#include "config/network_config.h"

#include "config/schema.h"

namespace orrery {
namespace {

// The file as written, before it becomes a Topology.
struct NetworkFile {
  std::vector<std::string> topology;
  std::vector<double> npus_count;
  std::vector<double> bandwidth;
  std::vector<double> latency;
};

const char* const kListKeys[] = {"topology", "npus_count", "bandwidth", "latency"};

Schema<NetworkFile> MakeNetworkSchema() {
  using N = NetworkFile;
  Schema<N> s;
  s.StringList("topology", &N::topology)
      .Required()
      .MinLength(1)
      .Allowed({"Ring", "FullyConnected", "Switch"})
      .Help(
          "Building block of each network dimension, dimension 0 first: Ring (bidirectional "
          "ring), FullyConnected (a link between every pair), Switch (every NPU linked to one "
          "switch).");
  s.NumberList("npus_count", &N::npus_count)
      .Required()
      .MinLength(1)
      .Integral()
      .Greater(1)
      .AstraSim("Same rule there (> 1); here the product is also limited to 2^24.")
      .Help(
          "NPUs along each dimension; the machine has their product. NPU id = sum over d of "
          "address[d] * (product of npus_count below d): dimension 0 varies fastest.");
  s.NumberList("bandwidth", &N::bandwidth)
      .Required()
      .MinLength(1)
      .Greater(0)
      .Unit("GB/s (GB = 2^30 B)")
      .Help("Bandwidth of each link of the dimension, per direction.");
  s.NumberList("latency", &N::latency)
      .Required()
      .MinLength(1)
      .Min(0)
      .Max(1e12)
      .Unit("ns")
      .Help("Latency of each link (hop) of the dimension; may be fractional (kept to 1 ps).")
      .AstraSim("Same there; here also at most 1e12 ns.");
  return s;
}

BlockType BlockFromName(const std::string& name) {
  if (name == "FullyConnected") return BlockType::kFullyConnected;
  if (name == "Switch") return BlockType::kSwitch;
  return BlockType::kRing;
}

}  // namespace

StatusOr<Topology> LoadNetworkConfig(const std::string& path) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  NetworkFile n;
  Status problems = MakeNetworkSchema().Apply(*file, &n);

  // The lists describe one dimension per entry, so they must line up.
  std::string lengths;
  size_t first_length = 0;
  bool all_lists = true, same = true;
  for (const char* key : kListKeys) {
    const YAML::Node list = file->Get(key);
    if (!list.IsDefined() || !list.IsSequence()) {
      all_lists = false;
      continue;
    }
    if (lengths.empty()) first_length = list.size();
    same = same && list.size() == first_length;
    lengths +=
        std::string(lengths.empty() ? "" : ", ") + key + " has " + std::to_string(list.size());
  }
  if (all_lists && !same) {
    problems.Add(path +
                 ": the lists topology, npus_count, bandwidth and latency must have the "
                 "same length (one entry per dimension), but " +
                 lengths);
  }
  if (!problems.ok()) return problems;

  double total = 1;
  for (double d : n.npus_count) total *= d;
  if (total > kMaxNpus) {
    std::string product;
    for (double d : n.npus_count) product += (product.empty() ? "" : " x ") + FormatNumber(d);
    return Status::Error(file->WhereKey("npus_count") + ": key 'npus_count' describes " + product +
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
    t.dims.push_back(dim);
  }
  return t;
}

std::vector<KeyDoc> NetworkConfigKeys() { return MakeNetworkSchema().Docs(); }

}  // namespace orrery
