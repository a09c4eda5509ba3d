#include "common/event_queue.h"

#include <utility>

namespace orrery {

namespace {
constexpr size_t kArity = 4;
}

Event EventQueue::Pop() {
  Event top = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) SiftDown(0);
  return top;
}

void EventQueue::SiftUp(size_t i) {
  Event e = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!Before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::SiftDown(size_t i) {
  const size_t n = heap_.size();
  Event e = heap_[i];
  while (true) {
    const size_t first = i * kArity + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t last = first + kArity < n ? first + kArity : n;
    for (size_t c = first + 1; c < last; ++c) {
      if (Before(heap_[c], heap_[best])) best = c;
    }
    if (!Before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

void Simulation::Run(Time until) {
  stopped_ = false;
  while (!queue_.empty() && !stopped_) {
    if (queue_.top().time_ps > until.ps()) break;
    const Event e = queue_.Pop();
    now_ = Time::FromPs(e.time_ps);
    ++events_processed_;
    e.target->OnEvent(e.arg);
  }
}

}  // namespace orrery
