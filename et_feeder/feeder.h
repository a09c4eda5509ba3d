// Runtime dependency resolution over one rank's Trace: which nodes may be issued now.
//
//   et::Feeder feeder(trace);
//   while (std::optional<uint32_t> i = feeder.FirstIssuable()) {   // lowest id first
//     feeder.Take(*i);                            // issuable -> running
//     ...                                         // later, when the simulated op completes:
//     feeder.Finish(*i);                          // running -> done; frees children
//   }
//   if (!feeder.AllDone()) Log(feeder.DeadlockReport());
//
// A node is issuable when every parent (data_deps ∪ ctrl_deps present in the file) is done.
// State is one 4-byte word per node (its state and its count of unfinished parents, so freeing
// a child touches one cache line); no hashing on the hot path.
//
// A feeder can also sort issuable nodes into classes given at construction (the executor's are
// hardware slots), each with its own queue, lowest index first: whoever issues "the first free
// node of each class" then reads a few nodes instead of scanning every issuable one (a real trace
// can have hundreds of GPU kernels ready behind one busy GPU). The queues are binary heaps of
// 4-byte indexes; a node taken off the middle stays in its heap, marked, until it reaches the top.
//
//   et::Feeder feeder(trace, classes, /*num_classes=*/4);   // classes[i] in [0, 4)
//   feeder.FirstIssuable(2, 3, &out);                       // the 3 lowest issuable of class 2
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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
  static constexpr int kMaxClasses = 8;
  // `trace` must outlive the feeder. Every node is of class 0.
  explicit Feeder(const Trace& trace);
  // Node i is of class classes[i] (one per node, each < num_classes).
  Feeder(const Trace& trace, std::vector<uint8_t> classes, int num_classes);
  // The same, with classes shared by every feeder of the trace (thousands of NPUs running one
  // rank's file under --replicate-trace keep one copy).
  Feeder(const Trace& trace, std::shared_ptr<const std::vector<uint8_t>> classes, int num_classes);
  explicit Feeder(Trace&&) = delete;  // would dangle
  Feeder(Trace&&, std::vector<uint8_t>, int) = delete;
  Feeder(Trace&&, std::shared_ptr<const std::vector<uint8_t>>, int) = delete;

  const Trace& trace() const { return trace_; }

  // Issuable node indexes of class `c` (all of them when the feeder has no classes), ascending
  // (ascending index == ascending node id). A sorted copy, for reports and tests: it reads every
  // entry of the heap, taken ones included, so issuing goes by FirstIssuable.
  std::vector<uint32_t> Issuable(int c = 0) const;
  // The lowest issuable index of class `c`, or nullopt if none is.
  std::optional<uint32_t> FirstIssuable(int c = 0);
  // Appends the `n` lowest issuable indexes of class `c` (all if fewer), ascending, to `out`.
  void FirstIssuable(int c, size_t n, std::vector<uint32_t>* out);
  size_t issuable_count() const;  // of every class
  size_t issuable_count(int c) const { return issuable_count_[c]; }
  int node_class(uint32_t idx) const { return class_of_ == nullptr ? 0 : class_of_[idx]; }
  // issuable -> running. The node must be issuable.
  void Take(uint32_t idx);
  // running -> issuable (the caller could not issue it after all).
  void PushBack(uint32_t idx);
  // running -> done; children whose last unfinished parent this was become issuable.
  void Finish(uint32_t idx);

  NodeState state(uint32_t idx) const {
    return static_cast<NodeState>((node_[idx] >> kStateShift) & kStateBits);
  }
  bool AllDone() const { return done_count_ == node_.size(); }
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
  static constexpr uint8_t kStateBits = 0x7f;
  static constexpr int kStateShift = 24;
  static constexpr uint32_t kQueued = uint32_t{1} << 31;  // in its class's heap (maybe stale)
  static constexpr uint32_t kRemaining = (uint32_t{1} << kStateShift) - 1;
  // Only the loader makes traces, and it refuses nodes with more parents.
  static_assert(kRemaining >= kMaxParentsPerNode, "a node's parent count must fit its bits");

  void SetState(uint32_t idx, NodeState s) {
    node_[idx] = (node_[idx] & ~(uint32_t{kStateBits} << kStateShift)) |
                 (uint32_t{static_cast<uint8_t>(s)} << kStateShift);
  }
  // waiting or running -> issuable: queued in its class's heap unless still there.
  void MakeIssuable(uint32_t idx);
  // Drops entries that are no longer issuable from the top of class `c`'s heap.
  void Settle(int c);

  const Trace& trace_;
  // Per node: bit 31 kQueued, bits 24-30 the NodeState, bits 0-23 the parents not yet done.
  std::vector<uint32_t> node_;
  std::shared_ptr<const std::vector<uint8_t>> classes_;  // per node; null: every node class 0
  const uint8_t* class_of_ = nullptr;                    // classes_'s data
  // Per class, inline (no pointer to chase before the heap's own storage).
  std::array<std::vector<uint32_t>, kMaxClasses> heaps_;  // min-heaps of indexes
  std::array<size_t, kMaxClasses> issuable_count_{};
  int num_classes_;
  size_t done_count_ = 0;
  size_t running_count_ = 0;
};

}  // namespace et
}  // namespace orrery
