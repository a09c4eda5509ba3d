#include "workload/executor.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <numeric>
#include <optional>
#include <string_view>

#include "config/comm_group_config.h"
#include "et_feeder/process_groups.h"

namespace orrery {
namespace {

CollectiveType ToSystem(et::CollectiveType t) { return static_cast<CollectiveType>(t); }

// A byte count computed in double (a size times --comm-scale, or inflated for protocol
// efficiency), truncated; past 2^64 bytes or NaN it saturates (a comm_size of 2^64 - 1 is 2^64
// as a double), where a plain conversion is undefined and gave 0 bytes on x86.
uint64_t SaturatedBytes(double bytes) {
  constexpr double kTwoToThe64 = 18446744073709551616.0;
  return bytes < kTwoToThe64 ? static_cast<uint64_t>(bytes) : UINT64_MAX;
}

}  // namespace

// "" and "0" are the world group; other names are decimal group ids up to kMaxCommGroupId.
StatusOr<int> ParseGroup(std::string_view pg) {
  if (pg.empty()) return 0;
  const int v = ParseDecimalId(pg);
  if (v < 0) {
    return Status::Error("pg_name '" + std::string(pg) +
                         "' is not a communicator group number; expected 0 to " +
                         std::to_string(kMaxCommGroupId) + " (\"\" or \"0\": every NPU)");
  }
  return v;
}

NpuExecutor::NpuExecutor(int npu, const et::Trace& trace, SystemLayer& system, RemoteMemory* memory,
                         const WorkloadParams& params,
                         std::shared_ptr<const std::vector<uint8_t>> slot_classes)
    : npu_(npu),
      trace_(trace),
      feeder_(trace, slot_classes != nullptr ? std::move(slot_classes) : SlotClassesOf(trace),
              kNumSlots),
      system_(system),
      memory_(memory),
      params_(params) {
  if (params.track_local_mem) memory_tracker_ = std::make_unique<LocalMemoryTracker>(npu);
  if (params.keep_activities) {
    end_.assign(trace.size(), Time::Zero());
    after_.assign(trace.size(), kNoNode);
    link_.assign(trace.size(), PathLink::kStart);
  }
}

std::string NpuExecutor::NodeLabel(uint32_t node) const {
  return "node " + std::to_string(trace_.id(node)) + " '" + std::string(trace_.name(node)) + "'";
}

std::string NpuExecutor::NpuName() const {
  std::string name = "NPU " + std::to_string(npu_);
  if (const Placement* p = params_.placement) name += " (" + p->NameOf(npu_) + ")";
  return name;
}

std::string NpuExecutor::Label(uint32_t node) const { return NpuName() + " " + NodeLabel(node); }

int NpuExecutor::PeerNpu(int64_t rank) const {
  return params_.placement ? params_.placement->PeerNpu(npu_, rank) : static_cast<int>(rank);
}

int NpuExecutor::TraceRank() const {
  return params_.placement ? params_.placement->Rank(npu_) : npu_;
}

int NpuExecutor::TraceRanks() const {
  return params_.placement ? params_.placement->RanksOf(npu_) : system_.num_npus();
}

std::optional<int> NpuExecutor::SystemGroup(int pg, bool* other_ranks_only) {
  std::optional<int> id;
  if (params_.placement) {
    id = params_.placement->Find(system_, pg, npu_);
  } else if (pg == 0 || system_.HasGroup(pg)) {
    id = pg;
  }
  // A group only another rank's METADATA defined: whether it had run yet would decide.
  if (id && pg != 0 && system_.TraceDefined(*id) && own_groups_.count(*id) == 0) {
    if (other_ranks_only != nullptr) *other_ranks_only = true;
    return std::nullopt;
  }
  return id;
}

Status NpuExecutor::AtNode(uint32_t node, const Status& s) const {
  // The system layer starts its problems with the request's label, NodeLabel(node).
  const std::string labelled = NodeLabel(node) + ":";
  const std::string npu = NpuName() + " ";
  Status out;
  for (const std::string& p : s.problems()) {
    out.Add(p.rfind(labelled, 0) == 0 ? npu + p : Label(node) + ": " + p);
  }
  return out;
}

void NpuExecutor::Fail(Status s) {
  if (error_.ok()) error_ = s.WithContext(params_.file != nullptr ? *params_.file : trace_.path());
  system_.sim().Abort();
}

std::shared_ptr<const std::vector<uint8_t>> NpuExecutor::SlotClassesOf(const et::Trace& trace) {
  auto classes = std::make_shared<std::vector<uint8_t>>(trace.size());
  for (uint32_t i = 0; i < trace.size(); ++i) {
    (*classes)[i] = static_cast<uint8_t>(SlotOfNode(trace, i));
  }
  return classes;
}

NpuExecutor::Slot NpuExecutor::SlotOfNode(const et::Trace& trace, uint32_t node) {
  switch (trace.type(node)) {
    case et::NodeType::kComp:
      return trace.is_cpu_op(node).value_or(false) ? Slot::kCpu : Slot::kGpu;
    case et::NodeType::kCommColl:
      // Host-side collective operators (PyTorch c10d::*, is_cpu_op true) carry no
      // comm_type/comm_size: the collective itself is the NCCL kernel node; the operator is
      // CPU work. Others without them are refused when issued. A barrier carries no data, so it
      // may have no comm_size.
      if (!trace.comm_type(node) ||
          (!trace.comm_size(node) && *trace.comm_type(node) != et::CollectiveType::kBarrier)) {
        return trace.is_cpu_op(node).value_or(false) ? Slot::kCpu : Slot::kGpu;
      }
      return Slot::kComm;
    case et::NodeType::kCommSend:
    case et::NodeType::kMemLoad:
    case et::NodeType::kMemStore:
      return Slot::kComm;
    default:
      return Slot::kNone;
  }
}

void NpuExecutor::Start() { IssueReady(); }

std::optional<Track> NpuExecutor::TrackOf(uint32_t node, Slot slot) const {
  switch (slot) {
    case Slot::kGpu:
      return Track::kGpu;
    case Slot::kCpu:
      return Track::kCpu;
    case Slot::kComm:
      return trace_.type(node) == et::NodeType::kMemLoad ||
                     trace_.type(node) == et::NodeType::kMemStore
                 ? Track::kMemory
                 : Track::kComm;
    case Slot::kNone:
      break;
  }
  // Receives hold no slot; metadata and invalid nodes take no time.
  if (trace_.type(node) == et::NodeType::kCommRecv) return Track::kRecv;
  return std::nullopt;
}

void NpuExecutor::IssueReady() {
  // Issuing can complete nodes at once (metadata, invalid), which frees more: loop until
  // nothing changes, but never recurse.
  if (in_issue_) {
    reissue_ = true;
    return;
  }
  in_issue_ = true;
  const int limit[kNumSlots] = {1 << 30, params_.cpu_slots, params_.gpu_slots, params_.comm_slots};
  std::vector<uint32_t>& batch = issue_batch_;  // kept between calls (in_issue_: one user)
  do {
    reissue_ = false;
    // The first issuable nodes of each slot, as many as it has free, issued in ascending node
    // id: the nodes and the order a scan of every issuable node in id order would give, without
    // reading the ones waiting behind a busy slot.
    batch.clear();
    for (int s = 0; s < kNumSlots; ++s) {
      const int room = limit[s] - used_[s];
      if (room > 0) feeder_.FirstIssuable(s, static_cast<size_t>(room), &batch);
    }
    if (batch.size() > 1) std::sort(batch.begin(), batch.end());
    // By index: Issue cannot reach this function's body (in_issue_), so `batch` stays as it is.
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!error_.ok()) break;
      Issue(batch[i]);
    }
  } while (reissue_ && error_.ok());
  in_issue_ = false;
  if (!finished_ && feeder_.AllDone()) {
    finished_ = true;
    stats_.finish = system_.sim().now();
  }
}

bool NpuExecutor::UsesRoofline(uint32_t node) const {
  return params_.roofline_enabled && !params_.replay_only &&
         !trace_.is_cpu_op(node).value_or(false) && trace_.type(node) == et::NodeType::kComp;
}

Time NpuExecutor::ComputeTime(uint32_t node) const {
  Time t;
  if (UsesRoofline(node)) {
    t = RooflineTime(params_.roofline, trace_.num_ops(node).value_or(0),
                     trace_.tensor_size(node).value_or(0));
  } else {
    t = ReplayTime(trace_.duration_micros(node));
  }
  // Compute work only (compute nodes and host-side collective operators, the CPU and GPU slots'
  // nodes): under replay-only a replayed collective, send or memory access keeps its recorded
  // time.
  const Slot slot = SlotOf(node);
  if (params_.compute_scale != 1.0 && !t.IsInfinite() &&
      (slot == Slot::kCpu || slot == Slot::kGpu)) {
    t = Time::FromNsDouble(t.Ns() * params_.compute_scale).TruncatedToNs();
  }
  return t;
}

Status NpuExecutor::RegisterProcessGroups(uint32_t node) {
  // PyTorch's process_group:init: inputs.values holds a Python list of dicts (or Chakra's
  // converter's list of one string holding them as JSON: OneStringInList), each
  // {'pg_name': '<int>', 'pg_desc': ..., 'pg_size': ..., 'ranks': [...]}; empty ranks means
  // every NPU. Keys are read by name, in any order. A group whose name is not a number (PyTorch
  // can hash group names) is one no collective here can name (pg_name is a group number), so it
  // is left out.
  auto values = trace_.metadata_inputs(node);
  if (!values) return Status::Ok();
  StatusOr<std::vector<et::ProcessGroupSpec>> groups =
      et::ParseProcessGroups(*values, TraceRanks());
  if (!groups.ok()) return AtNode(node, groups.status());
  for (et::ProcessGroupSpec& g : *groups) {
    const int pg = g.pg;
    const std::vector<int>& ranks = g.ranks;
    if (pg > 0 && params_.placement != nullptr) {
      const bool known = params_.placement->Lookup(pg, npu_).has_value();
      StatusOr<int> id = params_.placement->Define(system_, pg, ranks, npu_);
      if (!id.ok()) return AtNode(node, id.status());
      if (!known) system_.MarkTraceDefined(*id);
      own_groups_.insert(*id);
    } else if (pg > 0 && !system_.HasGroup(pg)) {
      Status s = system_.AddGroup(pg, ranks);
      if (!s.ok()) return AtNode(node, s);
      system_.MarkTraceDefined(pg);
      own_groups_.insert(pg);
    } else if (pg > 0) {
      Status s =
          system_.CheckSameMembers(pg, ranks, "METADATA: process group " + std::to_string(pg));
      if (!s.ok()) return AtNode(node, s);
      own_groups_.insert(pg);
    }
  }
  return Status::Ok();
}

void NpuExecutor::TraceNode(const char* what, uint32_t node) const {
  params_.trace_nodes(std::string(what) + ",sys->id=" + std::to_string(npu_) +
                      ", tick=" + std::to_string(system_.sim().now().WholeNs()) +
                      ", node->id=" + std::to_string(trace_.id(node)) +
                      ", node->name=" + std::string(trace_.name(node)) +
                      ", node->type=" + std::to_string(static_cast<int>(trace_.type(node))));
}

void NpuExecutor::Issue(uint32_t node) {
  if (params_.trace_nodes) TraceNode("issue", node);
  const Slot slot = SlotOf(node);
  feeder_.Take(node);
  ++used_[static_cast<int>(slot)];
  started_.FindOrInsert(node) = system_.sim().now();
  if (params_.keep_activities) NoteWhyIssued(node);
  if (const std::optional<Track> track = TrackOf(node, slot)) {
    breakdown_.Begin(*track, system_.sim().now());
  }
  const et::NodeType type = trace_.type(node);
  // replay-only replays invalid nodes too (1 ns for 0 us), as ASTRA-sim's issue_replay.
  if (params_.replay_only && type != et::NodeType::kMetadata) {
    IssueReplay(node);
    return;
  }
  switch (type) {
    case et::NodeType::kInvalid:
      Complete(node);
      return;
    case et::NodeType::kMetadata: {
      Status s = RegisterProcessGroups(node);
      if (!s.ok()) return Fail(s);
      Complete(node);
      return;
    }
    case et::NodeType::kComp:
      IssueReplay(node);
      return;
    case et::NodeType::kMemLoad:
    case et::NodeType::kMemStore:
      IssueMemoryAccess(node, type == et::NodeType::kMemLoad);
      return;
    case et::NodeType::kCommSend:
    case et::NodeType::kCommRecv:
      IssuePointToPoint(node, type == et::NodeType::kCommSend);
      return;
    case et::NodeType::kCommColl:
      IssueCollective(node, slot);
      return;
  }
}

void NpuExecutor::IssueReplay(uint32_t node) {
  if (UsesRoofline(node) &&
      (!trace_.num_ops(node).has_value() || !trace_.tensor_size(node).has_value())) {
    // ASTRA-sim throws on a missing num_ops; a time of 0 would be silently wrong.
    const bool ops = trace_.num_ops(node).has_value();
    return Fail(Status::Error(
        Label(node) + ": roofline-enabled times a GPU compute node from its 'num_ops' and " +
        "'tensor_size', and this node has no " +
        (ops                                    ? std::string("'tensor_size'")
         : trace_.tensor_size(node).has_value() ? std::string("'num_ops'")
                                                : std::string("'num_ops' or 'tensor_size'")) +
        " (duration_micros " + std::to_string(trace_.duration_micros(node)) +
        "); expected both attributes on every GPU COMP node, or roofline-enabled: 0 in the " +
        "system config to replay duration_micros"));
  }
  Simulation& sim = system_.sim();
  const Time end = sim.now() + ComputeTime(node);
  if (end.IsInfinite()) {
    return Fail(Status::Error(Label(node) +
                              ": its compute time ends past the end of simulated time (int64 "
                              "picoseconds, about 106 days); duration_micros " +
                              std::to_string(trace_.duration_micros(node)) + ", num_ops " +
                              std::to_string(trace_.num_ops(node).value_or(0)) + ", tensor_size " +
                              std::to_string(trace_.tensor_size(node).value_or(0))));
  }
  sim.Schedule(end, this, node);
}

void NpuExecutor::IssueMemoryAccess(uint32_t node, bool load) {
  // As a send's comm_size: without its bytes the node would move nothing and take only the
  // memory's latency (ASTRA-sim's feeder throws on the missing attribute).
  const std::optional<uint64_t> size = trace_.tensor_size(node);
  if (!size) {
    return Fail(Status::Error(Label(node) + ": a " + (load ? "MEM_LOAD_NODE" : "MEM_STORE_NODE") +
                              " with no 'tensor_size'; expected its bytes"));
  }
  Status s = memory_ == nullptr ? Status::Error("no remote memory model")
                                : memory_->Issue(npu_, Bytes(*size), this, node);
  if (!s.ok()) return Fail(AtNode(node, s));
}

void NpuExecutor::IssuePointToPoint(uint32_t node, bool send) {
  const auto size = trace_.comm_size(node);
  const auto peer = send ? trace_.comm_dst(node) : trace_.comm_src(node);
  const auto self = send ? trace_.comm_src(node) : trace_.comm_dst(node);
  // Built only for an error: this is the issue path of every send and receive.
  auto valid_peer = [&] {
    return params_.placement
               ? "another rank of the trace in [0, " + std::to_string(TraceRanks() - 1) + "] (" +
                     params_.placement->Scope() + ")"
               : "another NPU id in [0, " + std::to_string(system_.num_npus() - 1) + "]";
  };
  if (!size) {
    return Fail(Status::Error(Label(node) + ": a " + (send ? "COMM_SEND_NODE" : "COMM_RECV_NODE") +
                              " with no 'comm_size'; expected its bytes"));
  }
  if (!peer) {
    return Fail(Status::Error(Label(node) + ": a " + (send ? "COMM_SEND_NODE" : "COMM_RECV_NODE") +
                              " with no " + (send ? "'comm_dst'" : "'comm_src'") + "; expected " +
                              valid_peer()));
  }
  if (*peer < 0 || *peer >= TraceRanks() || *peer == TraceRank()) {
    return Fail(Status::Invalid(Label(node), send ? "'comm_dst'" : "'comm_src'",
                                std::to_string(*peer), valid_peer()));
  }
  if (self && *self != TraceRank()) {
    return Fail(
        Status::Invalid(Label(node), send ? "'comm_src'" : "'comm_dst'", std::to_string(*self),
                        (params_.placement ? "this NPU's rank in the trace " : "this NPU's id ") +
                            std::to_string(TraceRank())));
  }
  const uint64_t bytes = ScaledBytes(*size);
  const int64_t tag = trace_.comm_tag(node).value_or(0);
  if (params_.keep_activities) {
    p2p_.push_back(PointToPoint{node, send, PeerNpu(*peer), tag, bytes});
  }
  if (send) {
    stats_.bytes_sent += bytes;
    system_.npu(npu_).SendMessage(PeerNpu(*peer), tag, bytes, this, node);
  } else {
    system_.npu(npu_).ReceiveMessage(PeerNpu(*peer), tag, bytes, this, node);
  }
}

void NpuExecutor::IssueCollective(uint32_t node, Slot slot) {
  if (slot != Slot::kComm) {
    // A host-side collective operator (is_cpu_op true, as PyTorch's c10d::* nodes): CPU
    // work. Anything else without the attributes would silently run as compute and leave
    // its peers waiting: refuse it.
    if (trace_.is_cpu_op(node).value_or(false)) {
      IssueReplay(node);
      return;
    }
    return Fail(Status::Error(
        Label(node) + ": a COMM_COLL_NODE with " +
        (trace_.comm_type(node) ? std::string("no 'comm_size'") : std::string("no 'comm_type'")) +
        "; a collective needs 'comm_type', " + et::kCommTypeValues +
        ", and 'comm_size' (bytes; a barrier may omit it); only a host-side operator "
        "(is_cpu_op true) may have neither, and it runs as CPU work"));
  }
  CollectiveRequest req;
  if (Status s = FillCollectiveRequest(node, req); !s.ok()) return Fail(s);
  const uint64_t scaled_size = req.size;  // before the protocol's extra bytes
  Time launch_latency = params_.collective_launch_latency;
  double efficiency = params_.protocol_efficiency;
  if (params_.tuner != nullptr) {
    // The collective library's choice for this call (algorithms, floor, efficiency).
    StatusOr<CollectiveChoice> c = params_.tuner->Choose(req);
    if (!c.ok()) return Fail(AtNode(node, c.status()));
    req.impl = c->impl;
    req.rooted = c->rooted;
    launch_latency = c->launch_latency;
    efficiency = c->efficiency;
  }
  if (efficiency < 1 && req.size > 0) {
    // The protocol's extra bytes, rounded up to the size's own power-of-two granularity
    // (at most kEfficiencyGrainBytes) and to the splits, so that chunking stays as even.
    req.size =
        InflateForEfficiency(req.size, efficiency, system_.params().preferred_dataset_splits);
  }
  ++stats_.collectives;
  stats_.bytes_collective += scaled_size;
  if (launch_latency > Time::Zero()) {
    // The launch floor first; the collective starts from OnEvent.
    launching_.emplace(node, std::move(req));
    system_.sim().ScheduleAfter(launch_latency, this, node | kLaunchDone);
    return;
  }
  Status s = StartCollective(node, req);
  if (!s.ok()) return Fail(AtNode(node, s));
}

Status NpuExecutor::FillCollectiveRequest(uint32_t node, CollectiveRequest& req) {
  const et::CollectiveType ct = *trace_.comm_type(node);
  req.type = ToSystem(ct);
  req.size = ScaledBytes(trace_.comm_size(node).value_or(0));
  // The root of a rooted collective: where the data comes from (comm_src) for broadcast
  // and scatter, where it goes (comm_dst) for reduce and gather; absent = the group's first
  // member.
  const bool root_sends =
      ct == et::CollectiveType::kBroadcast || ct == et::CollectiveType::kScatter;
  const bool root_receives = ct == et::CollectiveType::kReduce || ct == et::CollectiveType::kGather;
  const std::optional<int64_t> root = root_sends      ? trace_.comm_src(node)
                                      : root_receives ? trace_.comm_dst(node)
                                                      : std::nullopt;
  // A root past the machine is the system layer's to name (it knows the group); a negative
  // one would silently be the group's first member, and with copies one past the trace's
  // ranks would land in another copy.
  if (root && (*root < 0 || (params_.placement != nullptr && *root >= TraceRanks()))) {
    return Status::Invalid(Label(node),
                           root_sends ? "'comm_src' (the root)" : "'comm_dst' (the root)",
                           std::to_string(*root),
                           params_.placement != nullptr
                               ? "a rank of the trace in [0, " + std::to_string(TraceRanks() - 1) +
                                     "] (" + params_.placement->Scope() + ")"
                               : "an NPU id in [0, " + std::to_string(system_.num_npus() - 1) +
                                     "], or none for the group's first member");
  }
  if (root) req.root = static_cast<int>(std::min<int64_t>(*root, INT_MAX));
  if (auto dims = trace_.involved_dim(node)) req.involved_dims = *dims;
  req.explicit_priority = static_cast<int>(trace_.comm_priority(node).value_or(0));
  req.node_id = static_cast<int64_t>(trace_.id(node));
  req.label = NodeLabel(node);
  int pg = 0;
  if (auto name = trace_.pg_name(node)) {
    StatusOr<int> g = ParseGroup(*name);
    if (!g.ok()) return AtNode(node, g.status());
    pg = *g;
  }
  bool other_ranks_only = false;
  std::optional<int> group = SystemGroup(pg, &other_ranks_only);
  if (!group) {
    return Status::Error(
        Label(node) + ": pg_name '" + std::string(trace_.pg_name(node).value_or("")) +
        "' names a communicator group that is defined neither in " +
        (params_.placement != nullptr && params_.placement->jobs()
             ? std::string("the job's 'comm-groups' file")
             : std::string("--comm-group-configuration")) +
        " nor by a METADATA node of this NPU's trace before it" +
        (other_ranks_only ? std::string(" (another rank's METADATA defines it: each rank's "
                                        "trace defines the groups it uses, as in ASTRA-sim)")
                          : std::string()));
  }
  req.group = *group;
  if (params_.placement != nullptr) {
    req.root = params_.placement->RootNpu(pg, req.root, npu_);
  }
  return Status::Ok();
}

void NpuExecutor::Complete(uint32_t node) {
  if (params_.trace_nodes) TraceNode("callback", node);
  const Slot slot = SlotOf(node);
  --used_[static_cast<int>(slot)];
  size_t at = 0;
  const Time* running = started_.Find(node, &at);
  ORRERY_CHECK(running != nullptr, Label(node) + " completed but was not running");
  const Time started = *running;
  started_.EraseAt(at);
  const Time took = system_.sim().now() - started;
  const std::optional<Track> track = TrackOf(node, slot);
  // What ASTRA-sim's issue_replay also counts as GPU time: every node that is not a CPU op.
  if (params_.replay_only && track != std::optional<Track>(Track::kGpu) &&
      !trace_.is_cpu_op(node).value_or(false)) {
    stats_.replayed_non_compute += took;
  }
  if (track) {
    switch (*track) {
      case Track::kGpu:
        stats_.gpu_compute += took;
        break;
      case Track::kCpu:
        stats_.cpu_compute += took;
        break;
      case Track::kMemory:
        stats_.memory += took;
        break;
      case Track::kComm:
        stats_.communication += took;
        break;
      case Track::kRecv:  // holds no slot: not communication-slot time
        break;
    }
    breakdown_.End(*track, system_.sim().now());
    if (params_.keep_activities) {
      activities_.push_back(
          Activity{node, *track, started, system_.sim().now(), link_[node], after_[node]});
      completing_ = node;
    }
  }
  if (params_.keep_activities) end_[node] = system_.sim().now();
  if (memory_tracker_) {
    if (trace_.tensor_list_has_wrong_type(node)) {
      return Fail(Status::Error(Label(node) +
                                ": attribute 'inputs' or 'outputs' is not a string_list; "
                                "track-local-mem expects [name, size in bytes, name, size, ...]"));
    }
    Status s =
        memory_tracker_->Record(trace_.id(node), trace_.name(node), started, system_.sim().now(),
                                trace_.tensor_inputs(node), trace_.tensor_outputs(node));
    if (!s.ok()) return Fail(s);
  }
  ++stats_.nodes_done;
  feeder_.Finish(node);
  IssueReady();
}

uint64_t NpuExecutor::ScaledBytes(uint64_t bytes) const {
  // Unscaled, the trace's bytes as written (a double holds 53 bits: 2^63 - 1 had become 2^63).
  if (system_.params().comm_scale == 1) return bytes;
  return SaturatedBytes(static_cast<double>(bytes) * system_.params().comm_scale);
}

uint64_t InflateForEfficiency(uint64_t size, double efficiency, int splits) {
  if (!(efficiency < 1) || size == 0) return size;
  uint64_t grain = std::min<uint64_t>(size & (~size + 1), kEfficiencyGrainBytes);
  // A multiple of the splits too: the collective divides into its chunks without a remainder,
  // which would become one more whole chunk (the ASTRA-sim rule) and, past the active chunks,
  // one more round of the algorithm's steps. 4 B at LL's efficiency would otherwise take two.
  if (splits > 1) grain = std::lcm(grain, static_cast<uint64_t>(splits));
  // Whole grains; the grain is at most 4 KiB times the splits, so the product is exact until
  // it saturates.
  return SaturatedBytes(std::ceil(static_cast<double>(size) / efficiency / grain) * grain);
}

void NpuExecutor::OnEvent(uint64_t arg) {
  const uint32_t node = static_cast<uint32_t>(arg);
  if ((arg & kLaunchDone) == 0) return Complete(node);
  auto it = launching_.find(node);
  const CollectiveRequest req = std::move(it->second);
  launching_.erase(it);
  Status s = StartCollective(node, req);
  if (!s.ok()) Fail(AtNode(node, s));
}

Status NpuExecutor::StartCollective(uint32_t node, const CollectiveRequest& req) {
  if (params_.keep_activities) {
    const NpuSystem::Span span = system_.npu(npu_).CollectiveSpan(req);
    joins_.push_back(CollectiveJoin{node, req.group, system_.sim().now(), span.members, span.first,
                                    ScaledBytes(trace_.comm_size(node).value_or(0))});
  }
  return system_.npu(npu_).StartCollective(req, this, node);
}

void NpuExecutor::NoteWhyIssued(uint32_t node) {
  const Time now = system_.sim().now();
  // The dependency that ended last (implied ones, dropped by the loader, end before it).
  uint32_t last = kNoNode;
  for (uint32_t p : trace_.parents(node)) {
    if (last == kNoNode || end_[last] < end_[p]) last = p;
  }
  PathLink link = PathLink::kStart;
  uint32_t after = kNoNode;
  if (last != kNoNode && end_[last] == now) {
    // A parent that takes no time (metadata) passes on what it waited for.
    const bool timed = TrackOf(last, SlotOf(last)).has_value();
    after = timed ? last : after_[last];
    link = timed ? PathLink::kDependency : link_[last];
  } else if (completing_ != kNoNode) {
    // Ready before now: it waited for the slot that the node ending now freed (issuing runs
    // only at the start and when a node that takes time ends).
    after = completing_;
    link = PathLink::kSlot;
  }
  after_[node] = after;
  link_[node] = link;
}

void NpuExecutor::OnCollectiveDone(uint64_t node) { Complete(static_cast<uint32_t>(node)); }
void NpuExecutor::OnMessage(uint64_t node) { Complete(static_cast<uint32_t>(node)); }

std::string NpuExecutor::DescribeCookie(uint64_t node) const {
  return Label(static_cast<uint32_t>(node));
}
void NpuExecutor::OnMemoryDone(uint64_t node) { Complete(static_cast<uint32_t>(node)); }

std::vector<std::string> NpuExecutor::DescribeStuck(int max_items) const {
  std::vector<std::string> out;
  auto add = [&](std::string s) {
    if (static_cast<int>(out.size()) < max_items) out.push_back(std::move(s));
  };
  // Running nodes first (what the rest waits for), then ready ones, then the rest.
  const std::vector<uint32_t> unfinished = feeder_.Unfinished();
  std::vector<uint32_t> order;
  for (et::NodeState first : {et::NodeState::kRunning, et::NodeState::kIssuable}) {
    for (uint32_t node : unfinished) {
      if (feeder_.state(node) == first) order.push_back(node);
    }
  }
  for (uint32_t node : unfinished) {
    const et::NodeState s = feeder_.state(node);
    if (s != et::NodeState::kRunning && s != et::NodeState::kIssuable) order.push_back(node);
  }
  size_t shown = 0;
  for (uint32_t node : order) {
    if (static_cast<int>(out.size()) >= max_items - 1 && shown + 1 < order.size()) {
      add("... and " + std::to_string(order.size() - shown) + " more unfinished nodes");
      break;
    }
    ++shown;
    switch (feeder_.state(node)) {
      case et::NodeState::kRunning: {
        std::string what = "running since " + started_.Find(node)->ToHuman();
        const et::NodeType t = trace_.type(node);
        if (t == et::NodeType::kCommRecv) {
          what += ", waiting to receive from NPU " +
                  std::to_string(PeerNpu(trace_.comm_src(node).value_or(-1))) + " (tag " +
                  std::to_string(trace_.comm_tag(node).value_or(0)) + ", " +
                  std::to_string(ScaledBytes(trace_.comm_size(node).value_or(0))) + " B)";
        } else if (t == et::NodeType::kCommSend) {
          what += ", its message to NPU " +
                  std::to_string(PeerNpu(trace_.comm_dst(node).value_or(-1))) +
                  " was never received";
        } else if (t == et::NodeType::kCommColl) {
          what += ", collective waiting for its peers";
        }
        add(Label(node) + ": " + what);
        break;
      }
      case et::NodeState::kIssuable:
        add(Label(node) + ": ready, waiting for a free hardware slot");
        break;
      default: {
        std::string parents;
        int shown = 0;
        for (uint32_t p : trace_.parents(node)) {
          if (feeder_.state(p) == et::NodeState::kDone) continue;
          if (shown++ == 3) {
            parents += ", ...";
            break;
          }
          parents += (parents.empty() ? "" : ", ") + std::to_string(trace_.id(p));
        }
        add(Label(node) + ": waits for node(s) " + parents);
        break;
      }
    }
  }
  // Chunk streams and custom collectives in progress.
  for (const auto& s : system_.npu(npu_).DescribeActive()) add("  " + s);
  return out;
}

bool NpuExecutor::WaitsOnPointToPoint() const {
  for (uint32_t node : feeder_.Unfinished()) {
    const et::NodeType t = trace_.type(node);
    if (feeder_.state(node) == et::NodeState::kRunning &&
        (t == et::NodeType::kCommRecv || t == et::NodeType::kCommSend)) {
      return true;
    }
  }
  return false;
}

}  // namespace orrery
