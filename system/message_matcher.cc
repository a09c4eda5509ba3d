#include "system/message_matcher.h"

#include <algorithm>
#include <map>
#include <tuple>

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
  struct Item {
    MessageKey key;
    bool waiting;  // a receive waiting; otherwise `arrived` messages nobody received
    uint32_t arrived;
    std::string by;  // who sent the first unreceived one
    bool paired = false;
  };
  std::vector<Item> items;
  slots_.ForEach([&](const MessageKey& k, const Slot& s) {
    for (uint32_t w = s.head; w != kNil; w = waiters_[w].next) items.push_back({k, true, 0, ""});
    if (s.arrived > 0) {
      std::string by;
      if (s.first_unreceived_sender != nullptr) {
        by = s.first_unreceived_sender->DescribeCookie(s.first_unreceived_cookie);
      }
      items.push_back({k, false, s.arrived, by});
    }
  });
  // Deterministic order whatever the hash table did.
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    const MessageKey &x = a.key, &y = b.key;
    if (x.dst != y.dst) return x.dst < y.dst;
    if (x.src != y.src) return x.src < y.src;
    if (x.space != y.space) return x.space < y.space;
    if (x.tag != y.tag) return x.tag < y.tag;
    if (x.size != y.size) return x.size < y.size;
    return a.waiting && !b.waiting;
  });
  auto what = [](const MessageKey& k) {
    return std::string(SpaceName(k.space)) + " " + std::to_string(k.tag) + ", " +
           std::to_string(k.size) + " B";
  };
  // A receive and an unreceived message in a trace's own tag space that differ in one field only
  // (size, tag, source or destination) are most likely meant for each other: one line says so.
  // Items are sorted, so each (dst, src, space) is one run; pairing is O(n log n).
  std::vector<std::pair<MessageKey, std::string>> near;
  std::vector<std::string> p2p, collective;
  // `sent`: what the unreceived message was, after "but ".
  auto near_miss = [&](Item& w, Item& a, const std::string& sent) {
    w.paired = a.paired = true;
    near.emplace_back(w.key, "NPU " + std::to_string(w.key.dst) + " waits to receive from NPU " +
                                 std::to_string(w.key.src) + " (" + what(w.key) + "), but " + sent +
                                 (a.by.empty() ? "" : " (" + a.by + ")") +
                                 ", which no one received: a send and its receive must agree on "
                                 "source, destination, tag and size");
  };
  auto npu = [](int n) { return "NPU " + std::to_string(n); };
  for (size_t begin = 0, end = 0; begin < items.size(); begin = end) {
    const MessageKey& k = items[begin].key;
    end = begin;
    while (end < items.size() && items[end].key.dst == k.dst && items[end].key.src == k.src &&
           items[end].key.space == k.space) {
      ++end;
    }
    if (k.space == TagSpace::kCollective) continue;
    // Same tag, another size: within a run of equal tags.
    for (size_t t0 = begin, t1 = begin; t0 < end; t0 = t1) {
      while (t1 < end && items[t1].key.tag == items[t0].key.tag) ++t1;
      size_t a = t0;
      for (size_t w = t0; w < t1; ++w) {
        if (!items[w].waiting) continue;
        while (a < t1 && (items[a].waiting || items[a].paired)) ++a;
        if (a == t1) break;
        if (items[a].key.size != items[w].key.size) {
          near_miss(items[w], items[a],
                    npu(items[a].key.src) + " sent it " + std::to_string(items[a].key.size) +
                        " B with that tag");
        }
      }
    }
    // Same size, another tag.
    std::multimap<uint64_t, size_t> unpaired_by_size;
    for (size_t i = begin; i < end; ++i) {
      if (!items[i].waiting && !items[i].paired) unpaired_by_size.emplace(items[i].key.size, i);
    }
    for (size_t w = begin; w < end; ++w) {
      if (!items[w].waiting || items[w].paired) continue;
      auto it = unpaired_by_size.find(items[w].key.size);
      if (it == unpaired_by_size.end()) continue;
      const MessageKey& a = items[it->second].key;
      near_miss(items[w], items[it->second],
                npu(a.src) + " sent it that size with " + SpaceName(a.space) + " " +
                    std::to_string(a.tag));
      unpaired_by_size.erase(it);
    }
  }
  // Same tag and size, one end different (a wrong comm_src or comm_dst).
  std::multimap<std::tuple<TagSpace, int64_t, uint64_t>, size_t> unpaired;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& a = items[i];
    if (!a.waiting && !a.paired && a.key.space != TagSpace::kCollective) {
      unpaired.emplace(std::make_tuple(a.key.space, a.key.tag, a.key.size), i);
    }
  }
  for (Item& w : items) {
    if (!w.waiting || w.paired || w.key.space == TagSpace::kCollective) continue;
    auto [lo, hi] = unpaired.equal_range(std::make_tuple(w.key.space, w.key.tag, w.key.size));
    int looked = 0;  // a bounded look: many unreceived messages may share a tag and size
    for (auto it = lo; it != hi && ++looked <= 64; ++it) {
      Item& a = items[it->second];
      if ((a.key.src == w.key.src) == (a.key.dst == w.key.dst)) continue;  // exactly one differs
      near_miss(w, a,
                a.key.dst == w.key.dst
                    ? npu(a.key.src) + " sent " + npu(a.key.dst) + " that message instead"
                    : npu(a.key.src) + " sent that message to " + npu(a.key.dst));
      unpaired.erase(it);
      break;
    }
  }
  for (const Item& i : items) {
    if (i.paired) continue;
    std::string line =
        i.waiting
            ? "NPU " + std::to_string(i.key.dst) + " waits to receive from NPU " +
                  std::to_string(i.key.src) + " (" + what(i.key) + "), never sent"
            : "NPU " + std::to_string(i.key.src) + " sent " + std::to_string(i.arrived) +
                  " message(s) to NPU " + std::to_string(i.key.dst) + " (" + what(i.key) +
                  ") that no one received" +
                  (i.by.empty() ? "" : (i.arrived > 1 ? ", the first from " : ", from ") + i.by);
    (i.key.space == TagSpace::kCollective ? collective : p2p).push_back(std::move(line));
  }
  // In the order of the receives they name.
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.first.dst, a.first.src) < std::make_pair(b.first.dst, b.first.src);
  });
  std::vector<std::string> near_misses;
  for (auto& n : near) near_misses.push_back(std::move(n.second));
  // The trace's own sends and receives first: a collective's streams usually wait because of them.
  std::vector<std::string> out;
  size_t total = near_misses.size() + p2p.size() + collective.size();
  for (const auto* group : {&near_misses, &p2p, &collective}) {
    for (const std::string& line : *group) {
      if (static_cast<int>(out.size()) >= max_items) break;
      out.push_back(line);
    }
  }
  if (out.size() < total) {
    out.push_back("... and " + std::to_string(total - out.size()) +
                  " more waiting receive(s) or unreceived message(s)");
  }
  return out;
}

}  // namespace orrery
