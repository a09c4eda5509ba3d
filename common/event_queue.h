// The discrete-event core: one queue of (time, sequence) ordered events.
//
//   class Link : public EventTarget {
//     void OnEvent(uint64_t arg) override { ... }
//   };
//   Simulation sim;
//   sim.ScheduleAfter(Time::FromNs(10), &link, /*arg=*/0);
//   sim.Run();
//
// Events at the same time run in the order they were scheduled, so runs are bit-for-bit
// deterministic. An event is (time, sequence, target, argument): no allocation per event and
// typed handlers instead of void* callbacks. The heap is 4-ary on a vector (see
// benchmarks/event_queue_bench.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "common/units.h"

namespace orrery {

class EventTarget {
 public:
  virtual ~EventTarget() = default;
  // `arg` is whatever the scheduler passed: an index, a kind, a packed pair.
  virtual void OnEvent(uint64_t arg) = 0;
};

struct Event {
  int64_t time_ps;
  uint64_t seq;
  EventTarget* target;
  uint64_t arg;
};

class EventQueue {
 public:
  void Push(Time at, EventTarget* target, uint64_t arg) {
    heap_.push_back(Event{at.ps(), next_seq_++, target, arg});
    SiftUp(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event Pop();
  void Reserve(size_t n) { heap_.reserve(n); }

 private:
  static bool Before(const Event& a, const Event& b) {
    return a.time_ps < b.time_ps || (a.time_ps == b.time_ps && a.seq < b.seq);
  }
  void SiftUp(size_t i);
  void SiftDown(size_t i);

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

// Owns the clock and the queue. Passed by reference to every component; there are no globals,
// so several simulations can run in one process (sweeps, tests).
class Simulation {
 public:
  Time now() const { return now_; }
  void Schedule(Time at, EventTarget* target, uint64_t arg = 0) { queue_.Push(at, target, arg); }
  void ScheduleAfter(Time delay, EventTarget* target, uint64_t arg = 0) {
    queue_.Push(now_ + delay, target, arg);
  }
  // Runs until the queue is empty, Stop() is called, or the next event is past `until`.
  void Run(Time until = Time::Infinite());
  void Stop() { stopped_ = true; }
  uint64_t events_processed() const { return events_processed_; }
  size_t pending_events() const { return queue_.size(); }

 private:
  EventQueue queue_;
  Time now_;
  uint64_t events_processed_ = 0;
  bool stopped_ = false;
};

}  // namespace orrery
