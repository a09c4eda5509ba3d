// What an NCCL kernel of a PyTorch profile moves: its collective type, bytes and communicator
// group, from the kernel's own arguments when PyTorch recorded them (`Collective name`,
// `In msg nelems`, `dtype`, `Process Group Ranks`), else from the operators that launched it
// (record_param_comms' arguments, the nccl:* / c10d::* operator's name and input tensors).
//
//   CollectiveFinder finder(trace);
//   StatusOr<CollectiveSpec> c = finder.Find(kernel_index, rank, world_size);
//   if (c.ok() && c->kind == CollectiveSpec::kCollective) ... c->type, c->bytes, c->group ...
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "et_feeder/trace.h"
#include "profile/kineto.h"

namespace orrery {
namespace profile {

struct CollectiveSpec {
  enum Kind { kCollective, kSend, kRecv };
  Kind kind = kCollective;
  et::CollectiveType type = et::CollectiveType::kAllReduce;
  uint64_t bytes = 0;
  // The group's ranks, ascending; empty for the whole job (world).
  std::vector<int> group;
  // Where the type and size came from: "kernel arguments", "record_param_comms",
  // "nccl:all_to_all inputs", ...
  std::string source;
  // Set when the group was inferred from the collective's shape (its ranks not recorded).
  std::string group_note;
};

// The collective type of a name such as "allreduce", "all_gather", "_reduce_scatter_base",
// "nccl:all_to_all", "c10d::broadcast_", "ncclKernel_AllReduce_RING_LL_Sum_float": the name
// normalised (lower case, without '_', '-', ':'), then searched for allreduce, reducescatter,
// allgather, alltoall, broadcast, reduce, gather, scatter, barrier, send, recv.
bool CollectiveOfName(const std::string& name, CollectiveSpec::Kind* kind,
                      et::CollectiveType* type);

// The CPU operators running at a moment on a thread, innermost first.
class CpuOpStacks {
 public:
  explicit CpuOpStacks(const KinetoTrace& t);
  std::vector<const CpuOp*> Stack(int64_t tid, int64_t ns) const;

 private:
  static constexpr size_t kNoParent = static_cast<size_t>(-1);
  struct Thread {
    std::vector<const CpuOp*> ops;  // by start, the longer first
    std::vector<size_t> parent;     // the enclosing op's index, or kNoParent
  };
  std::unordered_map<int64_t, Thread> threads_;
};

class CollectiveFinder {
 public:
  explicit CollectiveFinder(const KinetoTrace& t);
  // The collective of NCCL kernel `gpu_index` of a rank of a job of `world` ranks. An error
  // names the kernel and what is missing (type or size).
  StatusOr<CollectiveSpec> Find(size_t gpu_index, int rank, int world) const;

 private:
  const KinetoTrace& t_;
  std::unordered_map<int64_t, size_t> runtime_of_;  // correlation -> runtime call
  CpuOpStacks stacks_;
};

}  // namespace profile
}  // namespace orrery
