#include "profile/et_import.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "et_feeder/writer.h"
#include "profile/collectives.h"
#include "profile/import_common.h"
#include "profile/json_value.h"

namespace orrery {
namespace profile {

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

// The ET operators joined to Kineto operators (index: ET node; nullptr when not joined).
StatusOr<std::vector<const CpuOp*>> Join(const ExecutionTrace& et, const KinetoTrace& k) {
  const bool by_rf =
      std::any_of(k.cpu.begin(), k.cpu.end(), [](const CpuOp& c) { return c.rf_id >= 0; });
  std::unordered_map<int64_t, const CpuOp*> of_key;
  for (const CpuOp& c : k.cpu) {
    const int64_t key = by_rf ? c.rf_id : c.external_id;
    if (key >= 0) of_key.emplace(key, &c);
  }
  std::vector<const CpuOp*> joined(et.nodes.size(), nullptr);
  size_t ops = 0, found = 0, agree = 0;
  for (size_t i = 0; i < et.nodes.size(); ++i) {
    const EtNode& n = et.nodes[i];
    if (IsEtRoot(n.name) || n.rf_id < 0) continue;
    ++ops;
    const auto it = of_key.find(n.rf_id);
    if (it == of_key.end()) continue;
    ++found;
    if (k.names[it->second->name] == n.name) {
      ++agree;
      joined[i] = it->second;
    }
  }
  const std::string key = by_rf ? "'Record function id'"
                                : "'External id' (it records no "
                                  "'Record function id')";
  if (ops == 0 || agree * 10 < found * 9 || agree * 2 < ops) {
    return Status::Error(
        et.path + " does not match its Kineto trace " + k.path + ": of its " + std::to_string(ops) +
        " operators with a record-function id, " + std::to_string(found) +
        " name a Kineto operator by " + key + " and " + std::to_string(agree) +
        " of those have the same name (expected at least half the operators joined, nine in ten "
        "of them with the same name); give the execution trace and the Kineto trace of one run "
        "and rank, or import either alone");
  }
  return joined;
}

struct OutNode {
  uint64_t id = 0;
  std::string name;
  ChakraProtoMsg::NodeType type = ChakraProtoMsg::COMP_NODE;
  bool cpu = true;
  uint64_t duration_us = 0;
  int64_t stream = -1;
  int32_t coll = -1;  // index into the rank's collectives
  std::vector<uint64_t> data;
  std::vector<uint64_t> ctrl;
};

class EtRank {
 public:
  EtRank(const ExecutionTrace& et, const KinetoTrace* k, int rank, int world)
      : et_(et), k_(k), rank_(rank), world_(world) {}
  Status Build(std::vector<std::string>* notes);
  std::vector<PlannedCollective>& colls() { return colls_; }
  Status Write(const std::string& path, const ImportOptions& o, const ImportResult& r,
               RankImport* stats);

 private:
  void GpuChildren(std::vector<std::string>* notes);
  void Groups();
  Status CollectiveOfOp(size_t i, PlannedCollective* c) const;
  void Walk();
  void TensorDeps(std::vector<std::string>* notes);

  const ExecutionTrace& et_;
  const KinetoTrace* k_;
  int rank_, world_;
  std::vector<const CpuOp*> joined_;
  std::unordered_map<int64_t, size_t> index_;   // ET id -> node index
  std::vector<std::vector<size_t>> children_;   // ET call tree, by id
  std::vector<std::vector<uint32_t>> gpu_of_;   // GPU ops each operator launched, by start
  std::map<std::string, std::vector<int>> pg_;  // process groups: pg_name -> ranks
  std::vector<OutNode> out_;                    // index = ET node index, then GPU nodes
  std::vector<size_t> gpu_node_;                // GPU op -> out_ index
  std::vector<PlannedCollective> colls_;
  std::string groups_values_;  // process_group:init's inputs, for METADATA
  // The first operator the call tree's walk reaches after one with a later id (ids, node
  // indexes): (kNone, kNone) in a trace whose tree agrees with its ids, as PyTorch writes them.
  std::pair<size_t, size_t> out_of_order_ = {kNone, kNone};
};

void EtRank::GpuChildren(std::vector<std::string>* notes) {
  gpu_of_.assign(et_.nodes.size(), {});
  std::unordered_map<const CpuOp*, size_t> node_of;
  for (size_t i = 0; i < joined_.size(); ++i) {
    if (joined_[i] != nullptr) node_of.emplace(joined_[i], i);
  }
  std::unordered_map<int64_t, const RuntimeCall*> launch;
  for (const RuntimeCall& c : k_->runtime) {
    if (c.kind == RuntimeKind::kLaunch && c.correlation >= 0) launch.emplace(c.correlation, &c);
  }
  const CpuOpStacks stacks(*k_);
  size_t orphans = 0;
  for (uint32_t g = 0; g < k_->gpu.size(); ++g) {
    const auto l = launch.find(k_->gpu[g].correlation);
    size_t owner = kNone;
    if (l != launch.end()) {
      for (const CpuOp* op : stacks.Stack(l->second->tid, l->second->start_ns)) {
        const auto it = node_of.find(op);
        if (it != node_of.end()) {
          owner = it->second;
          break;
        }
      }
    }
    if (owner == kNone) {
      ++orphans;
      continue;
    }
    gpu_of_[owner].push_back(g);
  }
  if (orphans > 0) {
    notes->push_back(k_->path + ": " + std::to_string(orphans) + " of " +
                     std::to_string(k_->gpu.size()) +
                     " GPU ops were launched outside every operator of the execution trace "
                     "(before or after the part it recorded) and are left out, as Chakra's "
                     "trace_link leaves them");
  }
}

void EtRank::Groups() {
  for (const EtNode& n : et_.nodes) {
    if (n.groups_json.empty()) continue;
    StatusOr<JsonValue> v = ParseJson(n.groups_json, et_.path);
    if (!v.ok() || !v->is_array()) continue;
    for (const JsonValue& g : v->items) {
      const JsonValue* name = g.Find("pg_name");
      const JsonValue* ranks = g.Find("ranks");
      if (name == nullptr || ranks == nullptr || !ranks->is_array()) continue;
      std::vector<int> rs;
      for (const JsonValue& r : ranks->items) {
        if (r.AsInt64()) rs.push_back(static_cast<int>(*r.AsInt64()));
      }
      std::sort(rs.begin(), rs.end());
      pg_[name->text] = rs;  // empty: every rank
    }
    groups_values_ = "['" + n.groups_json + "']";
  }
}

// An ET-only collective: the nccl:* operator, or a record_param_comms without one under it.
Status EtRank::CollectiveOfOp(size_t i, PlannedCollective* c) const {
  const EtNode& n = et_.nodes[i];
  const EtNode* rpc = &n;
  if (n.name.rfind("nccl:", 0) == 0) {
    const auto p = index_.find(n.parent);
    if (p != index_.end()) rpc = &et_.nodes[p->second];
  }
  const std::string what = !rpc->collective.empty() ? rpc->collective : n.name;
  if (!CollectiveOfName(what, &c->spec.kind, &c->spec.type) ||
      c->spec.kind != CollectiveSpec::kCollective) {
    return Status::Error(et_.path + ": node " + std::to_string(n.id) + " '" + n.name +
                         "': not a collective Orrery can run ('" + what + "')");
  }
  const std::optional<int> b = DtypeBytes(rpc->dtype);
  if (rpc->in_msg_nelems >= 0 && b) {
    c->spec.bytes = static_cast<uint64_t>(rpc->in_msg_nelems) * static_cast<uint64_t>(*b);
  } else {
    for (const EtTensor& t : n.inputs) c->spec.bytes += static_cast<uint64_t>(t.bytes);
  }
  c->spec.source = "execution trace";
  const auto g = pg_.find(rpc->pg_name);
  if (g != pg_.end() && !g->second.empty() && static_cast<int>(g->second.size()) != world_) {
    c->spec.group = g->second;
  }
  return Status::Ok();
}

Status EtRank::Build(std::vector<std::string>* notes) {
  const std::vector<EtNode>& nodes = et_.nodes;
  children_.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i) index_.emplace(nodes[i].id, i);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto p = index_.find(nodes[i].parent);
    if (p != index_.end() && p->second != i) children_[p->second].push_back(i);
  }
  gpu_of_.assign(nodes.size(), {});
  if (k_ != nullptr) {
    StatusOr<std::vector<const CpuOp*>> j = Join(et_, *k_);
    if (!j.ok()) return j.status();
    joined_ = std::move(*j);
    GpuChildren(notes);
  }
  Groups();
  out_.assign(nodes.size(), OutNode());
  std::map<int64_t, int64_t> carry;  // per thread
  Status problems;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const EtNode& n = nodes[i];
    if (IsEtRoot(n.name) || !n.groups_json.empty()) continue;  // not written as operators
    OutNode& o = out_[i];
    o.id = static_cast<uint64_t>(n.id);
    o.name = n.name;
    if (!joined_.empty() && joined_[i] != nullptr) {
      int64_t exclusive = joined_[i]->end_ns - joined_[i]->start_ns;
      for (size_t c : children_[i]) {
        if (joined_[c] != nullptr) exclusive -= joined_[c]->end_ns - joined_[c]->start_ns;
      }
      o.duration_us =
          static_cast<uint64_t>(RoundCarrying(std::max<int64_t>(0, exclusive), &carry[n.tid]));
    }
    const bool nccl_child = std::any_of(children_[i].begin(), children_[i].end(), [&](size_t c) {
      return nodes[c].name.rfind("nccl:", 0) == 0;
    });
    const bool comm = k_ == nullptr && (n.name.rfind("nccl:", 0) == 0 ||
                                        (n.name == "record_param_comms" && !n.collective.empty() &&
                                         n.collective != "wait" && !nccl_child));
    if (comm) {
      PlannedCollective c;
      if (Status s = CollectiveOfOp(i, &c); !s.ok()) {
        problems.Merge(s);
        continue;
      }
      o.type = ChakraProtoMsg::COMM_COLL_NODE;
      o.cpu = false;
      o.coll = static_cast<int32_t>(colls_.size());
      colls_.push_back(std::move(c));
    }
  }
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, et_.path);
  if (k_ != nullptr) {
    uint64_t next_id = nodes.empty() ? 1 : static_cast<uint64_t>(nodes.back().id) + 1;
    // GPU nodes numbered in start order (so each stream's order is ascending ids).
    std::vector<std::pair<uint32_t, size_t>> gpu;  // (op, owner)
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (uint32_t g : gpu_of_[i]) gpu.push_back({g, i});
    }
    std::sort(gpu.begin(), gpu.end());
    const CollectiveFinder finder(*k_);
    std::map<int64_t, int64_t> stream_carry;
    std::map<int64_t, size_t> last_on_stream;
    gpu_node_.assign(k_->gpu.size(), kNone);
    for (const auto& [g, owner] : gpu) {
      const GpuOp& op = k_->gpu[g];
      OutNode o;
      o.id = next_id++;
      o.name = k_->names[op.name];
      o.cpu = false;
      o.stream = op.stream;
      o.duration_us =
          static_cast<uint64_t>(RoundCarrying(op.end_ns - op.start_ns, &stream_carry[op.stream]));
      if (out_[owner].id != 0) o.ctrl.push_back(out_[owner].id);
      if (op.nccl && op.kind == GpuKind::kKernel) {
        PlannedCollective c;
        StatusOr<CollectiveSpec> spec = finder.Find(g, rank_, world_);
        if (spec.ok() && spec->kind == CollectiveSpec::kCollective) {
          c.spec = std::move(*spec);
        } else if (Status s = CollectiveOfOp(owner, &c); !s.ok()) {
          problems.Merge(spec.ok() ? s : spec.status());
          continue;
        }
        o.type = ChakraProtoMsg::COMM_COLL_NODE;
        o.coll = static_cast<int32_t>(colls_.size());
        colls_.push_back(std::move(c));
      }
      const auto prev = last_on_stream.find(op.stream);
      if (prev != last_on_stream.end()) o.data.push_back(out_[prev->second].id);
      gpu_node_[g] = out_.size();
      last_on_stream[op.stream] = out_.size();
      out_.push_back(std::move(o));
    }
  }
  if (!problems.ok()) return problems.Capped(kMaxProblemsPerFile, et_.path);
  Walk();
  TensorDeps(notes);
  return Status::Ok();
}

// Chakra's convert_ctrl_dep_to_data_dep: each thread's call tree walked depth first, children
// in id order; an operator waits for the operator visited before it, a GPU op for the operator
// that launched it.
void EtRank::Walk() {
  const std::vector<EtNode>& nodes = et_.nodes;
  for (size_t top = 0; top < nodes.size(); ++top) {
    const auto p = index_.find(nodes[top].parent);
    if (p != index_.end() && p->second != top) continue;  // not a tree's top
    uint64_t last = 0;                                    // the last operator visited in this tree
    size_t last_index = kNone;
    std::vector<size_t> stack = {top};
    while (!stack.empty()) {
      const size_t i = stack.back();
      stack.pop_back();
      OutNode& o = out_[i];
      if (nodes[i].name.find("|thread]") != std::string::npos) last = 0;  // a thread's chain
      if (o.id != 0) {
        if (last != 0) o.data.push_back(last);
        if (last != 0 && last_index > i && out_of_order_.first == kNone) {
          out_of_order_ = {i, last_index};
        }
        const auto parent = index_.find(nodes[i].parent);
        if (parent != index_.end() && out_[parent->second].id != 0) {
          o.ctrl.push_back(out_[parent->second].id);
        }
        last = o.id;
        last_index = i;
        if (!gpu_node_.empty()) {
          for (uint32_t g : gpu_of_[i]) {
            if (gpu_node_[g] != kNone) out_[gpu_node_[g]].data.push_back(o.id);
          }
        }
      }
      for (auto c = children_[i].rbegin(); c != children_[i].rend(); ++c) stack.push_back(*c);
    }
  }
}

// An operator reading a tensor another thread last wrote waits for that writer. Those waits
// point back in id order, the chains of Walk forward in the walk's order; where the two orders
// disagree (a call tree that contradicts its ids), the waits could close a cycle, and are left
// out with a note naming the first operator out of order.
void EtRank::TensorDeps(std::vector<std::string>* notes) {
  if (out_of_order_.first != kNone) {
    const EtNode& a = et_.nodes[out_of_order_.first];
    const EtNode& b = et_.nodes[out_of_order_.second];
    notes->push_back(et_.path + ": node " + std::to_string(a.id) + " '" + a.name +
                     "' runs after node " + std::to_string(b.id) + " '" + b.name +
                     "' in its call tree (ctrl_deps) but has the smaller id; with the tree and "
                     "the ids disagreeing, waits for tensors written by other threads are left "
                     "out (the operators run in the tree's order)");
    return;
  }
  std::unordered_map<int64_t, size_t> writer;
  for (size_t i = 0; i < et_.nodes.size(); ++i) {
    const EtNode& n = et_.nodes[i];
    if (out_[i].id != 0) {
      for (const EtTensor& t : n.inputs) {
        const auto w = writer.find(t.id);
        if (w == writer.end() || et_.nodes[w->second].tid == n.tid) continue;
        const uint64_t dep = out_[w->second].id;
        std::vector<uint64_t>& d = out_[i].data;
        if (dep != 0 && std::find(d.begin(), d.end(), dep) == d.end()) d.push_back(dep);
      }
    }
    for (const EtTensor& t : n.outputs) writer[t.id] = i;
  }
}

Status EtRank::Write(const std::string& path, const ImportOptions& o, const ImportResult& r,
                     RankImport* stats) {
  ChakraProtoMsg::GlobalMetadata md;
  md.set_version(et::kDefaultTraceVersion);
  auto* a = md.add_attr();
  a->set_name("schema");
  a->set_string_val("orrery import (PyTorch execution trace " + et_.schema + ")");
  a = md.add_attr();
  a->set_name("source");
  a->set_string_val(et_.path);
  StatusOr<et::TraceWriter> w = et::TraceWriter::Open(path, md);
  if (!w.ok()) return w.status();
  std::vector<const OutNode*> order;
  for (const OutNode& n : out_) {
    if (n.id != 0) order.push_back(&n);
  }
  std::sort(order.begin(), order.end(),
            [](const OutNode* a, const OutNode* b) { return a->id < b->id; });
  if (o.groups == ImportOptions::Groups::kMetadata && !r.groups.empty()) {
    const uint64_t id = order.empty() ? 1 : order.back()->id + 1;
    ChakraProtoMsg::Node m =
        et::MakeMetadataNode(id, "process_group:init", ProcessGroupInitValues(r.groups));
    if (Status s = w->Write(m); !s.ok()) return s;
    ++stats->nodes;
  }
  ChakraProtoMsg::Node n;
  for (const OutNode* x : order) {
    n.Clear();
    n.set_id(x->id);
    n.set_name(x->name);
    n.set_type(x->type);
    n.set_duration_micros(x->duration_us);
    std::vector<uint64_t> data(x->data);
    std::sort(data.begin(), data.end());
    data.erase(std::unique(data.begin(), data.end()), data.end());
    for (uint64_t d : data) n.add_data_deps(d);
    for (uint64_t d : x->ctrl) n.add_ctrl_deps(d);
    const PlannedCollective* c = x->coll >= 0 ? &colls_[static_cast<size_t>(x->coll)] : nullptr;
    SetNodeAttrs(&n, x->cpu, x->stream, c);
    if (c != nullptr) {
      ++stats->collectives;
      ++stats->collectives_by_type[et::CollectiveTypeName(c->spec.type)];
    } else if (x->cpu) {
      ++stats->host;
    } else {
      ++stats->compute;
    }
    stats->stream_deps += data.size();
    if (Status s = w->Write(n); !s.ok()) return s;
    ++stats->nodes;
  }
  return w->Close();
}

}  // namespace

StatusOr<ImportResult> ImportExecutionTraces(const std::vector<ExecutionTrace>& ets,
                                             const std::vector<const KinetoTrace*>& kineto,
                                             const std::vector<int>& ranks, int world,
                                             const ImportOptions& o) {
  ImportResult result;
  std::vector<EtRank> rank_graphs;
  rank_graphs.reserve(ets.size());
  Status problems;
  for (size_t i = 0; i < ets.size(); ++i) {
    rank_graphs.emplace_back(ets[i], kineto.empty() ? nullptr : kineto[i], ranks[i], world);
    problems.Merge(rank_graphs.back().Build(&result.notes));
  }
  if (!problems.ok()) return problems;
  std::vector<std::vector<PlannedCollective>*> colls;
  for (EtRank& r : rank_graphs) colls.push_back(&r.colls());
  ResolveGroups(colls, ranks, world, &result);
  std::vector<std::string> sources;
  for (size_t i = 0; i < ets.size(); ++i) {
    sources.push_back(ets[i].path + (kineto.empty() ? "" : " + " + kineto[i]->path));
  }
  const Status s = WriteRanksAndGroups(ranks, sources, o, &result,
                                       [&](size_t i, const std::string& path, RankImport* stats) {
                                         return rank_graphs[i].Write(path, o, result, stats);
                                       });
  if (!s.ok()) return s;
  return result;
}

}  // namespace profile
}  // namespace orrery
