// Assembles and runs one simulation: traces, network backend, system layer, executors.
//
//   RunOptions o;
//   o.workload = "examples/all_reduce/8npus_1MB/all_reduce";
//   o.system_config = "system.json"; o.network_config = "net.yml";
//   StatusOr<RunResult> r = RunSimulation(o);
//   for (const NpuStats& s : r->npus) ... s.finish.WholeNs() ...
//
// Every input problem comes back as a Status naming the file, node or key; a simulation that
// cannot finish comes back as an error listing the stuck NPUs, nodes and what they wait for.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "et_feeder/trace.h"
#include "nccl/nccl_tuner.h"
#include "network/factory.h"
#include "runner/estimate.h"
#include "runner/jobs_config.h"
#include "runner/options.h"
#include "workload/breakdown.h"
#include "workload/executor.h"

namespace orrery {

// One node's execution, with what timelines and reports show of it (RunOptions::record).
struct NodeRecord {
  uint64_t id = 0;
  std::string name;
  Track track = Track::kGpu;
  Time start;
  Time end;
  et::NodeType type = et::NodeType::kComp;
  std::optional<et::CollectiveType> collective;  // COMM_COLL with a comm_type
  uint64_t bytes = 0;                            // comm_size / tensor_size
  int peer = -1;                                 // send: destination; receive: source
  int group_size = 0;                            // NPUs in the collective's group
  std::string group;                             // pg_name, "" = all NPUs
};

// One phase of one chunk of a collective on one NPU, as the system layer ran it (record).
struct ChunkPhaseRecord {
  uint64_t node_id = 0;  // the collective's node
  int stream = 0;        // chunk stream id
  int phase = 0;         // 0-based, of num_phases
  int num_phases = 0;
  CollectiveType type = CollectiveType::kAllReduce;  // this phase's (RS, AR, AG, ...)
  const char* algorithm = "";
  int queue = 0;
  int ring_size = 0;   // NPUs taking part in the phase
  uint64_t bytes = 0;  // input size of the phase
  int sender = 0, receiver = 0;
  Time queued, started, ended;
};

// A communication queue's length (streams running and waiting) from `t` on (record).
struct QueueSample {
  Time t;
  int queue = 0;
  int length = 0;
};

// One segment of the critical path (workload/critical_path.h), its nodes named (record).
struct CriticalPathStep {
  int npu = 0;
  uint64_t node_id = 0;
  std::string name;
  Track track = Track::kGpu;
  et::NodeType type = et::NodeType::kComp;
  Time start;
  Time end;
  // What the segment before it is (PathSegment::link): node `from_node_id` of NPU `from_npu`
  // (-1 for kStart).
  PathLink link = PathLink::kStart;
  int from_npu = -1;
  uint64_t from_node_id = 0;
};

// One job of a --jobs run: where it ran and when its last NPU finished.
struct JobResult {
  std::string name;
  std::vector<int> npus;  // rank r ran on npus[r]
  Time finish;            // its step time: when its last NPU finished
  int slowest_npu = -1;   // the NPU that finished last (the lowest rank on a tie)
  // --jobs-alone (AddJobsAlone): its step time on the same NPUs with every other job removed.
  std::optional<Time> alone;
  // What sharing the machine cost it, in % of its step time alone: 100 (finish / alone - 1);
  // 0 without `alone` or when that is 0.
  double SharingPercent() const {
    if (!alone || alone->ps() <= 0) return 0;
    return 100.0 * (static_cast<double>(finish.ps()) / static_cast<double>(alone->ps()) - 1.0);
  }
};

struct RunResult {
  std::vector<NpuStats> npus;
  std::vector<NpuBreakdown> breakdown;  // per NPU: HTA's temporal breakdown (always)
  Time end;                             // when the last NPU finished
  uint64_t events = 0;
  std::vector<std::string> warnings;
  std::vector<std::vector<NodeRecord>> activity;      // per NPU, in completion order (record)
  std::vector<LinkStats> links;                       // congestion-aware and packet backends
  std::vector<std::vector<ChunkPhaseRecord>> phases;  // per NPU, in completion order (record)
  std::vector<std::vector<QueueSample>> queues;       // per NPU, in time order (record)
  std::vector<CriticalPathStep> critical_path;        // in time order, 0 to `end` (record)
  // RunOptions::timeline_npus: per NPU, whether timelines show it; empty = every NPU.
  std::vector<bool> timeline_npus;
  bool TimelineShows(int npu) const {
    return timeline_npus.empty() || timeline_npus[static_cast<size_t>(npu)];
  }
  bool local_mem_tracked = false;  // track-local-mem: NpuStats::peak_local_memory is filled in
  std::vector<QueueSeries> port_queues;  // network queue depths over time (record, packet)
  // With an NCCL model: each distinct collective and the choice it ran with, in first-use order.
  std::vector<NcclTunedCollective> nccl_choices;
  std::string network_model;  // the backend and its forwarding (DescribeNetworkModel)
  // With --replicate-trace or --jobs: how the ranks were laid out (Placement::Describe); ""
  // otherwise.
  std::string placement;
  std::vector<JobResult> jobs;  // with --jobs, in the file's order
  // With --replicate-trace: the trace's ranks N (NPU r runs rank r mod N of copy r / N); 0
  // otherwise.
  int copy_ranks = 0;
  // With a trace manifest's interleaved copies (et_feeder/manifest.h): copy c's rank k is NPU
  // (k / I)·I·copies + c·I + k mod I; 0 = copy_ranks (contiguous copies).
  int copy_interleave = 0;
  // A shortcut the run took (runner/symmetry.h), one line for an info message; "" for none.
  std::string shortcut;
  // Why a shortcut stepped aside, for info messages.
  std::vector<std::string> shortcut_notes;
  std::optional<RunCost> estimate;  // the cost estimated before the run (runner/estimate.h)
  int num_npus() const { return static_cast<int>(npus.size()); }
};

StatusOr<RunResult> RunSimulation(const RunOptions& options);

// Writes `links` as CSV, most loaded first (busy time descending, then name):
//   rank,link,bytes,busy_ns,utilisation[,max_queue_bytes,mean_queue_bytes,pause_ns,drops]
// (the port columns when the backend has output queues: the packet backend)
// utilisation = busy / `end` (0 when end is 0); the first N rows are the top-N links.
// --jobs-alone: runs each job of a --jobs run alone on its NPUs (`o` as the run had it, the
// other jobs removed) and records its step time in result->jobs[j].alone.
Status AddJobsAlone(const RunOptions& o, RunResult* result);

Status WriteLinkStats(const std::string& path, std::vector<LinkStats> links, Time end);

}  // namespace orrery
