// Matches sends with receives, over any Network backend.
//
//   MessageMatcher m(sim, net);
//   m.Recv({/*src=*/0, /*dst=*/1, tag, size}, &sink, cookie);   // posted receive
//   m.Send({0, 1, tag, size}, &send_sink, cookie);              // starts the transfer
//
// A message is identified by (source, destination, tag space, tag, size); the k-th send of a key
// matches the k-th receive of the same key (ASTRA-sim's matching). Both completions happen when
// the message has arrived: the send sink is told first, then the receive sink if a receive was
// posted. A receive posted after its message arrived completes at the current time, through
// the event queue. Unmatched messages and receives are kept and can be listed (deadlock report).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/event_queue.h"
#include "common/flat_map.h"
#include "common/slot_pool.h"
#include "common/units.h"
#include "network/network.h"
#include "network/symmetry.h"

namespace orrery {

class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void OnMessage(uint64_t cookie) = 0;
  // Names what `cookie` stands for (e.g. "node 7 (send_grad)"), for reports; empty if unknown.
  virtual std::string DescribeCookie(uint64_t /*cookie*/) const { return {}; }
  // Whether the sink lives until the run's reports are written, so that a report may ask it to
  // DescribeCookie: a collective's chunk stream is gone (and its memory reused) by then.
  virtual bool LivesForTheRun() const { return false; }
};

// kCustom: the messages of custom (MSCCL-style) collectives, see custom_collective.h.
enum class TagSpace : uint8_t { kNative = 0, kCollective = 1, kRendezvous = 2, kCustom = 3 };

struct MessageKey {
  int src = 0;
  int dst = 0;
  TagSpace space = TagSpace::kNative;
  int64_t tag = 0;
  uint64_t size = 0;
  bool operator==(const MessageKey& o) const {
    return src == o.src && dst == o.dst && space == o.space && tag == o.tag && size == o.size;
  }
};

struct MessageKeyHash {
  size_t operator()(const MessageKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.src) * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(k.dst) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2));
    h ^= (static_cast<uint64_t>(k.tag) * 0xC2B2AE3D27D4EB4Full + static_cast<uint64_t>(k.space));
    h ^= k.size * 0x165667B19E3779F9ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

class MessageMatcher : public DeliveryHandler, public EventTarget {
 public:
  // `p2p_piece`: > 0 moves the workload's point-to-point messages (TagSpace::kNative) in pieces
  // of that many bytes (Network::SendInPieces; system key p2p-chunk-size); 0 whole.
  MessageMatcher(Simulation& sim, Network& net, uint64_t p2p_piece = 0)
      : sim_(sim), net_(net), p2p_piece_(p2p_piece) {}

  // Starts moving the message now. `on_sent` (may be null) is told at arrival.
  void Send(const MessageKey& key, MessageSink* on_sent, uint64_t cookie);
  // Posts a receive. `sink` is told when the matching message has arrived.
  void Recv(const MessageKey& key, MessageSink* sink, uint64_t cookie);

  // Receives still waiting for a message and messages nobody received, for deadlock reports.
  std::vector<std::string> DescribePending(int max_items) const;
  // How those reports name a collective stream's group (its tag's high 32 bits; 0 = all NPUs).
  void set_group_namer(std::function<std::string(int)> namer) { group_namer_ = std::move(namer); }
  size_t pending_receives() const;
  size_t unreceived_messages() const;

  // Symmetry reduction (network/symmetry.h): only representatives run, so a message delivered to
  // another NPU y is matched as its image under the symmetry that takes y to its
  // representative: from ToRep(y, src) to Rep(y), same tag and size. Null: none.
  void set_symmetry(const NpuSymmetry* symmetry) { symmetry_ = symmetry; }

  void OnDelivered(uint64_t token) override;
  void OnEvent(uint64_t arg) override;

 private:
  struct Waiter {
    MessageSink* sink;
    uint64_t cookie;
    uint32_t next;
  };
  struct Slot {
    uint32_t head = kNil;  // posted receives, FIFO
    uint32_t tail = kNil;
    uint32_t arrived = 0;  // messages that arrived before their receive was posted
    // The oldest message nobody has received yet, as its sender named it (for reports).
    MessageSink* first_unreceived_sender = nullptr;
    uint64_t first_unreceived_cookie = 0;
  };
  struct InFlight {
    MessageKey key;
    MessageSink* on_sent;
    uint64_t cookie;
    bool live = false;  // sent and not yet delivered (reports tell in-flight from never sent)
  };
  static constexpr uint32_t kNil = 0xFFFFFFFFu;

  uint32_t NewWaiter(MessageSink* sink, uint64_t cookie);
  void FreeWaiter(uint32_t i);

  Simulation& sim_;
  Network& net_;
  uint64_t p2p_piece_;
  FlatMap<MessageKey, Slot, MessageKeyHash> slots_;  // keys with waiters or arrivals only
  std::vector<Waiter> waiters_;
  uint32_t free_waiter_ = kNil;
  SlotPool<InFlight> in_flight_;
  std::function<std::string(int)> group_namer_;
  const NpuSymmetry* symmetry_ = nullptr;
};

}  // namespace orrery
