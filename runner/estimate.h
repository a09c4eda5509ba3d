// What a run will cost, estimated from its inputs before it starts: chunks, messages (packets on
// the packet backend), events, peak memory and a wall-time guess. `orrery --dry-run` prints it;
// a run past its budget stops before it starts, naming what makes it large and the flag that
// lets it run (--max-memory, --force). docs/robustness.md gives the equations and where the
// constants were measured.
//
//   CostInputs in;  in.topology = &topo;  in.params = &params;  in.npu_trace = traces;  ...
//   const RunCost cost = EstimateRunCost(in);
//   Status s = CheckRunBudget(cost, RunBudget{});   // error: "this run would need about ..."
//
// The estimate is a pure function of the inputs, kept apart from the simulation core so that
// shortcuts the core takes later (runs far cheaper than their chunk count) can be reflected here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "et_feeder/trace.h"
#include "network/factory.h"
#include "network/network.h"
#include "system/system_params.h"

namespace orrery {

// Measured on this project's 2-core machine (docs/robustness.md, "Cost estimate").
inline constexpr double kEventsPerMessage = 4.0;     // 2.5 (unaware) to 4.75 (2-D, aware)
inline constexpr double kEventsPerPacketHop = 4.0;   // packet backend: 3.5 per packet and hop
inline constexpr double kEventsPerSecond = 5e6;      // 5.2 to 7.1 M events/s measured
inline constexpr uint64_t kBytesPerChunk = 400;      // a chunk's stream: 461 B with one phase,
inline constexpr uint64_t kBytesPerChunkPhase = 80;  // 633 B with three
inline constexpr uint64_t kBytesPerNpu = 4096;       // executor, system layer and queues
inline constexpr uint64_t kBytesPerNode = 16;        // feeder and executor state per trace node
inline constexpr double kSecondsPerRun = 0.005;  // loading, setting up, reporting (a sweep point
                                                 // of 4 NPUs took 2.7 ms with 2 jobs)

struct CostInputs {
  const Topology* topology = nullptr;
  const NetworkParams* net = nullptr;
  const SystemParams* params = nullptr;  // splits, algorithms, comm_scale, rendezvous
  Backend backend = Backend::kAnalyticalAware;
  bool replay_only = false;  // every node replayed: no collective is cut into chunks
  int comm_slots = 1;        // collectives in flight per NPU at most
  // NPU r runs *npu_trace[r] (NPUs running one trace share its cost's computation).
  std::vector<const et::Trace*> npu_trace;
  // The members of communicator group `pg` (a pg_name) for NPU `npu`: 0 when unknown (a group
  // a METADATA node defines at run time), taken as every NPU.
  std::function<int(int npu, std::string_view pg)> group_size;
  uint64_t loaded_bytes = 0;  // the traces, already in memory
  std::string system_config;  // named in the message
};

struct RunCost {
  int npus = 0;
  uint64_t nodes = 0;
  uint64_t collectives = 0;  // collective nodes run (over every NPU)
  uint64_t chunks = 0;       // chunk streams (over every NPU)
  uint64_t messages = 0;     // point-to-point messages of collectives and sends
  uint64_t packets = 0;      // packet backend: packets times the hops they cross
  uint64_t events = 0;
  uint64_t memory_bytes = 0;  // peak, with the loaded traces
  double wall_seconds = 0;
  // What makes it large: the collective with the most chunks, e.g. "node 2 'grad' of t.0.et:
  // all-reduce of 1048576 B in 1048576 chunks (preferred-dataset-splits 1048576) on 16 NPUs".
  std::string largest;
  uint64_t largest_chunks = 0;
};

RunCost EstimateRunCost(const CostInputs& in);

// The chunks a collective of `size` bytes is cut into, as the system layer cuts it (chunk =
// size / splits, at least the machine's NPU count except for all-gather; whole chunks with
// lanes): the number of chunk streams each member runs.
uint64_t ChunkCount(uint64_t size, uint64_t splits, bool whole_chunks, uint64_t machine_npus,
                    et::CollectiveType type);

struct RunBudget {
  uint64_t max_memory = 0;  // bytes; 0 = DefaultMemoryBudget()
  double max_wall_seconds = 3600;
  bool force = false;  // --force: run whatever the wall-time guess
};

// The machine's available memory (MemAvailable, or the cgroup's limit when lower), at most
// 4 GiB: a run past that is more often a mistake (1-byte chunks) than a study, and
// --max-memory raises it.
uint64_t DefaultMemoryBudget();
uint64_t AvailableMemoryBytes();

// Ok within the budget; else one message with the estimate, what makes the run large and the
// flag that lets it run.
Status CheckRunBudget(const RunCost& cost, const RunBudget& budget);

// The estimate as --dry-run prints it (several lines, each ending in '\n').
std::string DescribeRunCost(const RunCost& cost);

// "1.5 GB", "620 MB", "12 KB"; "3.2 h", "41 min", "12 s".
std::string HumanBytes(uint64_t bytes);
std::string HumanSeconds(double seconds);

// A byte count as --max-memory takes it: "8G", "512M", "8GB", "1e9", "4096"; -1 when invalid.
int64_t ParseByteCount(const std::string& text);
// --max-memory's value into budget->max_memory; the error names `command` ("", "sweep: ").
Status SetMaxMemory(const std::string& text, const std::string& command, RunBudget* budget);

}  // namespace orrery
