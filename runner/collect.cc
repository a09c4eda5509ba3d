#include "runner/collect.h"

#include <algorithm>
#include <unordered_map>

namespace orrery {

Status CheckFinished(const Simulation& sim, const Network& net, SystemLayer& system_layer,
                     const std::vector<std::unique_ptr<NpuExecutor>>& executors) {
  const int n = static_cast<int>(executors.size());
  std::vector<size_t> stuck;  // the executors (NPUs) that did not finish
  for (size_t i = 0; i < executors.size(); ++i) {
    if (!executors[i]->finished()) stuck.push_back(i);
  }
  // Those held by a send or receive first: the others usually wait in collectives for them.
  std::stable_partition(stuck.begin(), stuck.end(),
                        [&](size_t i) { return executors[i]->WaitsOnPointToPoint(); });
  // What the first 8 unfinished NPUs were doing, `lines` lines each.
  auto describe_unfinished = [&](Status* s, int lines) {
    for (size_t i = 0; i < stuck.size(); ++i) {
      if (i == 8) {
        s->Add("... and " + std::to_string(stuck.size() - 8) + " more NPUs");
        break;
      }
      for (const auto& line : executors[stuck[i]]->DescribeStuck(lines)) s->Add("  " + line);
    }
  };
  if (sim.time_overflowed()) {
    Status s = Status::Error(
        "the run went past the end of simulated time (int64 picoseconds, about 106 days) after " +
        sim.now().ToHuman() +
        ": an input makes something take longer than that (look for a huge duration_micros, "
        "comm_size, tensor_size or latency, or a tiny bandwidth or peak-perf); what each NPU "
        "was running:");
    describe_unfinished(&s, 3);
    return s;
  }
  if (!stuck.empty()) {
    Status s = Status::Error("the simulation cannot finish: " + std::to_string(stuck.size()) +
                             " of " + std::to_string(n) + " NPUs are stuck at " +
                             sim.now().ToHuman() + " (nothing left to happen)");
    for (const auto& line : net.DescribeStuck(6)) s.Add("  " + line);
    describe_unfinished(&s, 6);
    // A collective some member never issued, before the messages left waiting because of it.
    for (const auto& line : system_layer.DescribeIncompleteCollectives(8)) s.Add("  " + line);
    for (const auto& line : system_layer.matcher().DescribePending(10)) s.Add("  " + line);
    return s;
  }
  // Every NPU finished, but a message was sent that no receive ever took: in ASTRA-sim the send
  // completes on arrival, so the trace would silently "work". It is a broken trace; say so.
  if (system_layer.matcher().unreceived_messages() > 0 ||
      system_layer.matcher().pending_receives() > 0) {
    // A collective some member never issued (a broadcast's root sent to it) comes first.
    const std::vector<std::string> incomplete = system_layer.DescribeIncompleteCollectives(8);
    Status s = Status::Error(
        incomplete.empty()
            ? "the simulation finished with unmatched point-to-point traffic: " +
                  std::to_string(system_layer.matcher().unreceived_messages()) +
                  " message(s) were sent that no NPU received (a COMM_RECV with the same "
                  "source, destination, tag and size is missing)"
            : std::string("the simulation finished, but not every member of a collective ran "
                          "it (its messages to the others were never received)"));
    for (const auto& line : incomplete) s.Add("  " + line);
    for (const auto& line : system_layer.matcher().DescribePending(10)) s.Add("  " + line);
    return s;
  }
  return Status::Ok();
}

void CollectRecords(const std::vector<std::unique_ptr<NpuExecutor>>& executors,
                    const std::vector<const et::Trace*>& npu_trace, const Placement* placement,
                    SystemLayer& system_layer, RunResult& result) {
  const int n = static_cast<int>(executors.size());
  result.activity.resize(n);
  // A send's or receive's peer as an NPU: with --replicate-trace, the rank in NPU r's copy.
  auto peer_npu = [&](int r, int64_t rank) {
    return placement ? placement->PeerNpu(r, rank) : static_cast<int>(rank);
  };
  std::vector<CriticalPathNpu> path_input(n);
  for (int r = 0; r < n; ++r) {
    path_input[r].activities = &executors[r]->activities();
    path_input[r].joins = &executors[r]->joins();
    path_input[r].point_to_point = &executors[r]->point_to_point();
    path_input[r].finish = executors[r]->stats().finish;
  }
  for (const PathSegment& seg : FindCriticalPath(path_input)) {
    const et::Trace& t = *npu_trace[seg.npu];
    CriticalPathStep step;
    step.npu = seg.npu;
    step.node_id = t.id(seg.node);
    step.name = std::string(t.name(seg.node));
    step.track = seg.track;
    step.type = t.type(seg.node);
    step.start = seg.start;
    step.end = seg.end;
    step.link = seg.link;
    if (seg.from_node != kNoNode) {
      step.from_npu = seg.from_npu;
      step.from_node_id = npu_trace[seg.from_npu]->id(seg.from_node);
    }
    result.critical_path.push_back(std::move(step));
  }
  for (int r = 0; r < n; ++r) {
    const et::Trace& t = *npu_trace[r];
    std::vector<NodeRecord>& out = result.activity[r];
    out.reserve(executors[r]->activities().size());
    // Bytes as simulated (after --comm-scale) and the NPUs each collective ran with.
    std::unordered_map<uint32_t, const CollectiveJoin*> join_of;
    for (const CollectiveJoin& j : executors[r]->joins()) join_of.emplace(j.node, &j);
    std::unordered_map<uint32_t, uint64_t> p2p_bytes;
    for (const PointToPoint& m : executors[r]->point_to_point()) p2p_bytes[m.node] = m.bytes;
    for (const Activity& a : executors[r]->activities()) {
      NodeRecord rec;
      rec.id = t.id(a.node);
      rec.name = std::string(t.name(a.node));
      rec.track = a.track;
      rec.start = a.start;
      rec.end = a.end;
      rec.type = t.type(a.node);
      switch (rec.type) {
        case et::NodeType::kCommColl:
          rec.collective = t.comm_type(a.node);
          if (auto pg = t.pg_name(a.node)) rec.group = std::string(*pg);
          if (auto j = join_of.find(a.node); j != join_of.end()) {
            rec.bytes = j->second->bytes;
            rec.group_size = j->second->members;
          } else {  // a host-side operator (is_cpu_op): CPU work, no collective ran
            rec.bytes = t.comm_size(a.node).value_or(0);
            rec.group_size = n;
            StatusOr<int> g = ParseGroup(rec.group);
            std::optional<int> id;
            if (g.ok()) id = placement ? placement->Lookup(*g, r) : std::optional<int>(*g);
            const std::vector<int>* members =
                id && *id != 0 ? system_layer.GroupMembers(*id) : nullptr;
            if (members != nullptr) rec.group_size = static_cast<int>(members->size());
          }
          break;
        case et::NodeType::kCommSend:
        case et::NodeType::kCommRecv: {
          const bool send = rec.type == et::NodeType::kCommSend;
          auto b = p2p_bytes.find(a.node);
          rec.bytes = b != p2p_bytes.end() ? b->second : t.comm_size(a.node).value_or(0);
          rec.peer = peer_npu(r, (send ? t.comm_dst(a.node) : t.comm_src(a.node)).value_or(-1));
          break;
        }
        case et::NodeType::kMemLoad:
        case et::NodeType::kMemStore:
        case et::NodeType::kComp:
          rec.bytes = t.tensor_size(a.node).value_or(0);
          break;
        default:
          break;
      }
      out.push_back(std::move(rec));
    }
  }
}

}  // namespace orrery
