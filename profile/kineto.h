// A PyTorch profile (Kineto's Chrome-trace JSON, `torch.profiler` output, one file per rank) or
// Orrery's own `--timeline`, read into compact arrays.
//
//   StatusOr<KinetoTrace> t = LoadKinetoTrace("rank-0.json.gz");
//   if (!t.ok()) return t.status();         // names the file, byte and what is wrong
//   for (const GpuOp& op : t->gpu) ...      // kernels, memcpys, memsets, by start time
//
// Times are integer nanoseconds, read exactly from the decimal microseconds Kineto writes.
// What is kept (everything else is skipped as it is read):
//   - GPU activity (cat kernel, gpu_memcpy, gpu_memset): stream, correlation, NCCL arguments;
//   - CUDA runtime calls (cat cuda_runtime, cuda_driver): launches, event records and waits,
//     synchronisations, by correlation id;
//   - CUDA synchronisation activity (cat cuda_sync): stream waits on events, syncs;
//   - CPU operators and annotations (cat cpu_op, user_annotation): name, thread, External id,
//     Record function id, and the collective arguments of record_param_comms / nccl:* ops;
//   - distributedInfo (rank, world size, process groups) and the GPU's name;
//   - for Orrery's timelines (README "Where the time goes"), every node's slice.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace orrery {
namespace profile {

// Interned strings: an id per distinct name.
class NameTable {
 public:
  uint32_t Intern(std::string_view s);
  const std::string& operator[](uint32_t id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  std::deque<std::string> names_;  // stable addresses: the map's keys view them
  std::unordered_map<std::string_view, uint32_t> ids_;
};

// A collective's arguments, as PyTorch records them on the NCCL kernel (`Collective name`,
// `In msg nelems`, ...) or on the record_param_comms / nccl:* operator that launched it.
struct CommArgs {
  std::string collective;  // "allreduce", "all_to_all", "_allgather_base", ...
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  std::string dtype;  // "Float", "BFloat16", ...
  int64_t group_size = -1;
  std::string pg_name;
  std::string pg_desc;
  bool has_ranks = false;
  std::vector<int> ranks;  // "Process Group Ranks"
  // Older PyTorch (no collective arguments): the operator's "Input Dims" / "Input type".
  std::vector<int64_t> input_elems;  // elements of each tensor argument (-1: not a tensor)
  std::vector<std::string> input_types;
};

enum class GpuKind : uint8_t { kKernel, kMemcpy, kMemset };

struct GpuOp {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t correlation = -1;
  int64_t external_id = -1;
  int64_t stream = -1;
  int64_t device = -1;
  int64_t bytes = -1;  // memcpy / memset
  uint32_t name = 0;
  GpuKind kind = GpuKind::kKernel;
  int32_t comm = -1;  // index into KinetoTrace::comms: the kernel's own collective arguments
  bool nccl = false;  // name contains "nccl" (any case): a communication kernel
};

// What a CUDA runtime or driver call does, from its name.
enum class RuntimeKind : uint8_t {
  kLaunch,       // a kernel, memcpy or memset launch (its GPU op has the same correlation)
  kEventRecord,  // cudaEventRecord
  kStreamWait,   // cudaStreamWaitEvent
  kSync,         // cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize
  kOther,
};

struct RuntimeCall {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t correlation = -1;
  int64_t external_id = -1;
  int64_t tid = -1;
  uint32_t name = 0;
  RuntimeKind kind = RuntimeKind::kOther;
};

// CUPTI's synchronisation activity (cat cuda_sync; recorded by newer PyTorch).
struct SyncEvent {
  enum Kind : uint8_t { kStreamWaitEvent, kStreamSync, kContextSync, kEventSync, kOther };
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t stream = -1;
  int64_t correlation = -1;
  int64_t wait_on_stream = -1;
  int64_t wait_on_record_correlation = -1;
  Kind kind = kOther;
};

struct CpuOp {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t tid = -1;
  int64_t external_id = -1;
  int64_t rf_id = -1;  // "Record function id"
  uint32_t name = 0;
  int32_t comm = -1;        // index into KinetoTrace::comms
  bool annotation = false;  // cat user_annotation
};

// A slice of Orrery's own timeline (--timeline): one node of one NPU.
struct SimSlice {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int npu = 0;
  uint32_t name = 0;
  // Orrery's track: "GPU compute", "CPU", "communication", "remote memory", "receives", or
  // "collective" for a collective's slice.
  uint32_t category = 0;
  uint32_t node_type = 0;  // args.type, e.g. "COMP_NODE"
  int64_t node_id = -1;
};

struct ProcessGroupInfo {
  std::string name;  // pg_name
  std::string desc;
  int64_t size = -1;
  std::vector<int> ranks;
};

struct KinetoTrace {
  std::string path;
  // What the file is: a PyTorch profile, or one of Orrery's timelines.
  bool orrery_timeline = false;
  std::optional<int> rank;        // distributedInfo.rank
  std::optional<int> world_size;  // distributedInfo.world_size
  std::string backend;            // distributedInfo.backend
  std::string nccl_version;
  std::vector<ProcessGroupInfo> process_groups;  // distributedInfo.pg_config
  std::string device_name;                       // deviceProperties[0].name
  std::string trace_id;                          // "trace_id", when recorded
  NameTable names;
  std::vector<GpuOp> gpu;            // by start, then stream
  std::vector<RuntimeCall> runtime;  // by start
  std::vector<SyncEvent> syncs;      // by start
  std::vector<CpuOp> cpu;            // by start, longest first
  std::vector<CommArgs> comms;
  std::vector<SimSlice> sim;  // Orrery timelines only; by NPU, then start
  // Orrery timelines: the critical path's segments (`category` is their kind, `npu` theirs).
  std::vector<SimSlice> sim_path;
  int sim_npus = 0;      // Orrery timelines: NPUs shown
  uint64_t events = 0;   // trace events read
  int64_t first_ns = 0;  // earliest timestamp of any event read (0 when none)
};

StatusOr<KinetoTrace> LoadKinetoTrace(const std::string& path);
// The same from text already in memory (`path` names it in messages).
StatusOr<KinetoTrace> ParseKinetoTrace(std::string_view text, const std::string& path);

// Bytes per element of a PyTorch dtype as Kineto spells it ("Float", "BFloat16", "Long",
// "c10::Half", "float", "unsigned char", ...); nullopt when unknown.
std::optional<int> DtypeBytes(std::string_view dtype);

}  // namespace profile
}  // namespace orrery
