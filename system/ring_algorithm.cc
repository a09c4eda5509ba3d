// The ring algorithm, message by message (see README.md, "Ring").
#include <memory>

#include "system/collective_engine.h"

namespace orrery {
namespace {

// One phase of one chunk on a logical ring of n NPUs. The NPU sends to `receiver` and receives
// from `sender`. Messages are released in rounds of n: the first of a round is injected from
// the NPU (no reduction), the other n-1 come from the network; in an all-reduce the first
// round's received messages are reduced, in a reduce-scatter all are.
class RingPhase final : public PhaseAlgorithm {
 public:
  RingPhase(Stream& stream, const PhaseSpec& p) : stream_(stream), phase_(p) {
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
  }

  void Start() override { InsertMessage(); }
  void OnReceived() override { InsertMessage(); }
  void OnBundleDone() override {
    ++free_slots_;
    if (queued_ > 0 && sends_left_ > 0 && free_slots_ > 0) {
      stream_.SendToPeer(phase_.receiver, msg_size_);
      stream_.ReceiveFromPeer(phase_.sender, msg_size_);
      --sends_left_;
      --queued_;
      --free_slots_;
    }
    if (sends_left_ == 0 && free_slots_ == 1) stream_.PhaseFinished();
  }
  uint64_t final_size() const override { return final_size_; }

 private:
  void InsertMessage() {
    if (injected_left_ == 0 && received_left_ == 0) {
      injected_left_ = 1;
      received_left_ = phase_.ring_size - 1;
      first_round_ = !first_round_;
    }
    ++queued_;
    if (injected_left_ > 0) {
      --injected_left_;
      stream_.HandOff(msg_size_, /*reduce=*/false);
      return;
    }
    --received_left_;
    const bool reduce = phase_.type == CollectiveType::kReduceScatter ||
                        (phase_.type == CollectiveType::kAllReduce && first_round_);
    stream_.HandOff(msg_size_, reduce);
  }

  Stream& stream_;
  const PhaseSpec phase_;
  int sends_left_ = 0;
  uint64_t msg_size_ = 0;
  uint64_t final_size_ = 0;
  int queued_ = 0;      // messages handed to the algorithm, not yet sent on
  int free_slots_ = 0;  // hand-offs completed minus messages sent
  int injected_left_ = 0;
  int received_left_ = 0;
  bool first_round_ = false;
};

}  // namespace

uint64_t PhaseFinalSize(const PhaseSpec& p) {
  const uint64_t n = static_cast<uint64_t>(p.ring_size);
  switch (p.type) {
    case CollectiveType::kAllGather:
      return p.data_size * n;
    case CollectiveType::kReduceScatter:
      return p.data_size / n;
    default:
      return p.data_size;
  }
}

std::unique_ptr<PhaseAlgorithm> MakePhaseAlgorithm(Stream& stream, const PhaseSpec& phase) {
  return std::make_unique<RingPhase>(stream, phase);
}

}  // namespace orrery
