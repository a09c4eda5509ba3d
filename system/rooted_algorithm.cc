// Broadcast and reduce as binomial trees or as NCCL's ring, gather and scatter direct to and from
// the root (see README.md, "Collectives beyond ASTRA-sim"). The members are numbered relative to
// the root: v = (index - root) mod n, so the root is v = 0.
#include <algorithm>
#include <memory>

#include "system/collective_engine.h"

namespace orrery {
namespace {

int HighestBit(int v) {
  int b = 0;
  while ((v >> (b + 1)) != 0) ++b;
  return b;
}

int LowestBit(int v) {
  int b = 0;
  while (((v >> b) & 1) == 0) ++b;
  return b;
}

class RootedPhase : public PhaseAlgorithm {
 public:
  uint64_t final_size() const override { return p_.data_size; }

 protected:
  RootedPhase(Stream& stream, const PhaseSpec& p)
      : stream_(stream), p_(p), n_(p.ring_size), v_((p.index - p.root + n_) % n_) {}
  // NPU id of the member `v` places after the root.
  int At(int v) const { return p_.Member((v + p_.root) % n_); }

  Stream& stream_;
  const PhaseSpec p_;
  const int n_;
  const int v_;
};

// Binomial broadcast: v != 0 receives D from v - 2^h (h = its highest bit), then forwards it to
// v + 2^j for j = h+1, h+2, ... while that is < n; the root sends to 1, 2, 4, ... One send at a
// time: hand-off (endpoint-delay), then the network; the next starts when it has arrived. A
// received message is handed off (endpoint-delay) before it is forwarded.
class BroadcastPhase final : public RootedPhase {
 public:
  BroadcastPhase(Stream& stream, const PhaseSpec& p) : RootedPhase(stream, p) {
    next_bit_ = v_ == 0 ? 0 : HighestBit(v_) + 1;
  }
  void Start() override {
    if (v_ == 0) return SendNext();
    stream_.ReceiveFromPeer(At(v_ - (1 << HighestBit(v_))), p_.data_size);
  }
  void OnReceived() override { stream_.HandOff(p_.data_size, /*reduce=*/false); }
  void OnBundleDone() override {
    if (sending_) {
      stream_.SendToPeer(At(v_ + (1 << next_bit_++)), p_.data_size, /*notify=*/true);
    } else {
      SendNext();
    }
  }
  void OnSent() override {
    sending_ = false;
    SendNext();
  }

 private:
  void SendNext() {
    if (next_bit_ < 31 && v_ + (1 << next_bit_) < n_) {
      sending_ = true;
      stream_.HandOff(p_.data_size, /*reduce=*/false);
    } else {
      stream_.PhaseFinished();
    }
  }
  int next_bit_ = 0;
  bool sending_ = false;
};

// Binomial reduce, the broadcast mirrored: v receives D from v + 2^k for every k below its
// lowest set bit (every k for the root) while v + 2^k < n, reducing each (endpoint-delay +
// reduction) one at a time in arrival order, then sends the result to v - 2^(lowest bit).
class ReducePhase final : public RootedPhase {
 public:
  ReducePhase(Stream& stream, const PhaseSpec& p) : RootedPhase(stream, p) {
    const int limit = v_ == 0 ? 31 : LowestBit(v_);
    for (int k = 0; k < limit && v_ + (1 << k) < n_; ++k) ++children_;
  }
  void Start() override {
    for (int k = 0; k < children_; ++k) stream_.ReceiveFromPeer(At(v_ + (1 << k)), p_.data_size);
    if (children_ == 0) SendUp();
  }
  void OnReceived() override {
    ++arrived_;
    if (!busy_) ProcessNext();
  }
  void OnBundleDone() override {
    if (sending_) {
      stream_.SendToPeer(At(v_ - (1 << LowestBit(v_))), p_.data_size, /*notify=*/true);
      return;
    }
    busy_ = false;
    ++reduced_;
    if (reduced_ < arrived_) return ProcessNext();
    if (reduced_ == children_) SendUp();
  }
  void OnSent() override { stream_.PhaseFinished(); }

 private:
  void ProcessNext() {
    busy_ = true;
    stream_.HandOff(p_.data_size, /*reduce=*/true);
  }
  void SendUp() {
    if (v_ == 0) return stream_.PhaseFinished();
    sending_ = true;
    stream_.HandOff(p_.data_size, /*reduce=*/false);
  }
  int children_ = 0;
  int arrived_ = 0;
  int reduced_ = 0;
  bool busy_ = false;
  bool sending_ = false;
};

// NCCL's ring broadcast and reduce: a pipeline along the ring. Broadcast runs from the root
// (v = 0, 1, ..., n-1), reduce from the member after the root to the root (v = 1, ..., n-1, 0),
// as NCCL's ring kernels do. The chunk is cut into slices of at most kRingSliceBytes (NCCL's
// Simple step: its 4 MiB buffer over 8 steps) and at least kRingSlicesPerMember per member. The
// second bound is a modelling choice: NCCL's LL and LL128 carry a flag per line, so a GPU can
// forward data as it arrives and, where a chunk holds few Simple steps, the pipeline fills faster
// than step by step. With k slices a chunk takes (k + n - 2)/k of its own time: with n slices
// (2n - 2)/n, with 4n a fifth more on 8 GPUs (README.md, "Broadcast and reduce", has the
// alternatives tried). The first member hands off every slice (endpoint-delay) and sends each
// when it is handed off; every other member receives each slice, hands it off (reduce:
// endpoint-delay plus its reduction), and the last one keeps it while the others send it on to
// the next member as soon as it is handed off. A member is done when it has sent every slice and
// each has arrived (the last member: when it has handed off every slice).
class RingRootedPhase final : public RootedPhase {
 public:
  static constexpr uint64_t kRingSliceBytes = 512 << 10;
  static constexpr uint64_t kRingSlicesPerMember = 4;

  RingRootedPhase(Stream& stream, const PhaseSpec& p)
      : RootedPhase(stream, p),
        reduce_(p.type == CollectiveType::kReduce),
        g_(p.rooted_ring_node > 1 && n_ % p.rooted_ring_node == 0 ? p.rooted_ring_node : n_),
        c_(stream.id()) {
    const int from_root = (RingPosition(p.index) - RingPosition(p.root) + n_) % n_;
    pos_ = reduce_ ? (from_root + n_ - 1) % n_ : from_root;
    const uint64_t d = std::max<uint64_t>(p.data_size, 1);
    const uint64_t by_step = (d + kRingSliceBytes - 1) / kRingSliceBytes;
    const uint64_t at_least = kRingSlicesPerMember * static_cast<uint64_t>(n_);
    slices_ = std::min<uint64_t>(std::max<uint64_t>(by_step, at_least), d);
  }
  void Start() override {
    for (uint64_t i = 0; i < slices_; ++i) {
      if (pos_ == 0) {
        stream_.HandOff(SliceSize(i), /*reduce=*/false);
      } else {
        stream_.ReceiveFromPeer(AtPosition(pos_ - 1), SliceSize(i));
      }
    }
  }
  void OnReceived() override { stream_.HandOff(SliceSize(received_++), reduce_); }
  void OnBundleDone() override {
    const uint64_t i = handed_++;
    if (pos_ == n_ - 1) {
      if (handed_ == slices_) stream_.PhaseFinished();
      return;
    }
    stream_.SendToPeer(AtPosition(pos_ + 1), SliceSize(i), /*notify=*/true);
  }
  void OnSent() override {
    if (++sent_ == slices_) stream_.PhaseFinished();
  }

 private:
  uint64_t SliceSize(uint64_t i) const {
    const uint64_t d = std::max<uint64_t>(p_.data_size, 1);
    const uint64_t base = d / slices_;
    return i + 1 == slices_ ? d - base * (slices_ - 1) : base;
  }
  // The ring of chunk (channel) c_: nodes of g_ members in order, and inside each node the ring
  // starts at its local member c_ (channelRing's rotation; with one node, the members' order).
  int RingPosition(int index) const {
    return (index / g_) * g_ + ((index % g_) - c_ % g_ + g_) % g_;
  }
  int IndexAt(int position) const { return (position / g_) * g_ + (position % g_ + c_) % g_; }
  // NPU id of the member at position `pos` along the pipeline: the ring from the root onwards
  // (reduce: from the member after the root, the root last).
  int AtPosition(int pos) const {
    const int from_root = reduce_ ? (pos + 1) % n_ : pos;
    return p_.Member(IndexAt((RingPosition(p_.root) + from_root) % n_));
  }

  const bool reduce_;
  const int g_;  // members per node of the rotated rings (n_: one ring in member order)
  const int c_;  // the chunk: NCCL's channel
  int pos_ = 0;  // 0 = the first sender, n - 1 = the last receiver
  uint64_t slices_ = 1;
  uint64_t received_ = 0;
  uint64_t handed_ = 0;
  uint64_t sent_ = 0;
};

// Gather: every other member hands off its D and sends it straight to the root; the root hands
// each arrival off (endpoint-delay, concurrently) and is done when all n-1 are in.
class GatherPhase final : public RootedPhase {
 public:
  GatherPhase(Stream& stream, const PhaseSpec& p) : RootedPhase(stream, p) {}
  void Start() override {
    if (v_ != 0) return stream_.HandOff(p_.data_size, /*reduce=*/false);
    for (int v = 1; v < n_; ++v) stream_.ReceiveFromPeer(At(v), p_.data_size);
  }
  void OnReceived() override { stream_.HandOff(p_.data_size, /*reduce=*/false); }
  void OnBundleDone() override {
    if (v_ != 0) return stream_.SendToPeer(At(0), p_.data_size, /*notify=*/true);
    if (++handled_ == n_ - 1) stream_.PhaseFinished();
  }
  void OnSent() override { stream_.PhaseFinished(); }
  uint64_t final_size() const override {
    return v_ == 0 ? p_.data_size * static_cast<uint64_t>(n_) : p_.data_size;
  }

 private:
  int handled_ = 0;
};

// Scatter: the root hands off the n-1 pieces of D (concurrently) and sends piece v to member v,
// in order v = 1..n-1; it is done when all have arrived. Each other member receives its piece and
// hands it off (endpoint-delay).
class ScatterPhase final : public RootedPhase {
 public:
  ScatterPhase(Stream& stream, const PhaseSpec& p) : RootedPhase(stream, p) {}
  void Start() override {
    if (v_ != 0) return stream_.ReceiveFromPeer(At(0), p_.data_size);
    for (int v = 1; v < n_; ++v) stream_.HandOff(p_.data_size, /*reduce=*/false);
  }
  void OnReceived() override { stream_.HandOff(p_.data_size, /*reduce=*/false); }
  void OnBundleDone() override {
    if (v_ != 0) return stream_.PhaseFinished();
    stream_.SendToPeer(At(++handed_), p_.data_size, /*notify=*/true);
  }
  void OnSent() override {
    if (++arrived_ == n_ - 1) stream_.PhaseFinished();
  }

 private:
  int handed_ = 0;
  int arrived_ = 0;
};

}  // namespace

std::unique_ptr<PhaseAlgorithm> MakeRootedPhase(Stream& stream, const PhaseSpec& phase) {
  if (phase.rooted_ring &&
      (phase.type == CollectiveType::kBroadcast || phase.type == CollectiveType::kReduce)) {
    return std::make_unique<RingRootedPhase>(stream, phase);
  }
  switch (phase.type) {
    case CollectiveType::kBroadcast:
      return std::make_unique<BroadcastPhase>(stream, phase);
    case CollectiveType::kReduce:
      return std::make_unique<ReducePhase>(stream, phase);
    case CollectiveType::kGather:
      return std::make_unique<GatherPhase>(stream, phase);
    default:
      return std::make_unique<ScatterPhase>(stream, phase);
  }
}

}  // namespace orrery
