// Runtime dependency resolution over one rank's Trace: which nodes may be issued now.
//
//   et::Feeder feeder(trace);
//   while (!feeder.issuable().empty()) {
//     uint32_t i = *feeder.issuable().begin();   // lowest id first
//     feeder.Take(i);                             // issuable -> running
//     ...                                         // later, when the simulated op completes:
//     feeder.Finish(i);                           // running -> done; frees children
//   }
//   if (!feeder.AllDone()) Log(feeder.DeadlockReport());
//
// A node is issuable when every parent (data_deps ∪ ctrl_deps present in the file) is done.
// State is one byte and one remaining-parent counter per node; no hashing on the hot path.
//
// A feeder can also sort issuable nodes into classes given at construction (the executor's are
// hardware slots), each with its own ordered set: whoever issues "the first free node of each
// class" then reads a few nodes instead of scanning every issuable one (a real trace can have
// hundreds of GPU kernels ready behind one busy GPU).
//
//   et::Feeder feeder(trace, classes, /*num_classes=*/4);   // classes[i] in [0, 4)
//   for (uint32_t i : feeder.issuable(2)) ...               // issuable nodes of class 2
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "et_feeder/trace.h"

namespace orrery {
namespace et {

enum class NodeState : uint8_t {
  kWaiting = 0,  // some parent not done
  kIssuable,     // all parents done, not taken
  kRunning,      // taken, not finished
  kDone,
};

const char* NodeStateName(NodeState state);

class Feeder {
 public:
  // `trace` must outlive the feeder. Every node is of class 0.
  explicit Feeder(const Trace& trace);
  // Node i is of class classes[i] (one per node, each < num_classes).
  Feeder(const Trace& trace, std::vector<uint8_t> classes, int num_classes);
  explicit Feeder(Trace&&) = delete;  // would dangle
  Feeder(Trace&&, std::vector<uint8_t>, int) = delete;

  const Trace& trace() const { return trace_; }

  // Issuable node indexes of class `c` (all of them when the feeder has no classes); ascending
  // index == ascending node id.
  const std::set<uint32_t>& issuable(int c = 0) const { return issuable_[c]; }
  size_t issuable_count() const;
  int node_class(uint32_t idx) const { return classes_.empty() ? 0 : classes_[idx]; }
  // issuable -> running. The node must be issuable.
  void Take(uint32_t idx);
  // running -> issuable (the caller could not issue it after all).
  void PushBack(uint32_t idx);
  // running -> done; children whose last unfinished parent this was become issuable.
  void Finish(uint32_t idx);

  NodeState state(uint32_t idx) const { return static_cast<NodeState>(state_[idx]); }
  bool AllDone() const { return done_count_ == state_.size(); }
  size_t done_count() const { return done_count_; }
  size_t running_count() const { return running_count_; }

  // Nodes not done, ascending index.
  std::vector<uint32_t> Unfinished() const;
  // Parents of `idx` that are not done, ascending index.
  std::vector<uint32_t> UnfinishedParents(uint32_t idx) const;
  // Lines like "node 12 'allreduce' (COMM_COLL_NODE, waiting) waits for node 9 'mm' (running)",
  // for at most `max_nodes` unfinished nodes (running ones first), plus a summary line.
  std::string DeadlockReport(size_t max_nodes = 20) const;

 private:
  const Trace& trace_;
  std::vector<uint8_t> state_;
  std::vector<uint32_t> remaining_;           // parents not yet done
  std::vector<uint8_t> classes_;              // per node; empty = every node of class 0
  std::vector<std::set<uint32_t>> issuable_;  // per class
  size_t done_count_ = 0;
  size_t running_count_ = 0;
};

}  // namespace et
}  // namespace orrery
