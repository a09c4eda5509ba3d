// A pool of reusable objects addressed by a 32-bit index: what is in flight (messages, chunks,
// memory accesses) lives here between Send and delivery, and its index travels as the event
// argument. Released slots are reused first (LIFO), so steady state allocates nothing.
//
//   SlotPool<InFlight> pool;
//   const uint32_t i = pool.Acquire();  // a reused slot keeps its old contents: overwrite them
//   pool[i] = InFlight{handler, token};
//   ...
//   pool.Release(i);                    // before calling out, so the callee may Acquire it
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orrery {

template <typename T>
class SlotPool {
 public:
  uint32_t Acquire() {
    if (free_.empty()) {
      items_.emplace_back();
      return static_cast<uint32_t>(items_.size() - 1);
    }
    const uint32_t i = free_.back();
    free_.pop_back();
    return i;
  }
  void Release(uint32_t i) { free_.push_back(i); }

  T& operator[](uint32_t i) { return items_[i]; }
  const T& operator[](uint32_t i) const { return items_[i]; }
  size_t in_use() const { return items_.size() - free_.size(); }
  // Every slot ever acquired, released or not (callers that need to tell keep a flag).
  size_t capacity() const { return items_.size(); }

 private:
  std::vector<T> items_;
  std::vector<uint32_t> free_;
};

// A first-in first-out queue of pool indices, threaded through the records' `next` field, so
// queueing allocates nothing. `pool` is anything indexed by uint32_t (a SlotPool, a vector).
//
//   IndexFifo waiting;
//   waiting.Push(chunks_, id);                 // chunks_[id].next is overwritten
//   if (!waiting.empty()) id = waiting.Pop(chunks_);
struct IndexFifo {
  static constexpr uint32_t kNone = 0xffffffffu;
  uint32_t head = kNone;
  uint32_t tail = kNone;

  bool empty() const { return head == kNone; }
  template <typename Pool>
  void Push(Pool& pool, uint32_t i) {
    pool[i].next = kNone;
    if (tail == kNone) {
      head = i;
    } else {
      pool[tail].next = i;
    }
    tail = i;
  }
  template <typename Pool>
  uint32_t Pop(Pool& pool) {
    const uint32_t i = head;
    head = pool[i].next;
    if (head == kNone) tail = kNone;
    return i;
  }
};

}  // namespace orrery
