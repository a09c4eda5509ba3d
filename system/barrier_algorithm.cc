// The barrier: dissemination in ceil(log2 n) rounds of 1-byte messages (see README.md,
// "Collectives beyond ASTRA-sim").
#include <memory>

#include "system/collective_engine.h"

namespace orrery {
namespace {

// Round k: hand off (endpoint-delay), send 1 byte to the member 2^k places ahead and wait for the
// byte from the member 2^k places behind and for the own byte's arrival; hand the received byte
// off (endpoint-delay); next round. After round k every member has heard, directly or not, from
// the 2^(k+1) - 1 members behind it, so after ceil(log2 n) rounds from all of them.
class BarrierPhase final : public PhaseAlgorithm {
 public:
  BarrierPhase(Stream& stream, const PhaseSpec& p) : stream_(stream), p_(p) {}
  void Start() override { StartRound(); }
  void OnBundleDone() override {
    if (!receiving_) {
      stream_.SendToPeer(p_.MemberAt(1 << round_), kBytes, /*notify=*/true);
      stream_.ReceiveFromPeer(p_.MemberAt(-(1 << round_)), kBytes);
      return;
    }
    receiving_ = false;
    ++round_;
    StartRound();
  }
  void OnReceived() override {
    received_ = true;
    MaybeEndRound();
  }
  void OnSent() override {
    sent_ = true;
    MaybeEndRound();
  }
  uint64_t final_size() const override { return 0; }

 private:
  static constexpr uint64_t kBytes = 1;
  void StartRound() {
    if ((1 << round_) >= p_.ring_size) return stream_.PhaseFinished();
    sent_ = received_ = false;
    stream_.HandOff(kBytes, /*reduce=*/false);
  }
  void MaybeEndRound() {
    if (!sent_ || !received_) return;
    receiving_ = true;
    stream_.HandOff(kBytes, /*reduce=*/false);
  }

  Stream& stream_;
  const PhaseSpec p_;
  int round_ = 0;
  bool sent_ = false;
  bool received_ = false;
  bool receiving_ = false;
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeBarrierPhase(Stream& stream, const PhaseSpec& phase) {
  return std::make_unique<BarrierPhase>(stream, phase);
}

}  // namespace orrery
