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
// deterministic. An event is (time, target, argument): no allocation per event and typed
// handlers instead of void* callbacks.
//
// The queue is a calendar of distinct times. Each pending time owns a FIFO bucket of events, so
// insertion order among ties is kept without a sequence number, and a small binary heap orders
// the distinct times. Collective traffic is strongly synchronised (a 1024-NPU ring puts all 1024
// hand-offs at the same instant), so most pushes land in a bucket that already exists: found
// through a one-entry cache or an open-addressing table, then a vector append. A schedule with
// all-distinct times degrades to a heap of times plus a table (benchmarks/event_queue_bench.cc
// measures both shapes).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/slot_pool.h"
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
  EventTarget* target;
  uint64_t arg;
};

class EventQueue {
 public:
  EventQueue();

  void Push(Time at, EventTarget* target, uint64_t arg) {
    const int64_t t = at.ps();
    const uint32_t b = t == cached_time_ ? cached_bucket_ : BucketFor(t);
    buckets_[b].events.push_back(Entry{target, arg});
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Time of the next event; the queue must not be empty.
  int64_t top_time() const { return times_.front().time; }
  Event Pop();

 private:
  struct Entry {
    EventTarget* target;
    uint64_t arg;
  };
  struct Bucket {
    int64_t time = 0;
    size_t head = 0;  // events before head have been popped
    std::vector<Entry> events;
  };
  struct TimeRef {
    int64_t time;
    uint32_t bucket;
  };
  static constexpr int64_t kNoTime = INT64_MIN;

  uint32_t BucketFor(int64_t t);  // finds or opens the bucket of time t; caches it
  void RetireFront();             // the earliest bucket is drained
  void TableInsert(int64_t t, uint32_t bucket);
  void TableErase(int64_t t);
  void GrowTable();
  size_t Slot(int64_t t) const {
    return static_cast<size_t>((static_cast<uint64_t>(t) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  SlotPool<Bucket> buckets_;
  std::vector<TimeRef> times_;  // min-heap on time, one entry per open bucket
  std::vector<TimeRef> table_;  // open addressing, linear probing; time kNoTime = empty
  int shift_ = 0;               // 64 - log2(table size)
  size_t table_used_ = 0;
  int64_t cached_time_ = kNoTime;
  uint32_t cached_bucket_ = 0;
  size_t size_ = 0;
};

// Owns the clock and the queue. Passed by reference to every component; there are no globals,
// so several simulations can run in one process (sweeps, tests).
class Simulation {
 public:
  Time now() const { return now_; }
  // An event at Infinite() (a time that saturated: see Time) is not queued; the run stops and
  // time_overflowed() says so, for the caller to report.
  void Schedule(Time at, EventTarget* target, uint64_t arg = 0) {
    if (at.IsInfinite()) {
      Overflow();
      return;
    }
    queue_.Push(at, target, arg);
  }
  void ScheduleAfter(Time delay, EventTarget* target, uint64_t arg = 0) {
    Schedule(now_ + delay, target, arg);
  }
  // Something was scheduled past the end of simulated time (int64 picoseconds, about 106 days):
  // an input took longer than that. Run() stopped at now().
  bool time_overflowed() const { return time_overflowed_; }
  // Stops the run for good (a component found an input it cannot simulate and kept the reason
  // for its caller): unlike Stop(), a later Run() returns at once.
  void Abort() {
    aborted_ = true;
    stopped_ = true;
  }
  // Runs until the queue is empty, Stop() is called, or the next event is past `until`.
  void Run(Time until = Time::Infinite());
  void Stop() { stopped_ = true; }
  uint64_t events_processed() const { return events_processed_; }
  size_t pending_events() const { return queue_.size(); }
  // Calls `tick` every `every_events` events from inside Run (progress lines); empty = none.
  void SetTicker(std::function<void()> tick, uint64_t every_events) {
    tick_ = std::move(tick);
    tick_every_ = every_events > 0 ? every_events : 1;
  }

 private:
  std::function<void()> tick_;
  uint64_t tick_every_ = 0;
  EventQueue queue_;
  Time now_;
  uint64_t events_processed_ = 0;
  bool stopped_ = false;
  bool time_overflowed_ = false;
  bool aborted_ = false;

  void Overflow() {
    time_overflowed_ = true;
    Abort();
  }
};

}  // namespace orrery
