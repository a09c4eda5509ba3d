#include "memory/remote_memory.h"

#include <algorithm>
#include <string>

namespace orrery {

RemoteMemory::RemoteMemory(Simulation& sim, const MemoryConfig& config, int num_npus)
    : sim_(sim), config_(config) {
  switch (config_.type) {
    case MemoryType::kPerNodeMemoryExpansion: {
      const int per_node = std::max(1, config_.num_npus_per_node);
      const int nodes = std::max(config_.num_nodes, (num_npus + per_node - 1) / per_node);
      channel_free_at_.assign(std::max(1, nodes), Time::Zero());
      break;
    }
    case MemoryType::kMemoryPool:
      channel_free_at_.assign(1, Time::Zero());
      break;
    default:
      break;
  }
}

Time RemoteMemory::AccessTime(Bytes size) const {
  const double transfer =
      config_.remote_mem_bw_bytes_per_ns > 0
          ? static_cast<double>(size.count()) / config_.remote_mem_bw_bytes_per_ns
          : 0.0;
  return Time::FromNsTruncated(static_cast<double>(config_.remote_mem_latency_ns)) +
         Time::FromNsTruncated(transfer);
}

Status RemoteMemory::Issue(int npu, Bytes size, MemoryCompletion* done, uint64_t token) {
  if (config_.type == MemoryType::kNoMemoryExpansion) {
    return Status::Error(
        "remote memory access of " + std::to_string(size.count()) + " bytes on NPU " +
        std::to_string(npu) + ", but the memory type is NO_MEMORY_EXPANSION" +
        (config_.path.empty() ? std::string(" (no --remote-memory-configuration given)")
                              : " (" + config_.path + ")") +
        "; use PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION or MEMORY_POOL");
  }
  const Time cost = AccessTime(size);
  Time finish = sim_.now() + cost;
  if (!channel_free_at_.empty()) {
    size_t channel = 0;
    if (config_.type == MemoryType::kPerNodeMemoryExpansion) {
      channel = static_cast<size_t>(npu / std::max(1, config_.num_npus_per_node));
      if (channel >= channel_free_at_.size()) channel = channel_free_at_.size() - 1;
    }
    const Time start = std::max(sim_.now(), channel_free_at_[channel]);
    finish = start + cost;
    channel_free_at_[channel] = finish;
  }
  const uint32_t slot = pending_.Acquire();
  pending_[slot] = {done, token};
  ++accesses_;
  bytes_ += size.count();
  sim_.Schedule(finish, this, slot);
  return Status::Ok();
}

void RemoteMemory::OnEvent(uint64_t slot) {
  const Pending p = pending_[static_cast<uint32_t>(slot)];
  pending_.Release(static_cast<uint32_t>(slot));
  p.done->OnMemoryDone(p.token);
}

}  // namespace orrery
