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
#include "common/status.h"
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

// What RunOnEveryNpu saw: when each NPU's collective finished (whole ns; -1 = it did not finish
// exactly once) and, per NPU, every message it sent as (destination, bytes).
struct CollectiveRun {
  std::vector<int64_t> ns;
  std::vector<std::vector<std::pair<int, uint64_t>>> sent;
  uint64_t Bytes(int npu) const {
    uint64_t b = 0;
    for (const auto& m : sent[npu]) b += m.second;
    return b;
  }
};

// Starts `req` on every NPU of a fresh system layer over a FixedDelayNetwork of `topo` and runs
// the simulation to its end; the first NPU's start error is returned instead.
inline StatusOr<CollectiveRun> RunOnEveryNpu(const Topology& topo, const SystemParams& params,
                                             const CollectiveRequest& req) {
  Simulation sim;
  FixedDelayNetwork net(sim, topo);
  SystemLayer sys(sim, net, params);
  std::vector<Done> done(topo.num_npus());
  for (int i = 0; i < topo.num_npus(); ++i) {
    done[i].sim = &sim;
    const Status s = sys.npu(i).StartCollective(req, &done[i], 0);
    if (!s.ok()) return s;
  }
  sim.Run();
  CollectiveRun r;
  for (const Done& d : done) r.ns.push_back(d.at.size() == 1 ? d.at[0].WholeNs() : -1);
  r.sent = net.sent;
  return r;
}

// The same for a world collective of `type` and `size` bytes.
inline StatusOr<CollectiveRun> RunOnEveryNpu(const Topology& topo, const SystemParams& params,
                                             CollectiveType type, uint64_t size) {
  CollectiveRequest req;
  req.type = type;
  req.size = size;
  return RunOnEveryNpu(topo, params, req);
}

}  // namespace orrery
