// NCCL's ring across nodes (`channelRing`): one flat ring over every NPU per channel, rotated
// inside each node so that each channel leaves a node through a different NPU and its NIC (see
// README.md, "Channel ring").
#include <memory>

#include "system/packet_algorithm.h"

namespace orrery {
namespace {

// Ring position of `npu` in channel `c`, and back: nodes in order, and inside a node of `g`
// NPUs the channel starts at local NPU c.
int Position(int npu, int g, int c) { return (npu / g) * g + ((npu % g) - c % g + g) % g; }
int NpuAt(int position, int g, int c) { return (position / g) * g + (position % g + c) % g; }

// Sizes, rounds and reductions are the ring's (ring_algorithm.cc); only the peers differ.
class ChannelRingPhase final : public PacketPhase {
 public:
  ChannelRingPhase(Stream& stream, const PhaseSpec& p, int node_size) : PacketPhase(stream, p) {
    const uint64_t n = static_cast<uint64_t>(p.ring_size);
    switch (p.type) {
      case CollectiveType::kAllReduce:
        sends_left_ = 2 * (p.ring_size - 1);
        msg_size_ = p.data_size / n;
        final_size_ = p.data_size;
        break;
      case CollectiveType::kAllGather:
        sends_left_ = p.ring_size - 1;
        msg_size_ = p.data_size;
        final_size_ = p.data_size * n;
        break;
      case CollectiveType::kReduceScatter:
        sends_left_ = p.ring_size - 1;
        msg_size_ = p.data_size / n;
        final_size_ = p.data_size / n;
        break;
      default:  // all-to-all: n(n-1)/2 neighbour messages model the forwarding
        sends_left_ = (p.ring_size - 1) * p.ring_size / 2;
        msg_size_ = p.data_size / n;
        final_size_ = p.data_size;
        break;
    }
    const int g = node_size > 0 && p.ring_size % node_size == 0 ? node_size : p.ring_size;
    const int c = stream.id();  // chunks are numbered alike on every NPU: the channel
    const int me = Position(p.Member(p.index), g, c);
    const int next = NpuAt((me + 1) % p.ring_size, g, c);
    const int prev = NpuAt((me + p.ring_size - 1) % p.ring_size, g, c);
    dst_ = p.Member(p.clockwise ? next : prev);
    src_ = p.Member(p.clockwise ? prev : next);
  }

 private:
  int NetworkPacketsPerRound() const override { return phase_.ring_size - 1; }
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeChannelRingPhase(Stream& stream, const PhaseSpec& phase,
                                                     int node_size) {
  return std::make_unique<ChannelRingPhase>(stream, phase, node_size);
}

}  // namespace orrery
