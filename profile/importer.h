// PyTorch profiles (Kineto traces, one per rank) as Chakra execution traces, one per rank, that
// Orrery and ASTRA-sim 2.0 run (profile/README.md has the rules and their reasons).
//
//   std::vector<KinetoTrace> traces = ...;              // LoadKinetoTrace, one per rank
//   ImportOptions o;  o.output_prefix = "out/job";
//   StatusOr<ImportResult> r = ImportKinetoTraces(traces, ranks, o);
//   // wrote out/job.0.et ... and, when the job has groups, out/job.comm_groups.json
//
// Each GPU op (kernel, memcpy, memset) is a node on its stream, in stream order: compute ops as
// COMP_NODEs of their measured duration, NCCL kernels as collectives (or sends and receives)
// with their sizes and groups. The host's launches and synchronisations are a chain of CPU
// COMP_NODEs that releases each op no earlier than the profile shows the host let it start.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "profile/kineto.h"

namespace orrery {
namespace profile {

struct ImportOptions {
  std::string output_prefix;
  // How communicator groups are given to the simulator: a comm-group JSON
  // (<prefix>.comm_groups.json, for --comm-group-configuration; every node is then a compute or
  // communication node, all that ASTRA-sim 2.0's feeder and statistics accept), or in each
  // rank's trace as a METADATA node (PyTorch's process_group:init, as Chakra's converter writes
  // it; Orrery reads it, ASTRA-sim 2.0's statistics abort on it).
  enum class Groups { kJson, kMetadata };
  Groups groups = Groups::kJson;
  // A gap between two ops of a stream up to this long is the GPU's own back-to-back overhead
  // (the op was queued), not a wait.
  int64_t queued_gap_ns = 2000;
  // A longer gap that ends within this of an op of another stream ending is a wait on that op
  // (a CUDA event the profile does not show).
  int64_t event_latency_ns = 10000;
};

struct RankImport {
  int rank = 0;
  std::string source;  // the profile
  std::string path;    // the .et written
  uint64_t nodes = 0;
  uint64_t compute = 0;  // kernels other than NCCL's
  uint64_t memory = 0;   // memcpys and memsets
  uint64_t host = 0;     // CPU nodes of the host chain
  uint64_t collectives = 0;
  uint64_t sends = 0;
  uint64_t receives = 0;
  std::map<std::string, uint64_t> collectives_by_type;  // "ALL_REDUCE" -> count
  // Dependencies by reason.
  uint64_t stream_deps = 0;    // the op before on the same stream
  uint64_t launch_deps = 0;    // released by the host chain
  uint64_t event_deps = 0;     // a recorded stream wait (cuda_sync) or PyTorch's collective sync
  uint64_t inferred_deps = 0;  // a gap that ends as another stream's op ends
  uint64_t sync_deps = 0;      // the host waits for the GPU (synchronize calls)
  // Waits between streams left out because the profile's times contradict them (the op waited
  // for had not ended, or began later, when the waiting op began).
  uint64_t contradicted_waits = 0;
  int64_t measured_compute_ns = 0;  // summed measured durations of compute and memory ops
  int64_t written_compute_us = 0;   // the same as written (whole microseconds)
};

struct ImportResult {
  std::vector<RankImport> ranks;
  // Communicator groups: id -> ranks (ids from 1; the world is no group).
  std::map<int, std::vector<int>> groups;
  std::string comm_groups_path;  // written when there are groups and Groups::kJson
  std::vector<std::string> notes;
};

// `ranks[i]` is traces[i]'s rank (job_check.h's RanksOf); `world` the job's size.
StatusOr<ImportResult> ImportKinetoTraces(const std::vector<KinetoTrace>& traces,
                                          const std::vector<int>& ranks, int world,
                                          const ImportOptions& o);

}  // namespace profile
}  // namespace orrery
