#include "system/message_matcher.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

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

namespace {

// A ready message (--rendezvous-protocol) carries its data's tag space in its tag (data tag * 4
// + space; collective_engine.cc, HandshakeKey), of either sign.
TagSpace SpaceOfReadyMessage(int64_t tag) { return static_cast<TagSpace>(((tag % 4) + 4) % 4); }

// The messages a trace names itself, which ASTRA-sim hands to its network as they are: its
// sends and receives, its custom collectives', and the ready messages of those.
bool IsTraceMessage(const MessageKey& key) {
  const TagSpace space =
      key.space == TagSpace::kRendezvous ? SpaceOfReadyMessage(key.tag) : key.space;
  return space == TagSpace::kNative || space == TagSpace::kCustom;
}

}  // namespace

void MessageMatcher::Send(const MessageKey& key, MessageSink* on_sent, uint64_t cookie) {
  const uint32_t idx = in_flight_.Acquire();
  in_flight_[idx] = InFlight{key, on_sent, cookie, true};
  if (IsTraceMessage(key)) {
    const uint64_t piece = key.space == TagSpace::kNative ? p2p_piece_ : 0;
    net_.SendTraceMessage(key.src, key.dst, Bytes(key.size), piece, this, idx);
  } else {
    net_.Send(key.src, key.dst, Bytes(key.size), this, idx);
  }
}

void MessageMatcher::OnDelivered(uint64_t token) {
  const InFlight m = in_flight_[static_cast<uint32_t>(token)];
  in_flight_[static_cast<uint32_t>(token)].live = false;
  in_flight_.Release(static_cast<uint32_t>(token));
  // Asked before it is told: a sender may end with its last message (a collective's chunk
  // stream is freed, its memory reused; UBSan found the call on it).
  const bool sender_lives = m.on_sent != nullptr && m.on_sent->LivesForTheRun();
  if (m.on_sent != nullptr) m.on_sent->OnMessage(m.cookie);
  MessageKey key = m.key;
  if (symmetry_ != nullptr && !symmetry_->IsRep(key.dst)) {
    key.src = symmetry_->ToRep(key.dst, key.src);
    key.dst = symmetry_->Rep(key.dst);
  }
  // The sink above may have sent or received (and so moved the table): look the key up now.
  size_t at;
  Slot& s = slots_.FindOrInsert(key, &at);
  if (s.head == kNil) {
    if (s.arrived++ == 0) {
      // Only a sink still there when the report asks it (ASan found a stream freed by then).
      s.first_unreceived_sender = sender_lives ? m.on_sent : nullptr;
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

namespace {

const char* SpaceName(TagSpace s) {
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

// A receive waiting or messages nobody received, under one key.
struct PendingItem {
  MessageKey key;
  uint32_t arrived;  // 0: a receive waiting; otherwise messages nobody received
  std::string by;    // who sent the first unreceived one
  bool paired = false;
};

// The words of a deadlock report for NPUs, tags and messages.
class PendingWords {
 public:
  explicit PendingWords(const std::function<std::string(int)>& group_namer)
      : group_namer_(group_namer) {}

  static std::string Npu(int n) { return "NPU " + std::to_string(n); }

  std::string Tag(const MessageKey& k) const {
    if (k.space == TagSpace::kCollective) {
      // A stream's tag: its group in the high 32 bits, its number in the low.
      const int group = static_cast<int>(k.tag >> 32);
      return "collective stream " + std::to_string(static_cast<uint32_t>(k.tag)) +
             (group == 0 ? std::string()
                         : " of " + (group_namer_ ? group_namer_(group)
                                                  : "communicator group " + std::to_string(group)));
    }
    return std::string(SpaceName(k.space)) + " " + std::to_string(k.tag);
  }

  std::string What(const MessageKey& k) const {
    return Tag(k) + ", " + std::to_string(k.size) + " B";
  }

  std::string Waits(const MessageKey& k) const {
    return Npu(k.dst) + " waits to receive from " + Npu(k.src) + " (" + What(k) + ")";
  }

 private:
  const std::function<std::string(int)>& group_namer_;
};

// A collective's streams and rendezvous messages have no near misses: only a trace's own tag
// spaces do.
bool MayMissNarrowly(const MessageKey& k) {
  return k.space != TagSpace::kCollective && k.space != TagSpace::kRendezvous;
}

// A receive and an unreceived message in a trace's own tag space that differ in one field
// only are most likely meant for each other: one line says so, and both are marked paired.
// Each unreceived message is filed under its key with one field left out (size, tag, source,
// destination); a receive looks itself up the same way, in that order.
std::vector<std::string> PairNearMisses(std::vector<PendingItem>& items, const PendingWords& w) {
  enum Field { kSize, kTag, kSrc, kDst, kFields };
  auto without = [](const MessageKey& k, int f) {
    return std::make_tuple(f, k.space, f == kSrc ? 0 : k.src, f == kDst ? 0 : k.dst,
                           f == kTag ? 0 : k.tag, f == kSize ? 0 : k.size);
  };
  struct Bucket {
    std::vector<size_t> items;
    size_t next = 0;  // items before it are paired
  };
  std::map<decltype(without(MessageKey{}, 0)), Bucket> unreceived;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].arrived == 0 || !MayMissNarrowly(items[i].key)) continue;
    for (int f = 0; f < kFields; ++f) unreceived[without(items[i].key, f)].items.push_back(i);
  }
  std::vector<std::string> near_misses;
  for (PendingItem& r : items) {
    if (r.arrived > 0 || !MayMissNarrowly(r.key)) continue;
    for (int f = 0; f < kFields && !r.paired; ++f) {
      auto found = unreceived.find(without(r.key, f));
      if (found == unreceived.end()) continue;
      Bucket& b = found->second;
      while (b.next < b.items.size() && items[b.items[b.next]].paired) ++b.next;
      if (b.next == b.items.size()) continue;
      PendingItem& a = items[b.items[b.next]];
      const MessageKey& k = a.key;
      const std::string sent =
          f == kSize  ? w.Npu(k.src) + " sent it " + std::to_string(k.size) + " B with that tag"
          : f == kTag ? w.Npu(k.src) + " sent it that size with " + w.Tag(k)
          : f == kSrc ? w.Npu(k.src) + " sent " + w.Npu(k.dst) + " that message instead"
                      : w.Npu(k.src) + " sent that message to " + w.Npu(k.dst);
      near_misses.push_back(w.Waits(r.key) + ", but " + sent +
                            (a.by.empty() ? "" : " (" + a.by + ")") +
                            ", which no one received: a send and its receive must agree on "
                            "source, destination, tag and size");
      r.paired = a.paired = true;
    }
  }
  return near_misses;
}

// One line per item not paired as a near miss, into `p2p` (the trace's own sends and
// receives) or `collective`. `moving` counts the messages still in the network by key.
void DescribeUnpaired(const std::vector<PendingItem>& items,
                      std::unordered_map<MessageKey, int, MessageKeyHash> moving,
                      const PendingWords& w, std::vector<std::string>* p2p,
                      std::vector<std::string>* collective) {
  for (const PendingItem& i : items) {
    if (i.paired) continue;
    // A ready message the receiver sent that no send took: its data receive, posted with it,
    // is the line that says so.
    if (i.key.space == TagSpace::kRendezvous && i.arrived > 0) continue;
    // Each waiting receive takes one message in flight, if any is left.
    auto sent = moving.find(i.key);
    const bool on_its_way = i.arrived == 0 && sent != moving.end();
    if (on_its_way && --sent->second == 0) moving.erase(sent);
    std::string line =
        i.arrived == 0
            ? w.Waits(i.key) + (on_its_way ? ", sent and still in the network (not yet delivered)"
                                           : ", never sent")
            : w.Npu(i.key.src) + " sent " + std::to_string(i.arrived) + " message(s) to " +
                  w.Npu(i.key.dst) + " (" + w.What(i.key) + ") that no one received" +
                  (i.by.empty() ? "" : (i.arrived > 1 ? ", the first from " : ", from ") + i.by);
    TagSpace space = i.key.space;
    if (i.key.space == TagSpace::kRendezvous) {
      // A ready message goes receiver -> sender; its tag is the data's tag * 4 + its space.
      const int64_t tag = i.key.tag;
      space = SpaceOfReadyMessage(tag);
      const MessageKey data{i.key.dst, i.key.src, space, (tag - static_cast<int64_t>(space)) / 4,
                            0};
      line = w.Npu(data.src) + "'s message to " + w.Npu(data.dst) + " (" + w.Tag(data) +
             ") waits for " + w.Npu(data.dst) + " to post its receive (--rendezvous-protocol)" +
             (on_its_way ? "; the ready message is on its way" : "");
    }
    (space == TagSpace::kCollective ? *collective : *p2p).push_back(std::move(line));
  }
}

}  // namespace

std::vector<std::string> MessageMatcher::DescribePending(int max_items) const {
  std::vector<PendingItem> items;
  slots_.ForEach([&](const MessageKey& k, const Slot& s) {
    for (uint32_t w = s.head; w != kNil; w = waiters_[w].next) items.push_back({k, 0, ""});
    if (s.arrived > 0) {
      std::string by;
      if (s.first_unreceived_sender != nullptr) {
        by = s.first_unreceived_sender->DescribeCookie(s.first_unreceived_cookie);
      }
      items.push_back({k, s.arrived, by});
    }
  });
  // Deterministic order whatever the hash table did.
  std::sort(items.begin(), items.end(), [](const PendingItem& a, const PendingItem& b) {
    const MessageKey &x = a.key, &y = b.key;
    return std::tie(x.dst, x.src, x.space, x.tag, x.size, a.arrived) <
           std::tie(y.dst, y.src, y.space, y.tag, y.size, b.arrived);
  });
  const PendingWords words(group_namer_);
  std::vector<std::string> near_misses = PairNearMisses(items, words);
  // Messages sent and still in the network, by key.
  std::unordered_map<MessageKey, int, MessageKeyHash> moving;
  for (uint32_t k = 0; k < in_flight_.capacity(); ++k) {
    if (in_flight_[k].live) ++moving[in_flight_[k].key];
  }
  std::vector<std::string> p2p, collective;
  DescribeUnpaired(items, std::move(moving), words, &p2p, &collective);
  // The trace's own sends and receives first: a collective's streams usually wait because of them.
  std::vector<std::string> out;
  const size_t total = near_misses.size() + p2p.size() + collective.size();
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
  const bool rendezvous = std::any_of(items.begin(), items.end(), [](const PendingItem& i) {
    return i.arrived == 0 && i.key.space == TagSpace::kRendezvous;
  });
  if (rendezvous) {
    out.push_back(
        "(under --rendezvous-protocol a send completes only once its receive is posted, as in "
        "MPI: a trace whose receives wait for its sends, such as a ring that sends before it "
        "receives, cannot run; it runs without --rendezvous-protocol)");
  }
  return out;
}

}  // namespace orrery
