// The direct algorithm (`direct`, `direct<N>`, `oneDirect`): every NPU talks to every other one
// of its ring, up to a window of messages at a time (see README.md, "Direct").
#include <algorithm>
#include <memory>

#include "system/packet_algorithm.h"

namespace orrery {
namespace {

// Message k goes to the member k+1 places ahead in the phase's direction (skipping this NPU
// when wrapping round) and the matching one comes from the member k+1 places behind. Sizes and
// reductions are the ring's; the window is n-1 messages (or min(N, n-1) for direct<N>), and
// rounds are `window` injected hand-offs followed by `window` from the network. In an
// all-reduce the second half (the last n-1 sends) starts only once n-1 messages have arrived.
class DirectPhase final : public PacketPhase {
 public:
  DirectPhase(Stream& stream, const PhaseSpec& p) : PacketPhase(stream, p) {
    const int n = p.ring_size;
    const uint64_t un = static_cast<uint64_t>(n);
    parallel_ = p.algorithm.window < 0 ? n - 1 : std::min(p.algorithm.window, n - 1);
    switch (p.type) {
      case CollectiveType::kAllReduce:
        sends_left_ = 2 * (n - 1);
        msg_size_ = p.data_size / un;
        final_size_ = p.data_size;
        break;
      case CollectiveType::kAllGather:
        sends_left_ = n - 1;
        msg_size_ = p.data_size;
        final_size_ = p.data_size * un;
        break;
      case CollectiveType::kReduceScatter:
        sends_left_ = n - 1;
        msg_size_ = p.data_size / un;
        final_size_ = p.data_size / un;
        break;
      default:  // all-to-all
        sends_left_ = n - 1;
        msg_size_ = p.data_size / un;
        final_size_ = p.data_size;
        break;
    }
    step_ = p.clockwise ? 1 : -1;
    dst_ = p.MemberAt(step_);
    src_ = p.MemberAt(-step_);
  }

  void OnBundleDone() override {
    ++free_;
    const int half = phase_.ring_size - 1;
    if (phase_.type == CollectiveType::kAllReduce && sends_left_ <= half) {
      if (received_ < half) return;
      for (int i = 0; i < parallel_; ++i) Ready();
    } else {
      Ready();
    }
    CheckDone();
  }

 private:
  int NetworkPacketsPerRound() const override { return parallel_; }
  void AfterInsert() override {
    // Next peer in each direction, never this NPU itself.
    hops_ = hops_ % (phase_.ring_size - 1) + 1;
    dst_ = phase_.MemberAt(step_ * hops_);
    src_ = phase_.MemberAt(-step_ * hops_);
  }

  int step_ = 1;
  int hops_ = 1;  // distance of the current peers
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeDirectPhase(Stream& stream, const PhaseSpec& phase) {
  return std::make_unique<DirectPhase>(stream, phase);
}

}  // namespace orrery
