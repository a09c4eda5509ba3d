// TraceLoader's graph stages: nodes sorted by id, dependencies resolved to indexes (dangling
// ones counted), the child lists, the cycle check and the implied dependencies dropped.
#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "et_feeder/trace_loader.h"

namespace orrery {
namespace et {

using ChakraProtoMsg::AttributeProto;
using trace_internal::AttrKey;
using trace_internal::kDanglingSampleSize;
using trace_internal::kMaxCycleIdsShown;
using trace_internal::kMaxReportedProblems;
using trace_internal::kNone;

Status TraceLoader::SortById() {
  const uint32_t n = trace_.size();
  perm_.resize(n);
  std::iota(perm_.begin(), perm_.end(), 0u);
  if (sorted_) return Status::Ok();
  auto& nodes = trace_.nodes_;
  std::stable_sort(perm_.begin(), perm_.end(),
                   [&](uint32_t a, uint32_t b) { return nodes[a].id < nodes[b].id; });
  Status dups;
  size_t dup_count = 0;
  for (uint32_t i = 1; i < n; ++i) {
    const uint32_t a = perm_[i - 1], b = perm_[i];
    if (nodes[a].id != nodes[b].id) continue;
    if (++dup_count <= kMaxReportedProblems) {
      dups.Add(trace_.path_ + ": duplicate node id " + std::to_string(nodes[a].id) +
               ": messages at byte " + std::to_string(offsets_[a]) + " and byte " +
               std::to_string(offsets_[b]));
    }
  }
  if (dup_count > kMaxReportedProblems) {
    dups.Add(trace_.path_ + ": ... and " + std::to_string(dup_count - kMaxReportedProblems) +
             " more duplicate node ids");
  }
  if (!dups.ok()) return dups;

  std::vector<Trace::NodeRecord> sorted_nodes(n);
  std::vector<uint32_t> new_index(n);
  for (uint32_t i = 0; i < n; ++i) {
    sorted_nodes[i] = nodes[perm_[i]];
    new_index[perm_[i]] = i;
  }
  nodes.swap(sorted_nodes);
  for (auto* table : {&trace_.pg_names_, &trace_.metadata_inputs_, &trace_.involved_dims_,
                      &trace_.tensor_inputs_, &trace_.tensor_outputs_}) {
    for (auto& e : *table) e.node = new_index[e.node];
    std::sort(table->begin(), table->end(),
              [](const Trace::SideEntry& a, const Trace::SideEntry& b) { return a.node < b.node; });
  }
  return Status::Ok();
}

Status TraceLoader::BuildEdges() {
  const uint32_t n = trace_.size();
  const auto& nodes = trace_.nodes_;
  // Ids to indexes: a direct table over the id range when it is at most 8 ids per node
  // (real traces number their nodes with small gaps), else binary search.
  const uint64_t first_id = n > 0 ? nodes.front().id : 0;
  // The ids' range less one: ids 0 and 2^64 - 1 span all of uint64_t, one more than it holds.
  const uint64_t range = n > 0 ? nodes.back().id - first_id : 0;
  const uint64_t limit = 8 * static_cast<uint64_t>(n) + 1024;
  const uint64_t span = range < limit ? range + 1 : limit + 1;
  std::vector<uint32_t> index_of;
  if (n > 0 && range < limit) {
    index_of.assign(static_cast<size_t>(span), kNone);
    for (uint32_t i = 0; i < n; ++i) index_of[nodes[i].id - first_id] = i;
  }
  auto lookup = [&](uint64_t id) -> uint32_t {
    if (!index_of.empty()) {
      return (id >= first_id && id - first_id < span) ? index_of[id - first_id] : kNone;
    }
    const std::optional<uint32_t> i = trace_.Find(id);
    return i ? *i : kNone;
  };

  trace_.parent_offsets_.resize(static_cast<size_t>(n) + 1);
  trace_.parent_offsets_[0] = 0;
  trace_.parent_edges_.reserve(dep_ids_.size());
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t old = perm_[i];
    // dep ids are sorted, and index order is id order, so the parent indexes come out sorted.
    for (size_t k = dep_begin_[old]; k < dep_begin_[old + 1]; ++k) {
      const uint32_t p = lookup(dep_ids_[k]);
      if (p == kNone) {
        ++trace_.dangling_count_;
        if (trace_.dangling_sample_.size() < kDanglingSampleSize) {
          trace_.dangling_sample_.push_back({nodes[i].id, dep_ids_[k]});
        }
        continue;
      }
      trace_.parent_edges_.push_back(p);
    }
    if (trace_.parent_edges_.size() > std::numeric_limits<uint32_t>::max()) {
      return Fail("more than 2^32 - 1 dependencies");
    }
    trace_.parent_offsets_[i + 1] = static_cast<uint32_t>(trace_.parent_edges_.size());
  }
  std::vector<uint64_t>().swap(dep_ids_);
  std::vector<size_t>().swap(dep_begin_);
  trace_.parent_edges_.shrink_to_fit();

  if (options_.strict && trace_.dangling_count_ > 0) {
    std::string list;
    for (const auto& d : trace_.dangling_sample_) {
      if (list.size() > 300) break;
      list += (list.empty() ? "" : ", ") + std::string("node ") + std::to_string(d.node_id) +
              " -> " + std::to_string(d.missing_id);
    }
    return Fail(std::to_string(trace_.dangling_count_) +
                " dependencies name node ids that are not in the file (strict mode), e.g. " + list);
  }

  BuildChildren();
  return Status::Ok();
}

void TraceLoader::BuildChildren() {
  const uint32_t n = trace_.size();
  trace_.child_offsets_.assign(static_cast<size_t>(n) + 1, 0);
  for (uint32_t p : trace_.parent_edges_) ++trace_.child_offsets_[p + 1];
  for (uint32_t i = 0; i < n; ++i) trace_.child_offsets_[i + 1] += trace_.child_offsets_[i];
  trace_.child_edges_.resize(trace_.parent_edges_.size());
  std::vector<uint32_t> fill(trace_.child_offsets_.begin(), trace_.child_offsets_.end() - 1);
  for (uint32_t c = 0; c < n; ++c) {
    for (uint32_t p : trace_.parents(c)) trace_.child_edges_[fill[p]++] = c;
  }
  trace_.child_edges_.shrink_to_fit();
}

Status TraceLoader::CheckAcyclic() {
  const uint32_t n = trace_.size();
  std::vector<uint32_t> indegree(n);
  std::vector<uint32_t> queue;
  queue.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    indegree[i] = static_cast<uint32_t>(trace_.parents(i).size());
    if (indegree[i] == 0) queue.push_back(i);
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    for (uint32_t c : trace_.children(queue[head])) {
      if (--indegree[c] == 0) queue.push_back(c);
    }
  }
  if (queue.size() == n) {
    topological_order_ = std::move(queue);
    return Status::Ok();
  }

  // Every node left has indegree > 0, i.e. a parent that is also left: following such parents
  // must revisit a node, closing a cycle.
  uint32_t v = 0;
  while (indegree[v] == 0) ++v;
  std::vector<uint32_t> position(n, kNone);
  std::vector<uint32_t> path;
  while (position[v] == kNone) {
    position[v] = static_cast<uint32_t>(path.size());
    path.push_back(v);
    for (uint32_t p : trace_.parents(v)) {
      if (indegree[p] > 0) {
        v = p;
        break;
      }
    }
  }
  std::string ids;
  const size_t cycle_len = path.size() - position[v];
  for (size_t k = position[v]; k < path.size(); ++k) {
    if (k - position[v] == kMaxCycleIdsShown) {
      ids += " -> ...";
      break;
    }
    ids += (ids.empty() ? "" : " -> ") + std::to_string(trace_.id(path[k]));
  }
  ids += " -> " + std::to_string(trace_.id(v));
  return Fail("dependency cycle of " + std::to_string(cycle_len) + " node(s): " + ids +
              " (each waits for the next); " + std::to_string(n - queue.size()) +
              " node(s) can never run" +
              (options_.dependencies == Dependencies::kDataAndCtrl
                   ? " (dependencies = data_deps ∪ ctrl_deps as in ASTRA-sim's feeder_v3; "
                     "MLCommons' legacy feeder follows data_deps only)"
                   : ""));
}

void TraceLoader::DropImpliedDependencies() {
  static constexpr int64_t kWindow = 4096;
  const uint32_t n = trace_.size();
  if (n == 0 || trace_.parent_edges_.empty()) return;
  const int64_t w = std::min<int64_t>(kWindow, (static_cast<int64_t>(n) + 63) / 64 * 64);
  const size_t words = static_cast<size_t>(2 * w / 64);
  const size_t ring = static_cast<size_t>(2 * w);
  std::vector<uint64_t> sets(std::min<size_t>(ring, n) * words);  // slot p % ring
  std::vector<uint32_t> pos(n);
  for (uint32_t k = 0; k < n; ++k) pos[topological_order_[k]] = k;
  auto base_of = [w](int64_t p) { return (p / w - 1) * w; };

  std::vector<uint8_t> keep(trace_.parent_edges_.size(), 0);
  std::vector<uint32_t> by_pos;  // edge indexes of one node's parents, latest first
  for (int64_t p = 0; p < static_cast<int64_t>(n); ++p) {
    const uint32_t v = topological_order_[static_cast<size_t>(p)];
    const int64_t base = base_of(p);
    uint64_t* set = &sets[static_cast<size_t>(p) % ring * words];
    std::fill(set, set + words, 0);
    by_pos.clear();
    for (uint32_t e = trace_.parent_offsets_[v]; e < trace_.parent_offsets_[v + 1]; ++e) {
      by_pos.push_back(e);
    }
    std::sort(by_pos.begin(), by_pos.end(), [&](uint32_t a, uint32_t b) {
      return pos[trace_.parent_edges_[a]] > pos[trace_.parent_edges_[b]];
    });
    for (uint32_t e : by_pos) {
      const int64_t q = pos[trace_.parent_edges_[e]];
      if (q < base) {  // out of the window: kept
        keep[e] = 1;
        continue;
      }
      const size_t bit = static_cast<size_t>(q - base);
      if (set[bit / 64] >> (bit % 64) & 1) continue;  // an ancestor of a later parent
      keep[e] = 1;
      set[bit / 64] |= uint64_t{1} << (bit % 64);
      const uint64_t* from = &sets[static_cast<size_t>(q) % ring * words];
      const size_t shift = static_cast<size_t>((base - base_of(q)) / 64);
      for (size_t k = 0; k + shift < words; ++k) set[k] |= from[k + shift];
    }
  }

  size_t out = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t begin = trace_.parent_offsets_[i];
    const uint32_t end = trace_.parent_offsets_[i + 1];
    trace_.parent_offsets_[i] = static_cast<uint32_t>(out);
    for (uint32_t e = begin; e < end; ++e) {
      if (keep[e]) trace_.parent_edges_[out++] = trace_.parent_edges_[e];
    }
  }
  trace_.parent_offsets_[n] = static_cast<uint32_t>(out);
  trace_.implied_count_ = trace_.parent_edges_.size() - out;
  trace_.parent_edges_.resize(out);
  trace_.parent_edges_.shrink_to_fit();
  BuildChildren();
}

}  // namespace et
}  // namespace orrery
