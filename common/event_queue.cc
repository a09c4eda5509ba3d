#include "common/event_queue.h"

#include <algorithm>
#include <utility>

namespace orrery {

namespace {
constexpr int kInitialTableBits = 6;

bool Later(int64_t a, int64_t b) { return a > b; }
}  // namespace

EventQueue::EventQueue()
    : table_(size_t{1} << kInitialTableBits, TimeRef{kNoTime, 0}), shift_(64 - kInitialTableBits) {}

uint32_t EventQueue::BucketFor(int64_t t) {
  const size_t mask = table_.size() - 1;
  for (size_t i = Slot(t);; i = (i + 1) & mask) {
    if (table_[i].time == t) {
      cached_time_ = t;
      cached_bucket_ = table_[i].bucket;
      return cached_bucket_;
    }
    if (table_[i].time == kNoTime) break;
  }
  const uint32_t b = buckets_.Acquire();
  buckets_[b].time = t;
  buckets_[b].head = 0;
  buckets_[b].events.clear();
  TableInsert(t, b);
  times_.push_back(TimeRef{t, b});
  std::push_heap(times_.begin(), times_.end(),
                 [](const TimeRef& x, const TimeRef& y) { return Later(x.time, y.time); });
  cached_time_ = t;
  cached_bucket_ = b;
  return b;
}

Event EventQueue::Pop() {
  Bucket& b = buckets_[times_.front().bucket];
  const Entry e = b.events[b.head++];
  const int64_t t = b.time;
  --size_;
  if (b.head == b.events.size()) RetireFront();
  return Event{t, e.target, e.arg};
}

void EventQueue::RetireFront() {
  const TimeRef front = times_.front();
  std::pop_heap(times_.begin(), times_.end(),
                [](const TimeRef& x, const TimeRef& y) { return Later(x.time, y.time); });
  times_.pop_back();
  TableErase(front.time);
  if (cached_time_ == front.time) cached_time_ = kNoTime;
  Bucket& b = buckets_[front.bucket];
  // Keep the storage for reuse (a synchronised 4096-NPU step fills buckets of tens of thousands
  // of events, and freeing them means mmap/munmap churn), unless a burst made it huge.
  if (b.events.capacity() > (size_t{1} << 20)) {
    std::vector<Entry>().swap(b.events);
  } else {
    b.events.clear();
  }
  b.head = 0;
  buckets_.Release(front.bucket);
}

void EventQueue::TableInsert(int64_t t, uint32_t bucket) {
  if ((table_used_ + 1) * 2 > table_.size()) GrowTable();
  const size_t mask = table_.size() - 1;
  size_t i = Slot(t);
  while (table_[i].time != kNoTime) i = (i + 1) & mask;
  table_[i] = TimeRef{t, bucket};
  ++table_used_;
}

void EventQueue::TableErase(int64_t t) {
  const size_t mask = table_.size() - 1;
  size_t i = Slot(t);
  while (table_[i].time != t) i = (i + 1) & mask;
  // Backward-shift deletion: no tombstones, probe sequences stay short.
  size_t j = i;
  while (true) {
    j = (j + 1) & mask;
    if (table_[j].time == kNoTime) break;
    const size_t home = Slot(table_[j].time);
    // Move j into the hole at i unless its home lies cyclically in (i, j].
    const bool home_in_between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!home_in_between) {
      table_[i] = table_[j];
      i = j;
    }
  }
  table_[i].time = kNoTime;
  --table_used_;
}

void EventQueue::GrowTable() {
  std::vector<TimeRef> old;
  old.swap(table_);
  table_.assign(old.size() * 2, TimeRef{kNoTime, 0});
  --shift_;
  table_used_ = 0;
  const size_t mask = table_.size() - 1;
  for (const TimeRef& r : old) {
    if (r.time == kNoTime) continue;
    size_t i = Slot(r.time);
    while (table_[i].time != kNoTime) i = (i + 1) & mask;
    table_[i] = r;
    ++table_used_;
  }
}

void Simulation::Run(Time until) {
  stopped_ = aborted_;
  while (!queue_.empty() && !stopped_) {
    if (queue_.top_time() > until.ps()) break;
    const Event e = queue_.Pop();
    now_ = Time::FromPs(e.time_ps);
    ++events_processed_;
    e.target->OnEvent(e.arg);
    if (tick_ && events_processed_ % tick_every_ == 0) tick_();
  }
}

}  // namespace orrery
