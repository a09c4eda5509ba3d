// The ring algorithm, message by message (see README.md, "Ring").
#include <memory>

#include "system/packet_algorithm.h"

namespace orrery {
namespace {

// One phase of one chunk on a logical ring of n NPUs. The NPU sends to `receiver` and receives
// from `sender`, one message at a time. Rounds are n hand-offs: one injected, n-1 from the
// network; in an all-reduce the first round's received messages are reduced, in a
// reduce-scatter all are.
class RingPhase final : public PacketPhase {
 public:
  RingPhase(Stream& stream, const PhaseSpec& p, int dst, int src) : PacketPhase(stream, p) {
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
    dst_ = dst;
    src_ = src;
  }

 private:
  int NetworkPacketsPerRound() const override { return phase_.ring_size - 1; }
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeRingPhase(Stream& stream, const PhaseSpec& phase) {
  return std::make_unique<RingPhase>(stream, phase, phase.receiver, phase.sender);
}

}  // namespace orrery
