// The remote-memory configuration file (ASTRA-sim's --remote-memory-configuration JSON).
//
//   StatusOr<MemoryConfig> m = LoadMemoryConfig("no_memory_expansion.json");
//   if (m.ok() && m->type == MemoryType::kMemoryPool) ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"
#include "config/schema.h"

namespace orrery {

enum class MemoryType {
  kNoMemoryExpansion,
  kPerNpuMemoryExpansion,
  kPerNodeMemoryExpansion,
  kMemoryPool
};

const char* MemoryTypeName(MemoryType t);

struct MemoryConfig {
  MemoryType type = MemoryType::kNoMemoryExpansion;
  uint64_t remote_mem_latency_ns = 0;
  double remote_mem_bw_bytes_per_ns = 0;  // "remote-mem-bw", used as bytes per ns (GB/s decimal)
  int num_nodes = 1;                      // PER_NODE only
  int num_npus_per_node = 1;              // PER_NODE only
  std::string path;
};

StatusOr<MemoryConfig> LoadMemoryConfig(const std::string& path);
// The same for a file already read (or a section of a printed configuration).
StatusOr<MemoryConfig> LoadMemoryConfig(const ConfigFile& file);

// The configuration `file` gives with every key's effective value: its keys as written, the
// others with their defaults (num-nodes and num-npus-per-node only with
// PER_NODE_MEMORY_EXPANSION, where they are required). Errors: LoadMemoryConfig's.
StatusOr<YAML::Node> MemoryConfigWithDefaults(const ConfigFile& file);

// With PER_NODE_MEMORY_EXPANSION, num-nodes * num-npus-per-node must be the network's NPU count
// (`network` names the network configuration in the message); other types always fit.
Status CheckMemoryFitsNetwork(const MemoryConfig& config, int num_npus, const std::string& network);

// Every key LoadMemoryConfig accepts, with type, unit, default and meaning.
std::vector<KeyDoc> MemoryConfigKeys();

}  // namespace orrery
