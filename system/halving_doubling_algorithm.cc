// The halving-doubling algorithm (`halvingDoubling`, `oneHalvingDoubling`), see README.md.
#include <memory>

#include "system/packet_algorithm.h"

namespace orrery {
namespace {

int Log2(int n) {
  int l = 0;
  while ((1 << (l + 1)) <= n) ++l;
  return l;
}

// On a ring of n = 2^L NPUs, message k is exchanged with the member `offset` places away:
// clockwise when (index / offset) is even, anticlockwise otherwise (so the pair is
// index XOR offset). Reduce-scatter: offsets 1, 2, ..., n/2 with D/2, D/4, ..., D/n. All-gather:
// offsets n/2, ..., 1 with D, 2D, ..., (n/2)D. All-reduce: the reduce-scatter sequence, then
// back again (offsets n/2..1, sizes doubling from the smallest). One message at a time; rounds
// are one injected hand-off and L-1 from the network, each hand-off sized (and reduced) as the
// message it releases.
class HalvingDoublingPhase final : public PacketPhase {
 public:
  HalvingDoublingPhase(Stream& stream, const PhaseSpec& p) : PacketPhase(stream, p) {
    const uint64_t n = static_cast<uint64_t>(p.ring_size);
    log_n_ = Log2(p.ring_size);
    switch (p.type) {
      case CollectiveType::kAllReduce:
        sends_left_ = 2 * log_n_;
        msg_size_ = p.data_size / 2;
        final_size_ = p.data_size;
        offset_ = 1;
        break;
      case CollectiveType::kAllGather:
        sends_left_ = log_n_;
        msg_size_ = p.data_size;
        final_size_ = p.data_size * n;
        offset_ = p.ring_size / 2;
        growing_ = false;
        break;
      default:  // reduce-scatter (all-to-all is rejected before a phase is built)
        sends_left_ = log_n_;
        msg_size_ = p.data_size / 2;
        final_size_ = p.data_size / n;
        offset_ = 1;
        break;
    }
    SetPeer();
  }

 private:
  int NetworkPacketsPerRound() const override { return log_n_ - 1; }
  void AfterInsert() override {
    if (growing_) {
      offset_ *= 2;
      msg_size_ /= 2;
      if (offset_ == phase_.ring_size && phase_.type == CollectiveType::kAllReduce) {
        // Turn round: the all-gather half starts at the largest distance.
        growing_ = false;
        offset_ /= 2;
        msg_size_ *= 2;
      }
    } else {
      offset_ /= 2;
      msg_size_ *= 2;
    }
    SetPeer();
  }
  void SetPeer() {
    const bool clockwise = offset_ == 0 || (phase_.index / offset_) % 2 == 0;
    dst_ = src_ = phase_.MemberAt(clockwise ? offset_ : -offset_);
  }

  int log_n_ = 0;
  int offset_ = 1;
  bool growing_ = true;
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeHalvingDoublingPhase(Stream& stream, const PhaseSpec& phase) {
  return std::make_unique<HalvingDoublingPhase>(stream, phase);
}

}  // namespace orrery
