// NVLink SHARP (`nvls`): the switch reduces and multicasts, so every NPU moves its data over its
// own link once (see README.md, "NVLS").
#include <memory>

#include "system/packet_algorithm.h"

namespace orrery {
namespace {

// One message per NPU, of the mean of the phase's input and output. The switch reads every
// NPU's input once (up its link) and writes every NPU's output once (down its link): an
// all-reduce loads each direction with D. A message between NPUs loads both directions alike,
// so a reduce-scatter (up D, down D/n) and an all-gather (up D/n, down D) are each given
// (D + D/n) / 2: exact in sum for NVLS-tree's reduce-scatter + all-gather around the inter-node
// step, optimistic by up to 2x for a lone reduce-scatter or all-gather (README.md, "NVLS").
// The message goes to the ring successor only to load the links as the switch does; the
// reduction happens in the switch, so nothing is reduced on the NPU. Two hand-offs: the send and
// the receipt.
class NvlsPhase final : public PacketPhase {
 public:
  NvlsPhase(Stream& stream, const PhaseSpec& p) : PacketPhase(stream, p) {
    final_size_ = PhaseFinalSize(p);
    sends_left_ = p.ring_size > 1 ? 1 : 0;
    msg_size_ = (p.data_size + final_size_) / 2;
    dst_ = p.receiver;
    src_ = p.sender;
  }

 private:
  // The receipt starts a new round of one injected hand-off: never reduced on the NPU.
  int NetworkPacketsPerRound() const override { return 0; }
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeNvlsPhase(Stream& stream, const PhaseSpec& phase) {
  return std::make_unique<NvlsPhase>(stream, phase);
}

}  // namespace orrery
