#include "profile/importer.h"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <set>
#include <unordered_map>
#include <utility>

#include "et_feeder/proto/et_def.pb.h"
#include "et_feeder/writer.h"
#include "profile/collectives.h"
#include "profile/import_common.h"

namespace orrery {
namespace profile {

namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

// Whole microseconds since t0, rounded to nearest (the host chain's absolute times).
int64_t UsSince(int64_t ns, int64_t t0) { return (std::max<int64_t>(ns - t0, 0) + 500) / 1000; }

// One node to write. Nodes are made in any order and numbered by (time, kind) at the end.
struct Node {
  int64_t key_ns = 0;        // measured start: orders the ids
  uint64_t duration_us = 0;  // duration_micros
  int64_t stream = -1;
  uint32_t gpu = kNone;        // index into the trace's GPU ops; kNone for a host node
  int32_t coll = -1;           // index into the rank's collectives
  std::vector<uint32_t> deps;  // node indexes
};

// The dependency graph of one rank, built from its profile.
class RankGraph {
 public:
  RankGraph(const KinetoTrace& t, const ImportOptions& o, RankImport* stats)
      : t_(t), o_(o), stats_(stats) {}
  void Build(const std::vector<int32_t>& coll_of_gpu);
  std::vector<Node>& nodes() { return nodes_; }

 private:
  struct Anchor {
    int64_t time_ns;
    uint32_t waits_for;  // a GPU op's node the host waits for first (a sync), or kNone
    uint32_t released;   // the GPU op's node released at this time, or kNone
  };
  // Releases GPU op `i` at its measured start, or at the first synchronisation call after its
  // launch if that comes earlier (the host reached that call before waiting for the GPU).
  void Release(uint32_t i);
  bool IsSyncCall(const RuntimeCall& c) const;
  void StreamOrder();
  void CrossStream(const std::vector<int32_t>& coll_of_gpu);
  void Syncs();
  void HostChain();
  // Drops synchronisation dependencies that close a cycle (an op the host waits for that the
  // profile's timestamps also make wait for a later host node); returns how many.
  uint64_t BreakSyncCycles();
  void AddDep(uint32_t node, uint32_t on, uint64_t* counter) {
    if (node == on || on == kNone) return;
    std::vector<uint32_t>& d = nodes_[node].deps;
    if (std::find(d.begin(), d.end(), on) != d.end()) return;
    d.push_back(on);
    ++*counter;
  }
  // A wait of GPU op `i` for op `on` of another stream, kept only when the profile's times agree
  // with it: `on` comes first in the trace's order (start, stream, end) and had ended when `i`
  // began. A profile whose times contradict a wait (a kernel that starts before the call that
  // launched it, say) would otherwise close a cycle; the contradicted wait is counted instead.
  void AddCrossStreamWait(uint32_t i, uint32_t on, uint64_t* counter) {
    if (on == kNone) return;
    if (on >= i || t_.gpu[on].end_ns > t_.gpu[i].start_ns) {
      ++stats_->contradicted_waits;
      return;
    }
    AddDep(i, on, counter);
  }

  const KinetoTrace& t_;
  const ImportOptions& o_;
  RankImport* stats_;
  int64_t t0_ = 0;
  std::vector<Node> nodes_;  // GPU ops first (node i = GPU op i), then the host chain
  std::unordered_map<int64_t, const RuntimeCall*> launch_;  // correlation -> call
  std::map<int64_t, std::vector<uint32_t>> streams_;        // stream -> ops by start
  std::vector<Anchor> anchors_;
  std::vector<int64_t> sync_starts_;  // synchronisation calls' starts, ascending
  uint32_t first_host_ = 0;           // nodes from here on are the host chain
};

bool RankGraph::IsSyncCall(const RuntimeCall& c) const {
  if (c.kind == RuntimeKind::kSync) return true;
  return c.kind == RuntimeKind::kLaunch &&
         (t_.names[c.name] == "cudaMemcpy" || t_.names[c.name] == "cudaMemset");
}

void RankGraph::Release(uint32_t i) {
  const GpuOp& op = t_.gpu[i];
  const auto l = launch_.find(op.correlation);
  int64_t at = op.start_ns;
  if (l != launch_.end()) {
    const auto s = std::upper_bound(sync_starts_.begin(), sync_starts_.end(), l->second->start_ns);
    if (s != sync_starts_.end()) at = std::min(at, *s);
  }
  anchors_.push_back({at, kNone, i});
}

void RankGraph::Build(const std::vector<int32_t>& coll_of_gpu) {
  t0_ = t_.gpu.empty() ? 0 : t_.gpu.front().start_ns;
  for (const RuntimeCall& c : t_.runtime) {
    if (c.kind == RuntimeKind::kLaunch && c.correlation >= 0) launch_.emplace(c.correlation, &c);
  }
  for (const RuntimeCall& c : t_.runtime) {
    if (IsSyncCall(c)) sync_starts_.push_back(c.start_ns);
  }
  std::sort(sync_starts_.begin(), sync_starts_.end());
  nodes_.resize(t_.gpu.size());
  std::map<int64_t, int64_t> carry;  // per stream: rounding remainder
  for (uint32_t i = 0; i < t_.gpu.size(); ++i) {
    const GpuOp& op = t_.gpu[i];
    Node& n = nodes_[i];
    n.key_ns = op.start_ns;
    n.gpu = i;
    n.stream = op.stream;
    n.coll = coll_of_gpu[i];
    const int64_t d = op.end_ns - op.start_ns;
    n.duration_us = static_cast<uint64_t>(RoundCarrying(d, &carry[op.stream]));
    if (n.coll < 0) {
      stats_->measured_compute_ns += d;
      stats_->written_compute_us += static_cast<int64_t>(n.duration_us);
    }
    streams_[op.stream].push_back(i);
  }
  StreamOrder();
  CrossStream(coll_of_gpu);
  Syncs();
  first_host_ = static_cast<uint32_t>(nodes_.size());
  HostChain();
  stats_->sync_deps -= BreakSyncCycles();
}

uint64_t RankGraph::BreakSyncCycles() {
  uint64_t dropped = 0;
  for (;;) {
    // Kahn's algorithm over the graph; what never becomes ready lies on or after a cycle.
    std::vector<uint32_t> waiting(nodes_.size(), 0);
    std::vector<std::vector<uint32_t>> children(nodes_.size());
    for (uint32_t i = 0; i < nodes_.size(); ++i) {
      waiting[i] = static_cast<uint32_t>(nodes_[i].deps.size());
      for (uint32_t d : nodes_[i].deps) children[d].push_back(i);
    }
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < nodes_.size(); ++i) {
      if (waiting[i] == 0) ready.push_back(i);
    }
    size_t done = 0;
    while (!ready.empty()) {
      const uint32_t i = ready.back();
      ready.pop_back();
      ++done;
      for (uint32_t c : children[i]) {
        if (--waiting[c] == 0) ready.push_back(c);
      }
    }
    if (done == nodes_.size()) return dropped;
    // The earliest stuck host node that waits for a GPU op: drop those waits.
    bool changed = false;
    for (uint32_t i = first_host_; i < nodes_.size() && !changed; ++i) {
      if (waiting[i] == 0) continue;
      std::vector<uint32_t>& d = nodes_[i].deps;
      const size_t before = d.size();
      d.erase(std::remove_if(d.begin(), d.end(), [&](uint32_t x) { return x < first_host_; }),
              d.end());
      dropped += before - d.size();
      changed = before != d.size();
    }
    // Not reached: GPU ops wait only for ops earlier in the trace's order and the host chain runs
    // forward, so every cycle passes through a host node's wait for a GPU op. Should it happen,
    // the written trace's loader names the cycle.
    if (!changed) return dropped;
  }
}

// Each op waits for the one before it on its stream. How it began after that one: queued (a
// gap of at most queued_gap_ns), released by the host (its launch began after that one ended,
// or it is the stream's first), or waiting for something else (resolved in CrossStream).
void RankGraph::StreamOrder() {
  for (const auto& [stream, ops] : streams_) {
    for (size_t k = 0; k < ops.size(); ++k) {
      const uint32_t i = ops[k];
      const GpuOp& op = t_.gpu[i];
      const auto l = launch_.find(op.correlation);
      const RuntimeCall* call = l == launch_.end() ? nullptr : l->second;
      if (k == 0) {
        Release(i);
        continue;
      }
      const GpuOp& prev = t_.gpu[ops[k - 1]];
      AddDep(i, ops[k - 1], &stats_->stream_deps);
      if (call != nullptr && call->start_ns > prev.end_ns) {
        Release(i);  // host-bound: released at its start
      }
    }
  }
}

// Waits between streams: recorded ones (cuda_sync "Stream Wait Event"); PyTorch's own, before
// every collective (the NCCL stream waits for the stream current at its launch); and gaps
// that end as an op of another stream ends. A gap nothing explains is kept as host time.
void RankGraph::CrossStream(const std::vector<int32_t>& coll_of_gpu) {
  // Per thread, the GPU ops it launched, by launch time.
  std::map<int64_t, std::vector<std::pair<int64_t, uint32_t>>> launched;
  for (uint32_t i = 0; i < t_.gpu.size(); ++i) {
    const auto l = launch_.find(t_.gpu[i].correlation);
    if (l != launch_.end()) launched[l->second->tid].push_back({l->second->start_ns, i});
  }
  for (auto& [tid, v] : launched) std::sort(v.begin(), v.end());
  const bool recorded_waits = std::any_of(t_.syncs.begin(), t_.syncs.end(), [](const SyncEvent& s) {
    return s.kind == SyncEvent::kStreamWaitEvent;
  });
  std::unordered_map<int64_t, const RuntimeCall*> call_of;  // any runtime call by correlation
  for (const RuntimeCall& c : t_.runtime) {
    if (c.correlation >= 0) call_of.emplace(c.correlation, &c);
  }
  // The last op launched on `stream` (any stream when -1) by `tid` before `ns`, not an NCCL one
  // when `compute_only`.
  auto last_launched = [&](int64_t tid, int64_t ns, int64_t stream, bool compute_only) {
    const auto it = launched.find(tid);
    if (it == launched.end()) return kNone;
    const auto& v = it->second;
    auto p = std::lower_bound(v.begin(), v.end(), std::make_pair(ns, uint32_t{0}));
    while (p != v.begin()) {
      --p;
      const GpuOp& op = t_.gpu[p->second];
      if ((stream < 0 || op.stream == stream) && !(compute_only && coll_of_gpu[p->second] >= 0)) {
        return p->second;
      }
    }
    return kNone;
  };
  if (recorded_waits) {
    for (const SyncEvent& s : t_.syncs) {
      if (s.kind != SyncEvent::kStreamWaitEvent) continue;
      const auto rec = call_of.find(s.wait_on_record_correlation);
      const auto wait = call_of.find(s.correlation);
      if (rec == call_of.end() || wait == call_of.end()) continue;
      const uint32_t before =
          last_launched(rec->second->tid, rec->second->start_ns, s.wait_on_stream, false);
      // The first op launched on the waiting stream after the wait.
      const auto it = launched.find(wait->second->tid);
      if (before == kNone || it == launched.end()) continue;
      for (auto p = std::upper_bound(it->second.begin(), it->second.end(),
                                     std::make_pair(wait->second->start_ns, kNone));
           p != it->second.end(); ++p) {
        if (t_.gpu[p->second].stream == s.stream) {
          AddCrossStreamWait(p->second, before, &stats_->event_deps);
          break;
        }
      }
    }
  } else {
    for (uint32_t i = 0; i < t_.gpu.size(); ++i) {
      if (coll_of_gpu[i] < 0) continue;
      const auto l = launch_.find(t_.gpu[i].correlation);
      if (l == launch_.end()) continue;
      const uint32_t before = last_launched(l->second->tid, l->second->start_ns, -1, true);
      if (before != kNone && t_.gpu[before].stream != t_.gpu[i].stream) {
        AddCrossStreamWait(i, before, &stats_->event_deps);
      }
    }
  }
  // Gaps: ops by end time, to find what ended just before a gap closed.
  std::vector<uint32_t> by_end(t_.gpu.size());
  std::iota(by_end.begin(), by_end.end(), 0);
  std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) {
    return t_.gpu[a].end_ns != t_.gpu[b].end_ns ? t_.gpu[a].end_ns < t_.gpu[b].end_ns : a < b;
  });
  for (const auto& [stream, ops] : streams_) {
    for (size_t k = 1; k < ops.size(); ++k) {
      const GpuOp& op = t_.gpu[ops[k]];
      const GpuOp& prev = t_.gpu[ops[k - 1]];
      const auto l = launch_.find(op.correlation);
      const bool host_bound = l != launch_.end() && l->second->start_ns > prev.end_ns;
      if (host_bound || op.start_ns - prev.end_ns <= o_.queued_gap_ns) continue;
      // The op of another stream that ended last at or before this one's start.
      auto p = std::upper_bound(by_end.begin(), by_end.end(), op.start_ns,
                                [&](int64_t v, uint32_t j) { return v < t_.gpu[j].end_ns; });
      uint32_t cause = kNone;
      while (p != by_end.begin()) {
        --p;
        if (t_.gpu[*p].stream != stream) {
          cause = *p;
          break;
        }
      }
      // (An op earlier in the trace's order: a zero-length op at the same time may come later.)
      if (cause != kNone && cause < ops[k] && t_.gpu[cause].end_ns > prev.end_ns &&
          op.start_ns - t_.gpu[cause].end_ns <= o_.event_latency_ns) {
        AddCrossStreamWait(ops[k], cause, &stats_->inferred_deps);
      } else {
        Release(ops[k]);
      }
    }
  }
}

// The host waits for the GPU at synchronize calls: the chain goes on once the op it waited for
// (the last-ending op launched before the call) has ended.
void RankGraph::Syncs() {
  std::vector<std::pair<int64_t, uint32_t>> by_launch;  // (launch start, op)
  for (uint32_t i = 0; i < t_.gpu.size(); ++i) {
    const auto l = launch_.find(t_.gpu[i].correlation);
    if (l != launch_.end()) by_launch.push_back({l->second->start_ns, i});
  }
  std::sort(by_launch.begin(), by_launch.end());
  // Running maximum of end time over ops by launch order.
  std::vector<uint32_t> latest(by_launch.size());
  for (size_t k = 0; k < by_launch.size(); ++k) {
    const uint32_t i = by_launch[k].second;
    latest[k] = k == 0 || t_.gpu[i].end_ns > t_.gpu[latest[k - 1]].end_ns ? i : latest[k - 1];
  }
  for (const RuntimeCall& c : t_.runtime) {
    if (!IsSyncCall(c)) continue;
    const auto p =
        std::upper_bound(by_launch.begin(), by_launch.end(), std::make_pair(c.start_ns, kNone));
    if (p == by_launch.begin()) continue;
    const uint32_t waited = latest[static_cast<size_t>(p - by_launch.begin()) - 1];
    if (t_.gpu[waited].end_ns <= c.start_ns) continue;  // nothing left to wait for
    anchors_.push_back({c.start_ns, waited, kNone});
  }
}

// The host as one chain of CPU nodes, in time order: each anchor's node ends at the anchor's
// time, after the node before it and after the ops a synchronisation before it waited for; the
// ops an anchor releases wait for its node. Anchors the chain has already reached share a node.
void RankGraph::HostChain() {
  std::stable_sort(anchors_.begin(), anchors_.end(),
                   [](const Anchor& a, const Anchor& b) { return a.time_ns < b.time_ns; });
  uint32_t prev = kNone;
  int64_t prev_end_ns = t0_;      // the measured time the chain has reached
  std::vector<uint32_t> pending;  // ops the next node waits for (synchronisations)
  int64_t pending_end_ns = t0_;
  for (const Anchor& a : anchors_) {
    const int64_t start_ns = std::max(prev_end_ns, pending_end_ns);
    uint32_t node = prev;
    if (prev == kNone || !pending.empty() || UsSince(a.time_ns, t0_) > UsSince(start_ns, t0_)) {
      Node n;
      n.key_ns = start_ns;
      n.duration_us = static_cast<uint64_t>(
          std::max<int64_t>(0, UsSince(a.time_ns, t0_) - UsSince(start_ns, t0_)));
      nodes_.push_back(std::move(n));
      node = static_cast<uint32_t>(nodes_.size() - 1);
      ++stats_->host;
      if (prev != kNone) nodes_[node].deps.push_back(prev);
      for (uint32_t w : pending) AddDep(node, w, &stats_->sync_deps);
      pending.clear();
      pending_end_ns = t0_;
      prev_end_ns = std::max(a.time_ns, start_ns);
    }
    if (a.released != kNone) AddDep(a.released, node, &stats_->launch_deps);
    if (a.waits_for != kNone) {
      pending.push_back(a.waits_for);
      pending_end_ns = std::max(pending_end_ns, t_.gpu[a.waits_for].end_ns);
    }
    prev = node;
  }
}

struct RankPlan {
  std::vector<int32_t> coll_of_gpu;  // index into colls, -1 for compute / memory
  std::vector<PlannedCollective> colls;
};

// Every NCCL kernel's collective; errors collected for the whole rank.
Status PlanCollectives(const KinetoTrace& t, int rank, int world, RankPlan* plan,
                       std::vector<std::string>* notes) {
  CollectiveFinder finder(t);
  plan->coll_of_gpu.assign(t.gpu.size(), -1);
  Status problems;
  uint64_t p2p = 0;
  for (size_t i = 0; i < t.gpu.size(); ++i) {
    if (!t.gpu[i].nccl || t.gpu[i].kind != GpuKind::kKernel) continue;
    StatusOr<CollectiveSpec> c = finder.Find(i, rank, world);
    if (!c.ok()) {
      problems.Merge(c.status().WithContext(t.path));
      continue;
    }
    if (c->kind != CollectiveSpec::kCollective) {
      ++p2p;  // no peer rank recorded: replayed as measured (below)
      continue;
    }
    plan->coll_of_gpu[i] = static_cast<int32_t>(plan->colls.size());
    plan->colls.push_back(PlannedCollective{std::move(*c), 0});
  }
  if (p2p > 0) {
    notes->push_back(t.path + ": " + std::to_string(p2p) +
                     " NCCL send/receive kernels do not record their peer rank: each is kept as "
                     "GPU work of its measured time");
  }
  return problems.Capped(kMaxProblemsPerFile, t.path);
}

}  // namespace

namespace {

Status WriteRank(const KinetoTrace& t, RankPlan& plan, const std::string& path,
                 const ImportOptions& o, const ImportResult& result, RankImport* stats) {
  RankGraph g(t, o, stats);
  g.Build(plan.coll_of_gpu);
  std::vector<Node>& nodes = g.nodes();
  std::vector<uint32_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  // Ids by measured start; at equal times the host first (it releases what starts then).
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const bool ha = nodes[a].gpu == kNone, hb = nodes[b].gpu == kNone;
    return nodes[a].key_ns != nodes[b].key_ns ? nodes[a].key_ns < nodes[b].key_ns : ha > hb;
  });
  const bool metadata = o.groups == ImportOptions::Groups::kMetadata && !result.groups.empty();
  const uint64_t first_id = metadata ? 2 : 1;
  std::vector<uint64_t> id_of(nodes.size());
  for (size_t k = 0; k < order.size(); ++k) id_of[order[k]] = first_id + k;
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version(et::kDefaultTraceVersion);
  auto* a = md.add_attr();
  a->set_name("schema");
  a->set_string_val("orrery import (PyTorch profile)");
  a = md.add_attr();
  a->set_name("source");
  a->set_string_val(t.path);
  StatusOr<et::TraceWriter> w = et::TraceWriter::Open(path, md);
  if (!w.ok()) return w.status();
  if (metadata) {
    if (Status s = w->Write(
            et::MakeMetadataNode(1, "process_group:init", ProcessGroupInitValues(result.groups)));
        !s.ok()) {
      return s;
    }
  }
  ChakraProtoMsg::Node n;
  for (uint32_t i : order) {
    const Node& node = nodes[i];
    n.Clear();
    n.set_id(id_of[i]);
    n.set_duration_micros(node.duration_us);
    std::vector<uint64_t> deps;
    for (uint32_t d : node.deps) deps.push_back(id_of[d]);
    std::sort(deps.begin(), deps.end());
    for (uint64_t d : deps) n.add_data_deps(d);
    const PlannedCollective* c =
        node.coll >= 0 ? &plan.colls[static_cast<size_t>(node.coll)] : nullptr;
    if (node.gpu == kNone) {
      n.set_name("host");
      n.set_type(ChakraProtoMsg::COMP_NODE);
    } else {
      n.set_name(t.names[t.gpu[node.gpu].name]);
      n.set_type(c != nullptr ? ChakraProtoMsg::COMM_COLL_NODE : ChakraProtoMsg::COMP_NODE);
      if (c != nullptr) {
        ++stats->collectives;
        ++stats->collectives_by_type[et::CollectiveTypeName(c->spec.type)];
      } else if (t.gpu[node.gpu].kind == GpuKind::kKernel) {
        ++stats->compute;
      } else {
        ++stats->memory;
      }
    }
    SetNodeAttrs(&n, node.gpu == kNone, node.gpu == kNone ? -1 : node.stream, c);
    if (Status s = w->Write(n); !s.ok()) return s;
  }
  stats->nodes = nodes.size() + (metadata ? 1 : 0);
  return w->Close();
}

}  // namespace

StatusOr<ImportResult> ImportKinetoTraces(const std::vector<KinetoTrace>& traces,
                                          const std::vector<int>& ranks, int world,
                                          const ImportOptions& o) {
  ImportResult result;
  std::vector<RankPlan> plans(traces.size());
  Status problems;
  for (size_t i = 0; i < traces.size(); ++i) {
    problems.Merge(PlanCollectives(traces[i], ranks[i], world, &plans[i], &result.notes));
  }
  if (!problems.ok()) return problems;
  std::vector<std::vector<PlannedCollective>*> colls;
  for (RankPlan& p : plans) colls.push_back(&p.colls);
  ResolveGroups(colls, ranks, world, &result);
  std::vector<std::string> sources;
  for (const KinetoTrace& t : traces) sources.push_back(t.path);
  const Status s = WriteRanksAndGroups(
      ranks, sources, o, &result, [&](size_t i, const std::string& path, RankImport* stats) {
        return WriteRank(traces[i], plans[i], path, o, result, stats);
      });
  if (!s.ok()) return s;
  return result;
}

}  // namespace profile
}  // namespace orrery
