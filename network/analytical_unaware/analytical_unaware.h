// ASTRA-sim 2.0's congestion-unaware analytical network: every message takes a fixed,
// closed-form time, whatever else is in flight.
//
//   Simulation sim;
//   AnalyticalUnawareNetwork net(sim, topology);
//   net.Send(/*src=*/0, /*dst=*/3, Bytes(65536), &handler, /*token=*/7);
//   sim.Run();   // handler.OnDelivered(7) ran at net.Delay(0, 3, Bytes(65536))
//
// delay_ns = trunc(hops * latency_ns + size_bytes / bw_bytes_per_ns), using only the lowest
// dimension in which src and dst differ (see network/README.md).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/event_queue.h"
#include "common/slot_pool.h"
#include "common/units.h"
#include "network/network.h"

namespace orrery {

class AnalyticalUnawareNetwork final : public Network, private EventTarget {
 public:
  AnalyticalUnawareNetwork(Simulation& sim, Topology topology);

  int num_npus() const override { return num_npus_; }
  const Topology& topology() const override { return topology_; }
  void Send(int src, int dst, Bytes size, DeliveryHandler* handler, uint64_t token) override;
  std::vector<std::string> Warnings(Time end) const override {
    return zero_time_.Warning("analytical-unaware", end);
  }

  // A message's time depends only on its two ends' coordinates in their lowest differing
  // dimension: any symmetry that keeps hop counts (runner/symmetry.h adds no generator on a Mesh
  // and rotations only on a Ring) leaves it alike.
  bool UseSymmetry(const NpuSymmetry& symmetry) override;

  // Hops ASTRA-sim counts between `src` and `dst` in their lowest differing dimension.
  int Hops(int src, int dst) const;
  // The whole-ns delay a message of `size` bytes takes from `src` to `dst` (src != dst), and
  // its serialization time in ns (before truncation) when `serialization` is given.
  Time Delay(int src, int dst, Bytes size, double* serialization = nullptr) const;

 private:
  struct Dim {
    BlockType type;
    int npus;
    double latency_ns;    // per hop
    double bytes_per_ns;  // per link
    // The last message size seen on this dimension and its serialization time in ns:
    // collectives repeat sizes, and the division is the slowest step of a send. It starts as
    // size 0's (0.0 ns): every size has real delays (a UINT64_MAX sentinel took no time).
    mutable uint64_t cached_size;
    mutable double cached_serialization_ns;
  };
  // The delay of a sender's last message (Send), and its serialization time in ns.
  struct LastSend {
    int src = -1;
    int dst = -1;
    uint64_t size = 0;
    Time delay;
    double serialization_ns = 0;
  };
  // A message between Send and delivery; recycled through `in_flight_`.
  struct InFlight {
    DeliveryHandler* handler;
    uint64_t token;
  };

  void OnEvent(uint64_t slot) override;
  // (lowest differing dimension, hops in it); (-1, 0) when src == dst.
  std::pair<int, int> DimAndHops(int src, int dst) const;
  // Hops from coordinate `ca` to `cb` (ca != cb) along one dimension.
  static int HopsIn(const Dim& dim, int ca, int cb);

  Simulation& sim_;
  Topology topology_;
  int num_npus_;
  std::vector<Dim> dims_;
  ZeroTimeBytes zero_time_;  // noted by Send
  SlotPool<InFlight> in_flight_;
  // Per sender, by NPU id modulo its size (4096 entries: 128 KiB whatever the machine).
  std::vector<LastSend> last_ = std::vector<LastSend>(4096);
};

}  // namespace orrery
