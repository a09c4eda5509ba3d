// NVLink SHARP (`nvls`): the switch reduces and multicasts, so every NPU moves its data over its
// own link once (see README.md, "NVLS").
#include <algorithm>
#include <cstdint>
#include <memory>

#include "system/packet_algorithm.h"

namespace orrery {
namespace {

// One message per NPU, to its ring successor, sized to load the links as the switch does. The
// switch reads every NPU's input once (up its link) and writes every NPU's output once (down
// its link); NVLink is full duplex, so a collective takes as long as its busier direction
// (README.md, "NVLS", with NCCL's own accounting). Per NPU, for a phase of input D on n NPUs:
//   all-reduce: D + D/n each way (up: D read for the reduction, D/n of result multicast; down:
//     D/n reduced, D multicast), so D + D/n;
//   reduce-scatter (up D, down D/n) or all-gather (up D/n, down D) on its own: the busier
//     direction, D;
//   the reduce-scatter and all-gather of one all-reduce (NVLS-tree: around the inter-node
//     step): (D + D/n) / 2 each, so that the pair loads each direction with D + D/n, as it does.
// A message between NPUs loads the sender's up link and the receiver's down link with the same
// bytes; the quieter direction is over-loaded only where nothing else wants it. The reduction
// happens in the switch, so nothing is reduced on the NPU. Two hand-offs: the send and the
// receipt.
uint64_t NvlsMessageSize(const PhaseSpec& p) {
  const uint64_t n = static_cast<uint64_t>(p.ring_size);
  const uint64_t in = p.data_size;
  const uint64_t out = PhaseFinalSize(p);
  if (p.type == CollectiveType::kAllReduce) return in + in / n;
  if (p.collective == CollectiveType::kAllReduce) return (in + out) / 2;
  return std::max(in, out);
}

class NvlsPhase final : public PacketPhase {
 public:
  NvlsPhase(Stream& stream, const PhaseSpec& p) : PacketPhase(stream, p) {
    final_size_ = PhaseFinalSize(p);
    sends_left_ = p.ring_size > 1 ? 1 : 0;
    msg_size_ = NvlsMessageSize(p);
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
