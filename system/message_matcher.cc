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
  const uint32_t idx = in_flight_.Acquire();
  in_flight_[idx] = InFlight{key, on_sent, cookie};
  net_.Send(key.src, key.dst, Bytes(key.size), this, idx);
}

void MessageMatcher::OnDelivered(uint64_t token) {
  const InFlight m = in_flight_[static_cast<uint32_t>(token)];
  in_flight_.Release(static_cast<uint32_t>(token));
  if (m.on_sent != nullptr) m.on_sent->OnMessage(m.cookie);
  // The sink above may have sent or received (and so moved the table): look the key up now.
  size_t at;
  Slot& s = slots_.FindOrInsert(m.key, &at);
  if (s.head == kNil) {
    if (s.arrived++ == 0) {
      s.first_unreceived_sender = m.on_sent;
      s.first_unreceived_cookie = m.cookie;
    }
    return;
  }
  const uint32_t w = s.head;
  s.head = waiters_[w].next;
  if (s.head == kNil) s.tail = kNil;
  const bool empty = s.head == kNil && s.arrived == 0;
  MessageSink* sink = waiters_[w].sink;
  const uint64_t cookie = waiters_[w].cookie;
  FreeWaiter(w);
  if (empty) slots_.EraseAt(at);
  sink->OnMessage(cookie);
}

void MessageMatcher::Recv(const MessageKey& key, MessageSink* sink, uint64_t cookie) {
  size_t at;
  Slot* found = slots_.Find(key, &at);
  if (found != nullptr && found->arrived > 0) {
    --found->arrived;
    found->first_unreceived_sender = nullptr;  // the oldest is consumed; the next is not recorded
    if (found->head == kNil && found->arrived == 0) slots_.EraseAt(at);
    // The message is already here: complete through the queue at the current time.
    sim_.ScheduleAfter(Time::Zero(), this, NewWaiter(sink, cookie));
    return;
  }
  Slot& s = found != nullptr ? *found : slots_.FindOrInsert(key);
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
  slots_.ForEach([&](const MessageKey&, const Slot& s) {
    for (uint32_t w = s.head; w != kNil; w = waiters_[w].next) ++n;
  });
  return n;
}

size_t MessageMatcher::unreceived_messages() const {
  size_t n = 0;
  slots_.ForEach([&](const MessageKey&, const Slot& s) { n += s.arrived; });
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
    case TagSpace::kCustom:
      return "custom collective tag";
  }
  return "?";
}

std::vector<std::string> MessageMatcher::DescribePending(int max_items) const {
  std::vector<std::pair<MessageKey, std::string>> items;
  slots_.ForEach([&](const MessageKey& k, const Slot& s) {
    std::string what = std::string(SpaceName(k.space)) + " " + std::to_string(k.tag) + ", " +
                       std::to_string(k.size) + " B";
    for (uint32_t w = s.head; w != kNil; w = waiters_[w].next) {
      items.emplace_back(k, "NPU " + std::to_string(k.dst) + " waits to receive from NPU " +
                                std::to_string(k.src) + " (" + what + "), never sent");
    }
    if (s.arrived > 0) {
      std::string by;
      if (s.first_unreceived_sender != nullptr) {
        by = s.first_unreceived_sender->DescribeCookie(s.first_unreceived_cookie);
        if (!by.empty()) by = (s.arrived > 1 ? ", the first from " : ", from ") + by;
      }
      items.emplace_back(k, "NPU " + std::to_string(k.src) + " sent " + std::to_string(s.arrived) +
                                " message(s) to NPU " + std::to_string(k.dst) + " (" + what +
                                ") that no one received" + by);
    }
  });
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
