#include "et_feeder/feeder.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

namespace orrery {
namespace et {

const char* NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kWaiting:
      return "waiting";
    case NodeState::kIssuable:
      return "issuable";
    case NodeState::kRunning:
      return "running";
    case NodeState::kDone:
      return "done";
  }
  return "unknown";
}

Feeder::Feeder(const Trace& trace) : Feeder(trace, nullptr, 1) {}

Feeder::Feeder(const Trace& trace, std::vector<uint8_t> classes, int num_classes)
    : Feeder(trace,
             classes.empty() ? nullptr
                             : std::make_shared<const std::vector<uint8_t>>(std::move(classes)),
             num_classes) {}

Feeder::Feeder(const Trace& trace, std::shared_ptr<const std::vector<uint8_t>> classes,
               int num_classes)
    : trace_(trace), node_(trace.size()), classes_(std::move(classes)), num_classes_(num_classes) {
  ORRERY_CHECK(num_classes >= 1 && num_classes <= kMaxClasses,
               "Feeder: " + std::to_string(num_classes) + " classes; at most " +
                   std::to_string(kMaxClasses));
  if (classes_ != nullptr) {
    ORRERY_CHECK(classes_->size() == trace.size(), "Feeder: one class per node expected");
    for (uint8_t c : *classes_) {
      ORRERY_CHECK(c < num_classes, "Feeder: node class " + std::to_string(c) + " out of range");
    }
    class_of_ = classes_->data();
  }
  for (uint32_t i = 0; i < trace.size(); ++i) {
    node_[i] = static_cast<uint32_t>(trace.parents(i).size());
    if (node_[i] == 0) MakeIssuable(i);  // ascending: each heap stays sorted
  }
}

void Feeder::MakeIssuable(uint32_t idx) {
  SetState(idx, NodeState::kIssuable);
  const int c = node_class(idx);
  ++issuable_count_[c];
  if (node_[idx] & kQueued) return;  // its old entry is still in the heap: valid again
  node_[idx] |= kQueued;
  heaps_[c].push_back(idx);
  std::push_heap(heaps_[c].begin(), heaps_[c].end(), std::greater<uint32_t>());
}

void Feeder::Settle(int c) {
  std::vector<uint32_t>& heap = heaps_[c];
  while (!heap.empty() && state(heap.front()) != NodeState::kIssuable) {
    node_[heap.front()] &= ~kQueued;
    std::pop_heap(heap.begin(), heap.end(), std::greater<uint32_t>());
    heap.pop_back();
  }
}

std::vector<uint32_t> Feeder::Issuable(int c) const {
  std::vector<uint32_t> out;
  for (uint32_t i : heaps_[c]) {
    if (state(i) == NodeState::kIssuable) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<uint32_t> Feeder::FirstIssuable(int c) {
  Settle(c);
  if (heaps_[c].empty()) return std::nullopt;
  return heaps_[c].front();
}

void Feeder::FirstIssuable(int c, size_t n, std::vector<uint32_t>* out) {
  Settle(c);
  if (n == 0 || heaps_[c].empty()) return;
  if (n == 1) {  // the common case: one free slot
    out->push_back(heaps_[c].front());
    return;
  }
  // Pop the n lowest (dropping stale entries on the way), then put them back.
  std::vector<uint32_t>& heap = heaps_[c];
  const size_t first = out->size();
  while (out->size() - first < n && !heap.empty()) {
    const uint32_t top = heap.front();
    std::pop_heap(heap.begin(), heap.end(), std::greater<uint32_t>());
    heap.pop_back();
    if (state(top) == NodeState::kIssuable) {
      out->push_back(top);
    } else {
      node_[top] &= ~kQueued;
    }
  }
  for (size_t k = first; k < out->size(); ++k) {
    heap.push_back((*out)[k]);
    std::push_heap(heap.begin(), heap.end(), std::greater<uint32_t>());
  }
}

size_t Feeder::issuable_count() const {
  size_t n = 0;
  for (int c = 0; c < num_classes_; ++c) n += issuable_count_[c];
  return n;
}

void Feeder::Take(uint32_t idx) {
  ORRERY_CHECK(idx < node_.size() && state(idx) == NodeState::kIssuable,
               "Take(" + std::to_string(idx) + "): node is not issuable");
  --issuable_count_[node_class(idx)];
  SetState(idx, NodeState::kRunning);  // its heap entry goes when it reaches the top
  ++running_count_;
}

void Feeder::PushBack(uint32_t idx) {
  ORRERY_CHECK(idx < node_.size() && state(idx) == NodeState::kRunning,
               "PushBack(" + std::to_string(idx) + "): node is not running");
  --running_count_;
  MakeIssuable(idx);
}

void Feeder::Finish(uint32_t idx) {
  ORRERY_CHECK(idx < node_.size() && state(idx) == NodeState::kRunning,
               "Finish(" + std::to_string(idx) + "): node is not running");
  SetState(idx, NodeState::kDone);
  --running_count_;
  ++done_count_;
  for (uint32_t c : trace_.children(idx)) {
    if ((--node_[c] & kRemaining) == 0) MakeIssuable(c);
  }
}

std::vector<uint32_t> Feeder::Unfinished() const {
  std::vector<uint32_t> out;
  out.reserve(node_.size() - done_count_);
  for (uint32_t i = 0; i < node_.size(); ++i) {
    if (state(i) != NodeState::kDone) out.push_back(i);
  }
  return out;
}

std::vector<uint32_t> Feeder::UnfinishedParents(uint32_t idx) const {
  std::vector<uint32_t> out;
  for (uint32_t p : trace_.parents(idx)) {
    if (state(p) != NodeState::kDone) out.push_back(p);
  }
  return out;
}

std::string Feeder::DeadlockReport(size_t max_nodes) const {
  auto describe = [&](uint32_t i) {
    return "node " + std::to_string(trace_.id(i)) + " '" + std::string(trace_.name(i)) + "'";
  };
  const std::vector<uint32_t> unfinished = Unfinished();
  std::string out = trace_.path() + ": " + std::to_string(unfinished.size()) + " of " +
                    std::to_string(node_.size()) + " nodes unfinished (" +
                    std::to_string(running_count_) + " running, " +
                    std::to_string(issuable_count()) + " issuable)";
  // Running nodes first: they are what everything else ends up waiting for.
  std::vector<uint32_t> order;
  for (uint32_t i : unfinished) {
    if (state(i) == NodeState::kRunning) order.push_back(i);
  }
  for (uint32_t i : unfinished) {
    if (state(i) != NodeState::kRunning) order.push_back(i);
  }
  size_t shown = 0;
  for (uint32_t i : order) {
    if (shown++ == max_nodes) {
      out += "\n  ... and " + std::to_string(order.size() - max_nodes) + " more";
      break;
    }
    out += "\n  " + describe(i) + " (" + NodeTypeName(trace_.type(i)) + ", " +
           NodeStateName(state(i)) + ")";
    const std::vector<uint32_t> parents = UnfinishedParents(i);
    for (size_t k = 0; k < parents.size(); ++k) {
      if (k == 3) {
        out += ", ... (" + std::to_string(parents.size()) + " in all)";
        break;
      }
      out += (k == 0 ? " waits for " : ", ") + describe(parents[k]) + " (" +
             NodeStateName(state(parents[k])) + ")";
    }
  }
  return out;
}

}  // namespace et
}  // namespace orrery
