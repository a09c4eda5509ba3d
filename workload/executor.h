// The workload layer: one executor per NPU replays that NPU's Chakra trace.
//
//   NpuExecutor exec(npu, trace, system, memory, params, log);
//   exec.Start();          // issues the dependency-free nodes at time 0
//   sim.Run();
//   if (exec.finished()) Print(exec.stats());
//
// A node is issued once all its dependencies are done and its hardware slot is free. Slots, as
// in ASTRA-sim: one CPU op, one GPU compute op and one communication op (collective, send,
// remote-memory access) in flight per NPU; receives, metadata and invalid nodes take no slot.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/event_queue.h"
#include "common/flat_map.h"
#include "common/status.h"
#include "compute/roofline.h"
#include "et_feeder/feeder.h"
#include "et_feeder/trace.h"
#include "memory/remote_memory.h"
#include "system/collective_engine.h"
#include "workload/breakdown.h"
#include "workload/critical_path.h"
#include "workload/memory_tracker.h"
#include "workload/placement.h"

namespace orrery {

// How one collective runs when a tuner chooses per call, as NCCL's does (nccl/nccl_tuner.h):
// its algorithms, launch floor and protocol efficiency, in place of WorkloadParams'.
struct CollectiveChoice {
  const std::array<std::vector<AlgorithmSpec>, kNumNativeColl>* impl = nullptr;  // null: params'
  std::optional<RootedAlgorithm> rooted;  // broadcast and reduce; unset: params'
  Time launch_latency;
  double efficiency = 1;
};

class CollectiveTuner {
 public:
  virtual ~CollectiveTuner() = default;
  // `req` as the trace asks for it: size after --comm-scale, before protocol efficiency.
  virtual StatusOr<CollectiveChoice> Choose(const CollectiveRequest& req) = 0;
};

// The largest power of two InflateForEfficiency rounds to: one 4 KiB page. A 1 MiB cap, used
// until 2026-11, added up to a fifth of the bytes between 1 and 16 MiB (2 MiB at 0.6028 moved
// 4 MiB, not 3.32).
inline constexpr uint64_t kEfficiencyGrainBytes = 4096;

// The bytes a collective of `size` moves at protocol `efficiency`: size / efficiency rounded up
// to a multiple of the size's own power-of-two granularity (at most kEfficiencyGrainBytes) and
// of `splits` (preferred-dataset-splits), so chunking stays as even: no remainder becomes an
// extra chunk.
uint64_t InflateForEfficiency(uint64_t size, double efficiency, int splits);

struct WorkloadParams {
  bool roofline_enabled = false;
  RooflineParams roofline;
  bool replay_only = false;
  double compute_scale = 1.0;  // multiplies every compute duration
  int cpu_slots = 1;
  int gpu_slots = 1;
  int comm_slots = 1;
  Time collective_launch_latency;  // before every collective starts (NCCL's latency floor)
  double protocol_efficiency = 1;  // collectives move size / this bytes
  bool track_local_mem = false;    // track-local-mem: record tensor reads/writes (memory_tracker.h)
  CollectiveTuner* tuner = nullptr;  // when set, chooses each collective's algorithms and costs
  // When set, this NPU runs one rank of one copy of the trace (--replicate-trace): peers, groups
  // and roots are the trace's ranks, placed in the NPU's copy (workload/placement.h).
  Placement* placement = nullptr;
  // Keep every node's [start, end) and why it began then (activities(), 32 B a node, and 13 B
  // a node of the trace while running), and the collectives' joins and point-to-point messages,
  // for timelines, reports and the critical path; the breakdown does not need them.
  bool keep_activities = true;
  // The file this NPU runs, for messages, when its trace was loaded from another file with the
  // same bytes (runner/trace_set.h); null: the trace's own path.
  const std::string* file = nullptr;
  // trace-enabled: called with a line per node issued and completed (RunOptions::node_trace).
  std::function<void(const std::string&)> trace_nodes;
};

// A pg_name as a communicator group id: "" and "0" are all NPUs (0); others are decimal ids.
StatusOr<int> ParseGroup(std::string_view pg);

struct NpuStats {
  Time finish;
  Time gpu_compute;    // sum of GPU compute node durations (slot-serialised: also their union)
  Time cpu_compute;    // CPU ops
  Time communication;  // time the communication slots were busy with collectives and sends (summed
                       // over slots when communication-slots > 1)
  Time memory;         // remote-memory accesses
  uint64_t nodes_done = 0;
  uint64_t collectives = 0;
  uint64_t bytes_collective = 0;  // as simulated: comm_size x --comm-scale
  uint64_t bytes_sent = 0;
  uint64_t peak_local_memory = 0;  // bytes, with track-local-mem (filled in by the runner)
  // replay-only: the replayed nodes that are not CPU ops nor GPU compute (collectives, sends,
  // receives, memory, invalid nodes), which ASTRA-sim counts as GPU time (issue_replay).
  Time replayed_non_compute;
  // ASTRA-sim's "exposed communication": finish - GPU time (GPU compute, and under replay-only
  // every node replayed that is not a CPU op).
  Time exposed_communication() const { return finish - gpu_compute - replayed_non_compute; }
};

class NpuExecutor : public EventTarget,
                    public CollectiveListener,
                    public MessageSink,
                    public MemoryCompletion {
 public:
  // `slot_classes`: SlotClassesOf(trace), shared by the NPUs that run the same trace (computed
  // here when null).
  NpuExecutor(int npu, const et::Trace& trace, SystemLayer& system, RemoteMemory* memory,
              const WorkloadParams& params,
              std::shared_ptr<const std::vector<uint8_t>> slot_classes = nullptr);
  // The hardware slot class of every node of `trace`, for its feeder.
  static std::shared_ptr<const std::vector<uint8_t>> SlotClassesOf(const et::Trace& trace);

  void Start();
  bool finished() const { return finished_; }
  const NpuStats& stats() const { return stats_; }
  // Every shown node's execution, with WorkloadParams::keep_activities (else empty).
  const std::vector<Activity>& activities() const { return activities_; }
  // With keep_activities: when each collective reached the system layer, and every send and
  // receive, in this NPU's order (for the critical path, workload/critical_path.h).
  const std::vector<CollectiveJoin>& joins() const { return joins_; }
  const std::vector<PointToPoint>& point_to_point() const { return p2p_; }
  // Where this NPU's time went (workload/breakdown.h), kept as it runs.
  NpuBreakdown breakdown() const { return breakdown_.Result(stats_.finish); }
  // First error met while issuing (bad node attributes, unsupported operations).
  const Status& error() const { return error_; }
  int npu() const { return npu_; }
  // Nodes of this NPU's trace (progress reports).
  uint64_t total_nodes() const { return trace_.size(); }
  // With track-local-mem: the tensors this NPU held; nullptr otherwise.
  const LocalMemoryTracker* memory_tracker() const { return memory_tracker_.get(); }
  // Why this NPU did not finish: running nodes and what blocks the others.
  std::vector<std::string> DescribeStuck(int max_items) const;
  // Whether a send or receive of this NPU's is running: a stuck run's likely cause, whom the
  // report names before NPUs that only wait in collectives.
  bool WaitsOnPointToPoint() const;

  void OnEvent(uint64_t arg) override;  // compute / replay finished, or a launch floor passed
  void OnCollectiveDone(uint64_t node) override;  // collective finished
  void OnMessage(uint64_t node) override;         // send arrived / receive matched
  std::string DescribeCookie(uint64_t node) const override;
  bool LivesForTheRun() const override { return true; }
  void OnMemoryDone(uint64_t node) override;  // remote memory access finished

 private:
  enum class Slot : uint8_t { kNone, kCpu, kGpu, kComm };
  static constexpr int kNumSlots = 4;
  // The slot a node takes, from its type and attributes: the feeder's class of the node.
  static Slot SlotOfNode(const et::Trace& trace, uint32_t node);
  Slot SlotOf(uint32_t node) const { return static_cast<Slot>(feeder_.node_class(node)); }
  void IssueReady();
  void Issue(uint32_t node);
  // Issue's stages by node type; each either starts the node or fails the run.
  void IssueReplay(uint32_t node);  // takes its (recorded or roofline) time
  void IssueMemoryAccess(uint32_t node, bool load);
  void IssuePointToPoint(uint32_t node, bool send);
  void IssueCollective(uint32_t node, Slot slot);
  // `req` for collective node `node` (type, size, root, group, ...), or why it cannot run.
  Status FillCollectiveRequest(uint32_t node, CollectiveRequest& req);
  void Complete(uint32_t node);
  void Fail(Status s);
  std::string NodeLabel(uint32_t node) const;  // "node <id> '<name>'", the request's label
  // "NPU <n>", with "(copy <c>, rank <r>)" when the trace is replicated.
  std::string NpuName() const;
  std::string Label(uint32_t node) const;  // "<NpuName()> node <id> '<name>'"
  // The NPU that rank `rank` of the trace is for this NPU: itself unless replicated.
  int PeerNpu(int64_t rank) const;
  // This NPU's rank in the trace, and the trace's number of ranks.
  int TraceRank() const;
  int TraceRanks() const;
  // The system-layer group that trace group `pg` is for this NPU, or nullopt if undefined.
  // A group only other ranks' METADATA defined is not this NPU's (`other_ranks_only` says so).
  std::optional<int> SystemGroup(int pg, bool* other_ranks_only = nullptr);
  // `s` about `node`, naming the node once: problems the system layer starts with the
  // request's label get only "NPU <n> " before them.
  Status AtNode(uint32_t node, const Status& s) const;
  Time ComputeTime(uint32_t node) const;
  // trace-enabled's line for `node` ("issue" or "callback", as ASTRA-sim's).
  void TraceNode(const char* what, uint32_t node) const;
  // Whether `node`'s time is the roofline's (a GPU COMP node with roofline-enabled).
  bool UsesRoofline(uint32_t node) const;
  // Where `node` shows in the breakdown and on timelines, from its slot; nullopt for nodes that
  // take no time (metadata, invalid).
  std::optional<Track> TrackOf(uint32_t node, Slot slot) const;
  Status RegisterProcessGroups(uint32_t node);
  // With keep_activities: why `node`, issued now, begins now (Activity::link and after).
  void NoteWhyIssued(uint32_t node);
  // The collective starts in the system layer now (after its launch floor).
  Status StartCollective(uint32_t node, const CollectiveRequest& req);
  // A trace's byte count as simulated: times --comm-scale, saturating.
  uint64_t ScaledBytes(uint64_t bytes) const;

  const int npu_;
  const et::Trace& trace_;
  et::Feeder feeder_;
  SystemLayer& system_;
  RemoteMemory* memory_;
  WorkloadParams params_;
  int used_[4] = {0, 0, 0, 0};
  FlatMap<uint32_t, Time, std::hash<uint32_t>> started_;  // running nodes: when issued
  bool finished_ = false;
  bool in_issue_ = false;
  bool reissue_ = false;
  NpuStats stats_;
  std::vector<Activity> activities_;
  // System ids of the groups this NPU's own METADATA nodes defined (SystemGroup).
  std::set<int> own_groups_;
  // IssueReady's nodes to issue, reused so that each call does not allocate.
  std::vector<uint32_t> issue_batch_;
  // With keep_activities (NoteWhyIssued): the last node that took time to end here, and per
  // node of the trace when it ended and why it began.
  uint32_t completing_ = kNoNode;
  std::vector<Time> end_;
  std::vector<uint32_t> after_;
  std::vector<PathLink> link_;
  std::vector<CollectiveJoin> joins_;
  std::vector<PointToPoint> p2p_;
  BreakdownAccumulator breakdown_;
  static constexpr uint64_t kLaunchDone = uint64_t{1} << 40;  // OnEvent: start the collective
  std::map<uint32_t, CollectiveRequest> launching_;           // collectives in their launch floor
  Status error_;
  std::unique_ptr<LocalMemoryTracker> memory_tracker_;
};

}  // namespace orrery
