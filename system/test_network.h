// For system-layer tests: a network that delivers every message after exactly
// `latency + size / bandwidth` of the lowest dimension its two ends differ in (whole ns, no
// contention), so expected times are sums of per-message delays; it records what was sent.
//
//   Simulation sim;
//   FixedDelayNetwork net(sim, topology);
//   SystemLayer sys(sim, net, params);
//   Done done;  done.sim = &sim;
//   sys.npu(0).StartCollective(req, &done, 0);  sim.Run();  // done.at[0], net.sent[0]
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/event_queue.h"
#include "network/network.h"
#include "system/collective_engine.h"

namespace orrery {

class FixedDelayNetwork : public Network, public EventTarget {
 public:
  FixedDelayNetwork(Simulation& sim, Topology topo)
      : sent(topo.num_npus()), sim_(sim), topo_(std::move(topo)) {}
  int num_npus() const override { return topo_.num_npus(); }
  const Topology& topology() const override { return topo_; }
  void Send(int src, int dst, Bytes size, DeliveryHandler* h, uint64_t token) override {
    const Dimension& d = topo_.dims[topo_.FirstDifferingDim(src, dst)];
    pending_.push_back({h, token});
    sim_.ScheduleAfter(Delay(d, size.count()), this, pending_.size() - 1);
    sent[src].push_back({dst, size.count()});
    ++messages;
  }
  void OnEvent(uint64_t i) override { pending_[i].first->OnDelivered(pending_[i].second); }
  static Time Delay(const Dimension& d, uint64_t bytes) {
    return Time::FromNs((d.latency + Bytes(bytes) / d.bandwidth).WholeNs());
  }

  std::vector<std::vector<std::pair<int, uint64_t>>> sent;  // per source: (dst, bytes)
  int messages = 0;

 private:
  Simulation& sim_;
  Topology topo_;
  std::vector<std::pair<DeliveryHandler*, uint64_t>> pending_;
};

// A ring dimension of `n` NPUs with links of `gibps` GiB/s and `lat_ns` ns.
inline Dimension RingDimension(int n, double gibps, int64_t lat_ns) {
  Dimension d;
  d.type = BlockType::kRing;
  d.npus = n;
  d.bandwidth = Bandwidth::FromGiBps(gibps);
  d.latency = Time::FromNs(lat_ns);
  return d;
}

// Records when each collective it hears about finished.
struct Done : CollectiveListener {
  Simulation* sim = nullptr;
  std::vector<Time> at;
  void OnCollectiveDone(uint64_t) override { at.push_back(sim->now()); }
};

}  // namespace orrery
