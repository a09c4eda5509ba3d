// The remote-memory model: MEM_LOAD / MEM_STORE nodes go through it (ASTRA-sim's analytical
// remote memory, --remote-memory-configuration).
//
//   RemoteMemory mem(sim, config, /*num_npus=*/8);
//   Status s = mem.Issue(/*npu=*/3, Bytes(1 << 20), &executor, /*token=*/node_id);
//   // later: executor.OnMemoryDone(node_id)
//
// One access costs remote-mem-latency + trunc(size / remote-mem-bw) ns. PER_NPU_MEMORY_EXPANSION:
// every access proceeds independently. PER_NODE_MEMORY_EXPANSION: one FIFO channel per node
// (node = npu / num-npus-per-node). MEMORY_POOL: one FIFO channel for the whole machine.
// NO_MEMORY_EXPANSION: every access is an error.
#pragma once

#include <cstdint>
#include <vector>

#include "common/event_queue.h"
#include "common/slot_pool.h"
#include "common/status.h"
#include "common/units.h"
#include "memory/memory_config.h"

namespace orrery {

class MemoryCompletion {
 public:
  virtual ~MemoryCompletion() = default;
  virtual void OnMemoryDone(uint64_t token) = 0;
};

class RemoteMemory : public EventTarget {
 public:
  RemoteMemory(Simulation& sim, const MemoryConfig& config, int num_npus);

  // Starts an access of `size` bytes for `npu` now; calls `done->OnMemoryDone(token)` when it
  // completes. Fails (and schedules nothing) under NO_MEMORY_EXPANSION.
  Status Issue(int npu, Bytes size, MemoryCompletion* done, uint64_t token);

  // Cost of one access on an idle channel.
  Time AccessTime(Bytes size) const;
  uint64_t accesses() const { return accesses_; }
  uint64_t bytes() const { return bytes_; }

  void OnEvent(uint64_t slot) override;

 private:
  struct Pending {
    MemoryCompletion* done = nullptr;
    uint64_t token = 0;
  };

  Simulation& sim_;
  MemoryConfig config_;
  std::vector<Time> channel_free_at_;  // FIFO channels (PER_NODE: one per node; POOL: one)
  SlotPool<Pending> pending_;
  uint64_t accesses_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace orrery
