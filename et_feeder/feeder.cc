#include "et_feeder/feeder.h"

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

Feeder::Feeder(const Trace& trace) : Feeder(trace, {}, 1) {}

Feeder::Feeder(const Trace& trace, std::vector<uint8_t> classes, int num_classes)
    : trace_(trace),
      state_(trace.size()),
      remaining_(trace.size()),
      classes_(std::move(classes)),
      issuable_(static_cast<size_t>(num_classes)) {
  ORRERY_CHECK(classes_.empty() || classes_.size() == trace.size(),
               "Feeder: one class per node expected");
  for (uint8_t c : classes_) {
    ORRERY_CHECK(c < num_classes, "Feeder: node class " + std::to_string(c) + " out of range");
  }
  for (uint32_t i = 0; i < trace.size(); ++i) {
    remaining_[i] = static_cast<uint32_t>(trace.parents(i).size());
    if (remaining_[i] == 0) {
      state_[i] = static_cast<uint8_t>(NodeState::kIssuable);
      std::set<uint32_t>& ready = issuable_[node_class(i)];
      ready.insert(ready.end(), i);
    }
  }
}

size_t Feeder::issuable_count() const {
  size_t n = 0;
  for (const std::set<uint32_t>& ready : issuable_) n += ready.size();
  return n;
}

void Feeder::Take(uint32_t idx) {
  ORRERY_CHECK(idx < state_.size() && state(idx) == NodeState::kIssuable,
               "Take(" + std::to_string(idx) + "): node is not issuable");
  issuable_[node_class(idx)].erase(idx);
  state_[idx] = static_cast<uint8_t>(NodeState::kRunning);
  ++running_count_;
}

void Feeder::PushBack(uint32_t idx) {
  ORRERY_CHECK(idx < state_.size() && state(idx) == NodeState::kRunning,
               "PushBack(" + std::to_string(idx) + "): node is not running");
  state_[idx] = static_cast<uint8_t>(NodeState::kIssuable);
  --running_count_;
  issuable_[node_class(idx)].insert(idx);
}

void Feeder::Finish(uint32_t idx) {
  ORRERY_CHECK(idx < state_.size() && state(idx) == NodeState::kRunning,
               "Finish(" + std::to_string(idx) + "): node is not running");
  state_[idx] = static_cast<uint8_t>(NodeState::kDone);
  --running_count_;
  ++done_count_;
  for (uint32_t c : trace_.children(idx)) {
    if (--remaining_[c] == 0) {
      state_[c] = static_cast<uint8_t>(NodeState::kIssuable);
      issuable_[node_class(c)].insert(c);
    }
  }
}

std::vector<uint32_t> Feeder::Unfinished() const {
  std::vector<uint32_t> out;
  out.reserve(state_.size() - done_count_);
  for (uint32_t i = 0; i < state_.size(); ++i) {
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
                    std::to_string(state_.size()) + " nodes unfinished (" +
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
