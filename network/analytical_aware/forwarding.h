// How the congestion-aware models move one chunk across one link.
//
//   Store-and-forward (ASTRA-sim):   the next device gets the whole chunk after
//                                    trunc(latency + size / bw); the link is busy trunc(size / bw).
//   Pipelined (packet-mtu packets):  the next device starts forwarding once the first packet is
//                                    in, and the link cannot finish before the last packet has
//                                    reached this device.
//
//   PipelinedHop h = PipelineOverLink(now, train_here, size, mtu, link_bw, link_latency);
//   // link busy until h.link_free; next hop may start at h.head_arrival; the last byte reaches
//   // the next device at h.next.tail (the delivery time when that device is the destination).
//
// Without contention this reproduces the packet backend's timing of a message cut into
// ceil(size / mtu) packets, with no per-packet events: over H equal links
// H * latency + size / bw + (H - 1) * mtu / bw. Derivation in network/README.md.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/event_queue.h"
#include "common/units.h"

namespace orrery {

// Store-and-forward delays of one link (or dimension) for the last message size it carried
// (collectives repeat sizes, and the division is the slowest step of a hop). As ASTRA-sim: both
// delays in double ns, each truncated to whole ns on its own. It starts filled for size 0, so
// every size, 2^64 - 1 included, gets its own delays (no sentinel size).
class StoreAndForwardDelays {
 public:
  StoreAndForwardDelays() = default;  // a link with no latency and no time per byte
  StoreAndForwardDelays(double latency_ns, double bytes_per_ns)
      : latency_ns_(latency_ns), bytes_per_ns_(bytes_per_ns) {
    Fill(0);
  }
  // Sets arrival() and busy() for a message of `size` bytes.
  void For(uint64_t size) {
    if (size != size_) Fill(size);
  }
  Time arrival() const { return arrival_; }  // the whole message is at the next device
  Time busy() const { return busy_; }        // the link is busy
  double serialization_ns() const { return serialization_ns_; }  // busy() before truncation

 private:
  void Fill(uint64_t size) {
    serialization_ns_ = static_cast<double>(size) / bytes_per_ns_;
    size_ = size;
    arrival_ = Time::FromNsTruncated(latency_ns_ + serialization_ns_);
    busy_ = Time::FromNsTruncated(serialization_ns_);
  }

  double latency_ns_ = 0;
  double bytes_per_ns_ = 1;
  uint64_t size_ = 0;
  double serialization_ns_ = 0;
  Time arrival_;
  Time busy_;
};

// Where a pipelined chunk's packets are: when its last packet, and the one before it, are whole
// at the device it is at (or will be). At the source both are the send time.
struct PacketTrain {
  Time tail;         // the last packet
  Time penultimate;  // the packet before the last (with one packet: unused)
};

struct PipelinedHop {
  Time link_free;     // the link's last byte leaves
  Time head_arrival;  // the first packet is whole at the next device
  PacketTrain next;   // the train at the next device
  Time busy;          // time spent serializing (link statistics)
};

// The unit a message sent in pieces of `piece` bytes moves in (Network::SendInPieces): each piece
// stored and forwarded, or the network's packets of `pipeline_mtu` (0: none) when smaller.
inline uint64_t PieceUnit(uint64_t pipeline_mtu, uint64_t piece) {
  return pipeline_mtu != 0 ? std::min(pipeline_mtu, piece) : piece;
}

// `start`: the link begins sending (the chunk's head is here and the link is free).
// `here`: when the chunk's last packet and the one before it are whole at this device.
//
// The full packets reach this device evenly spaced (by the slowest link behind them), so the one
// before the last leaves at max(start + (packets - 1) * mtu / bw, here.penultimate + mtu / bw):
// at line rate from `start`, unless the link outruns the packets, which it then sends as they
// come. The last packet leaves after both it and that packet: after a slow link a fast one
// waits for the last full packet, and then sends it whole before the (shorter) last one.
inline PipelinedHop PipelineOverLink(Time start, const PacketTrain& here, uint64_t size,
                                     uint64_t mtu, Bandwidth bw, Time latency) {
  const uint64_t first = std::min(size, mtu);
  const uint64_t packets = size == 0 ? 1 : (size - 1) / mtu + 1;
  const uint64_t last = size == 0 ? 0 : size - (packets - 1) * mtu;
  PipelinedHop h;
  h.busy = Bytes(size) / bw;
  h.head_arrival = start + Bytes(first) / bw + latency;
  Time penultimate_leaves = start;
  if (packets > 1) {
    penultimate_leaves =
        std::max(start + Bytes(size - last) / bw, here.penultimate + Bytes(mtu) / bw);
  }
  h.link_free = std::max(penultimate_leaves, here.tail) + Bytes(last) / bw;
  h.next.tail = h.link_free + latency;
  h.next.penultimate = penultimate_leaves + latency;
  return h;
}

// Starts a chunk on a link now, for the event-driven models: schedules `arrival_arg` for when
// the chunk may be taken at the next device (its tail when that device is the destination,
// `last_hop`; its head otherwise), then `free_arg` for when the link's last byte leaves, and
// moves `*train` to the next device. Returns the link's busy time.
inline Time StartPipelinedHop(Simulation& sim, EventTarget* target, uint64_t arrival_arg,
                              uint64_t free_arg, bool last_hop, PacketTrain* train, uint64_t size,
                              uint64_t mtu, Bandwidth bw, Time latency) {
  const Time now = sim.now();
  const PipelinedHop h = PipelineOverLink(now, *train, size, mtu, bw, latency);
  *train = h.next;
  // Arrival first, then link-free: at equal times they run in this order.
  sim.ScheduleAfter((last_hop ? h.next.tail : h.head_arrival) - now, target, arrival_arg);
  sim.ScheduleAfter(h.link_free - now, target, free_arg);
  return h.busy;
}

}  // namespace orrery
