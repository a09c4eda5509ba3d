// NVLink SHARP (`nvls`): the switch reduces and multicasts, so every NPU moves its data over its
// own link once (see README.md, "NVLS").
#include <algorithm>
#include <memory>

#include "system/packet_algorithm.h"

namespace orrery {
namespace {

// One message per NPU, of the larger of the phase's input and output: the switch reads every
// NPU's input once and writes every NPU's output once, so the busier direction of each NPU's
// link carries max(input, output) bytes. The message goes to the ring successor only to load
// the links as the switch does (up on this NPU's link, down on another's); the reduction happens
// in the switch, so nothing is reduced on the NPU. Two hand-offs: the send and the receipt.
class NvlsPhase final : public PacketPhase {
 public:
  NvlsPhase(Stream& stream, const PhaseSpec& p) : PacketPhase(stream, p) {
    final_size_ = PhaseFinalSize(p);
    sends_left_ = p.ring_size > 1 ? 1 : 0;
    msg_size_ = std::max(p.data_size, final_size_);
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
