#include "memory/memory_config.h"

#include <set>
#include <string>

#include "config/schema.h"

namespace orrery {
namespace {

Schema<MemoryConfig> MakeMemorySchema() {
  using M = MemoryConfig;
  Schema<M> s;
  s.Enum<MemoryType>("memory-type", &M::type,
                     {{"NO_MEMORY_EXPANSION", MemoryType::kNoMemoryExpansion},
                      {"PER_NPU_MEMORY_EXPANSION", MemoryType::kPerNpuMemoryExpansion},
                      {"PER_NODE_MEMORY_EXPANSION", MemoryType::kPerNodeMemoryExpansion},
                      {"MEMORY_POOL", MemoryType::kMemoryPool}})
      .Help(
          "Where remote tensors live: NO_MEMORY_EXPANSION = none (a remote access is an "
          "error), PER_NPU = a private remote memory per NPU (accesses run in parallel), "
          "PER_NODE = one memory per node shared by its NPUs (accesses queue, FIFO), "
          "MEMORY_POOL = one memory for the whole machine (one FIFO queue).")
      .AstraSim("No default there (uninitialised when absent); here NO_MEMORY_EXPANSION.");
  s.Integer("remote-mem-latency", &M::remote_mem_latency_ns)
      .Unit("ns")
      .Min(0)
      .Help("Fixed cost of one remote access: latency + trunc(size / remote-mem-bw) ns.");
  s.Number("remote-mem-bw", &M::remote_mem_bw_bytes_per_ns)
      .Unit("bytes/ns (= GB/s, 1e9 B/s)")
      .Min(0)
      .Help("Remote memory bandwidth; must be > 0 unless memory-type is NO_MEMORY_EXPANSION.")
      .AstraSim(
          "Read as an unsigned integer there and 0 divides by zero; here fractions are "
          "kept and 0 is rejected when remote memory is used.");
  s.Integer("num-nodes", &M::num_nodes)
      .Min(1)
      .Help("Number of nodes (PER_NODE_MEMORY_EXPANSION only, where it is required).")
      .AstraSim("Not checked there; here required for PER_NODE_MEMORY_EXPANSION.");
  s.Integer("num-npus-per-node", &M::num_npus_per_node)
      .Min(1)
      .Help(
          "NPUs per node; node of NPU i = i / this (PER_NODE_MEMORY_EXPANSION only, where it "
          "is required).")
      .AstraSim("Not checked there; here required for PER_NODE_MEMORY_EXPANSION.");
  return s;
}

}  // namespace

const char* MemoryTypeName(MemoryType t) {
  switch (t) {
    case MemoryType::kNoMemoryExpansion:
      return "NO_MEMORY_EXPANSION";
    case MemoryType::kPerNpuMemoryExpansion:
      return "PER_NPU_MEMORY_EXPANSION";
    case MemoryType::kPerNodeMemoryExpansion:
      return "PER_NODE_MEMORY_EXPANSION";
    case MemoryType::kMemoryPool:
      return "MEMORY_POOL";
  }
  return "?";
}

StatusOr<MemoryConfig> LoadMemoryConfig(const std::string& path) {
  StatusOr<ConfigFile> file = ConfigFile::Read(path);
  if (!file.ok()) return file.status();
  return LoadMemoryConfig(*file);
}

StatusOr<MemoryConfig> LoadMemoryConfig(const ConfigFile& config_file) {
  const ConfigFile* file = &config_file;
  const std::string& path = file->path();
  MemoryConfig config;
  std::set<std::string> valid;
  Status problems = MakeMemorySchema().Apply(*file, &config, &valid);
  // Conditions between keys, checked once the type itself is known (valid or defaulted).
  const bool type_known = valid.count("memory-type") || !file->Has("memory-type");
  if (type_known && config.type != MemoryType::kNoMemoryExpansion) {
    const std::string because = std::string(" when memory-type is ") + MemoryTypeName(config.type);
    if (!file->Has("remote-mem-bw")) {
      problems.Add(path +
                   ": required key 'remote-mem-bw' is missing; expected a number > 0 "
                   "(bytes/ns)" +
                   because);
    } else if (valid.count("remote-mem-bw") && config.remote_mem_bw_bytes_per_ns <= 0) {
      const YAML::Node bw = file->Get("remote-mem-bw");
      problems.Add(file->Where(bw) + ": key 'remote-mem-bw' is '" + bw.Scalar() +
                   "'; expected a number > 0 (bytes/ns)" + because);
    }
  }
  if (type_known && config.type == MemoryType::kPerNodeMemoryExpansion) {
    for (const char* key : {"num-nodes", "num-npus-per-node"}) {
      if (!file->Has(key)) {
        problems.Add(path + ": required key '" + key +
                     "' is missing; expected an integer >= 1 when memory-type is "
                     "PER_NODE_MEMORY_EXPANSION");
      }
    }
  }
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, path);
  config.path = path;
  return config;
}

Status CheckMemoryFitsNetwork(const MemoryConfig& config, int num_npus,
                              const std::string& network) {
  if (config.type != MemoryType::kPerNodeMemoryExpansion) return Status::Ok();
  const int64_t product = int64_t{config.num_nodes} * config.num_npus_per_node;
  if (product == num_npus) return Status::Ok();
  std::string hint;
  if (config.num_npus_per_node > 0 && num_npus % config.num_npus_per_node == 0) {
    hint = " (e.g. num-nodes " + std::to_string(num_npus / config.num_npus_per_node) +
           " with num-npus-per-node " + std::to_string(config.num_npus_per_node) + ")";
  }
  return Status::Error(
      (config.path.empty() ? std::string("remote memory configuration") : config.path) +
      ": keys 'num-nodes' " + std::to_string(config.num_nodes) + " * 'num-npus-per-node' " +
      std::to_string(config.num_npus_per_node) + " = " + std::to_string(product) +
      " NPUs, but the network (" + network + ") has " + std::to_string(num_npus) +
      " NPUs; expected num-nodes * num-npus-per-node = " + std::to_string(num_npus) +
      " when memory-type is PER_NODE_MEMORY_EXPANSION" + hint);
}

StatusOr<YAML::Node> MemoryConfigWithDefaults(const ConfigFile& file) {
  StatusOr<MemoryConfig> config = LoadMemoryConfig(file);
  if (!config.ok()) return config.status();
  const bool per_node = config->type == MemoryType::kPerNodeMemoryExpansion;
  return MakeMemorySchema().WithDefaults(file, *config, [per_node](const std::string& key) {
    return per_node || (key != "num-nodes" && key != "num-npus-per-node");
  });
}

std::vector<KeyDoc> MemoryConfigKeys() { return MakeMemorySchema().Docs(); }

}  // namespace orrery
