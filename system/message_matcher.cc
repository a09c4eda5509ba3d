#include "system/message_matcher.h"

#include <algorithm>

namespace orrery {

uint32_t MessageMatcher::NewWaiter(MessageSink* sink, uint64_t cookie) {
  uint32_t i;
  if (free_waiter_ != kNil) {
    i = free_waiter_;
    free_waiter_ = waiters_[i].next;
    waiters_[i] = Waiter{sink, cookie, kNil};
  } else {
    i = static_cast<uint32_t>(waiters_.size());
    waiters_.push_back(Waiter{sink, cookie, kNil});
  }
  return i;
}

void MessageMatcher::FreeWaiter(uint32_t i) {
  waiters_[i].next = free_waiter_;
  free_waiter_ = i;
}

void MessageMatcher::Send(const MessageKey& key, MessageSink* on_sent, uint64_t cookie) {
  uint32_t idx;
  if (!free_in_flight_.empty()) {
    idx = free_in_flight_.back();
    free_in_flight_.pop_back();
    in_flight_[idx] = InFlight{key, on_sent, cookie};
  } else {
    idx = static_cast<uint32_t>(in_flight_.size());
    in_flight_.push_back(InFlight{key, on_sent, cookie});
  }
  ++slots_[key].in_flight;
  net_.Send(key.src, key.dst, Bytes(key.size), this, idx);
}

void MessageMatcher::OnDelivered(uint64_t token) {
  const InFlight m = in_flight_[token];
  free_in_flight_.push_back(static_cast<uint32_t>(token));
  if (m.on_sent != nullptr) m.on_sent->OnMessage(m.cookie);
  auto it = slots_.find(m.key);
  Slot& s = it->second;
  --s.in_flight;
  if (s.head != kNil) {
    const uint32_t w = s.head;
    s.head = waiters_[w].next;
    if (s.head == kNil) s.tail = kNil;
    MessageSink* sink = waiters_[w].sink;
    const uint64_t cookie = waiters_[w].cookie;
    FreeWaiter(w);
    if (s.head == kNil && s.arrived == 0 && s.in_flight == 0) slots_.erase(it);
    sink->OnMessage(cookie);
  } else {
    ++s.arrived;
  }
}

void MessageMatcher::Recv(const MessageKey& key, MessageSink* sink, uint64_t cookie) {
  auto it = slots_.find(key);
  if (it != slots_.end() && it->second.arrived > 0) {
    Slot& s = it->second;
    --s.arrived;
    if (s.head == kNil && s.arrived == 0 && s.in_flight == 0) slots_.erase(it);
    // The message is already here: complete through the queue at the current time.
    sim_.ScheduleAfter(Time::Zero(), this, NewWaiter(sink, cookie));
    return;
  }
  Slot& s = it != slots_.end() ? it->second : slots_[key];
  const uint32_t w = NewWaiter(sink, cookie);
  if (s.tail == kNil) {
    s.head = s.tail = w;
  } else {
    waiters_[s.tail].next = w;
    s.tail = w;
  }
}

void MessageMatcher::OnEvent(uint64_t arg) {
  const uint32_t w = static_cast<uint32_t>(arg);
  MessageSink* sink = waiters_[w].sink;
  const uint64_t cookie = waiters_[w].cookie;
  FreeWaiter(w);
  sink->OnMessage(cookie);
}

size_t MessageMatcher::pending_receives() const {
  size_t n = 0;
  for (const auto& [k, s] : slots_) {
    for (uint32_t w = s.head; w != kNil; w = waiters_[w].next) ++n;
  }
  return n;
}

size_t MessageMatcher::unreceived_messages() const {
  size_t n = 0;
  for (const auto& [k, s] : slots_) n += s.arrived;
  return n;
}

static const char* SpaceName(TagSpace s) {
  switch (s) {
    case TagSpace::kNative:
      return "tag";
    case TagSpace::kCollective:
      return "collective stream";
    case TagSpace::kRendezvous:
      return "rendezvous tag";
  }
  return "?";
}

std::vector<std::string> MessageMatcher::DescribePending(int max_items) const {
  std::vector<std::pair<MessageKey, std::string>> items;
  for (const auto& [k, s] : slots_) {
    std::string what = std::string(SpaceName(k.space)) + " " + std::to_string(k.tag) + ", " +
                       std::to_string(k.size) + " B";
    for (uint32_t w = s.head; w != kNil; w = waiters_[w].next) {
      items.emplace_back(k, "NPU " + std::to_string(k.dst) + " waits to receive from NPU " +
                                std::to_string(k.src) + " (" + what + "), never sent");
    }
    if (s.arrived > 0) {
      items.emplace_back(k, "NPU " + std::to_string(k.src) + " sent " +
                                std::to_string(s.arrived) + " message(s) to NPU " +
                                std::to_string(k.dst) + " (" + what + ") that no one received");
    }
  }
  // Deterministic order whatever the hash table did.
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    if (a.first.dst != b.first.dst) return a.first.dst < b.first.dst;
    if (a.first.src != b.first.src) return a.first.src < b.first.src;
    if (a.first.tag != b.first.tag) return a.first.tag < b.first.tag;
    return a.second < b.second;
  });
  std::vector<std::string> out;
  for (const auto& [k, s] : items) {
    if (static_cast<int>(out.size()) >= max_items) break;
    out.push_back(s);
  }
  return out;
}

}  // namespace orrery
