// The message machinery shared by the ring, direct and halving-doubling algorithms (internal to
// the system layer; see README.md).
//
// A phase keeps up to `parallel` messages in flight. Every message enters the algorithm through a
// hand-off (endpoint-delay, plus the reduction when it must be reduced) and is then sent as soon
// as a slot is free; when its matching message from the peer arrives, the next message is handed
// off. Hand-offs come in rounds: `parallel` injected from the NPU (never reduced), then
// NetworkPacketsPerRound() taken from the network, reduced in a reduce-scatter and, in an
// all-reduce, in every other round starting with the first. The phase ends when every send has
// been made and every slot is free again.
#pragma once

#include <cstdint>
#include <vector>

#include "system/collective_engine.h"

namespace orrery {

class PacketPhase : public PhaseAlgorithm {
 public:
  void Start() override {
    for (int i = 0; i < parallel_; ++i) Insert();
  }
  void OnReceived() override {
    ++received_;
    Insert();
  }
  void OnBundleDone() override {
    ++free_;
    Ready();
    CheckDone();
  }
  uint64_t final_size() const override { return final_size_; }

 protected:
  PacketPhase(Stream& stream, const PhaseSpec& phase) : stream_(stream), phase_(phase) {}

  // Hand-offs taken from the network in each round, after the `parallel_` injected ones.
  virtual int NetworkPacketsPerRound() const = 0;
  // Called after each hand-off: moves dst_/src_/msg_size_ on to the next message.
  virtual void AfterInsert() {}

  // Sends the oldest handed-off message if a slot is free and sends remain.
  bool Ready() {
    if (head_ == queued_.size() || sends_left_ == 0 || free_ == 0) return false;
    const Packet p = queued_[head_++];
    if (head_ == queued_.size()) {  // drained: reuse the storage from the start
      queued_.clear();
      head_ = 0;
    }
    stream_.SendToPeer(p.dst, p.size);
    stream_.ReceiveFromPeer(p.src, p.size);
    --sends_left_;
    --free_;
    return true;
  }
  void CheckDone() {
    if (sends_left_ == 0 && free_ == parallel_) stream_.PhaseFinished();
  }

  Stream& stream_;
  const PhaseSpec phase_;
  int parallel_ = 1;       // messages in flight
  int sends_left_ = 0;     // messages still to send
  uint64_t msg_size_ = 0;  // size of the next message handed off
  uint64_t final_size_ = 0;
  int dst_ = 0;  // peers of the next message handed off
  int src_ = 0;
  int free_ = 0;  // hand-offs completed minus messages sent
  int received_ = 0;

 private:
  struct Packet {
    int dst;
    int src;
    uint64_t size;
  };

  void Insert() {
    if (injected_left_ == 0 && network_left_ == 0) {
      injected_left_ = parallel_;
      network_left_ = NetworkPacketsPerRound();
      reducing_round_ = !reducing_round_;
    }
    bool reduce = false;
    BusRoute route;
    if (injected_left_ > 0) {
      --injected_left_;
    } else {
      // Taken from the network; all but the round's last `parallel_` go back over the bus.
      route.from_npu = false;
      route.send_back = network_left_ > parallel_;
      --network_left_;
      reduce = phase_.type == CollectiveType::kReduceScatter ||
               (phase_.type == CollectiveType::kAllReduce && reducing_round_);
    }
    queued_.push_back({dst_, src_, msg_size_});
    stream_.HandOff(msg_size_, reduce, route);
    AfterInsert();
  }

  // Handed off, not yet sent: a FIFO in a vector (a deque allocates 512 bytes per phase up front,
  // and there is a phase per chunk per dimension per NPU).
  PoolVector<Packet> queued_;
  size_t head_ = 0;
  int injected_left_ = 0;
  int network_left_ = 0;
  bool reducing_round_ = false;
};

}  // namespace orrery
