// Per-collective and per-queue statistics from a recorded run (RunOptions::record). The per-NPU
// time breakdown is always in RunResult::breakdown (workload/breakdown.h).
//
//   StatusOr<RunResult> r = RunSimulation(options_with_record);
//   for (const CollectiveStat& c : CollectiveStats(*r)) ... c.bus_bw_gbps ...
//
// Bandwidths follow nccl-tests' definitions.
#pragma once

#include <string>
#include <vector>

#include "common/units.h"
#include "runner/run.h"
#include "workload/breakdown.h"

namespace orrery {

struct CollectiveStat {
  int npu = 0;
  uint64_t node_id = 0;
  std::string name;
  et::CollectiveType type = et::CollectiveType::kAllReduce;
  std::string group;   // pg_name ("" = all NPUs)
  int group_size = 0;  // n
  uint64_t bytes = 0;  // comm_size
  Time start;
  Time end;
  // nccl-tests: algbw = S / t with S the operation's size (comm_size; n x comm_size for an
  // all-gather, whose comm_size is one rank's part); busbw = algbw x factor(type, n).
  double alg_bw_gbps = 0;  // GB/s = 1e9 B/s
  double bus_bw_gbps = 0;
};

// nccl-tests' bus bandwidth factor: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all
// (n-1)/n; broadcast, reduce 1.
double BusBandwidthFactor(et::CollectiveType type, int n);

// The breakdowns a run's means are over: every NPU's, or with --jobs those of the NPUs that run
// a job (idle NPUs would dilute the mean).
std::vector<NpuBreakdown> WorkingNpuBreakdowns(const RunResult& r);

// Every collective on every NPU, by NPU then start time.
std::vector<CollectiveStat> CollectiveStats(const RunResult& r);

// One communication queue of one NPU over the run: its length (streams running and waiting)
// as a step function, and its maximum and time-weighted mean over [0, step time].
struct QueueStat {
  int npu = 0;
  int queue = 0;
  std::vector<std::pair<Time, int>> samples;  // length from this time on
  int max_length = 0;
  double mean_length = 0;
};

// Every queue that ever held a stream, by NPU then queue.
std::vector<QueueStat> QueueStats(const RunResult& r);
// The same for one NPU (writers go NPU by NPU, so that only one NPU's copy of its samples is
// held at a time).
std::vector<QueueStat> QueueStats(const RunResult& r, int npu);

// Where the critical path's time goes (RunResult::critical_path): the step time split by what
// each segment's node was doing; they add up to `total`, the step time.
struct CriticalPathTotals {
  Time total;
  Time compute;           // GPU compute
  Time cpu;               // CPU ops
  Time communication;     // collectives (their launch floors included), sends and receives
  Time memory;            // remote memory
  int nodes = 0;          // distinct (NPU, node) on the path
  std::vector<int> npus;  // the NPUs it crosses, ascending
  int slot_waits = 0;     // segments that began when a busy hardware slot freed (PathLink::kSlot)
};
CriticalPathTotals CriticalPathTotalsOf(const RunResult& r);

}  // namespace orrery
