// ASTRA-sim 2.0's congestion-unaware analytical network: every message takes a fixed,
// closed-form time, whatever else is in flight.
//
//   Simulation sim;
//   AnalyticalUnawareNetwork net(sim, topology);
//   net.Send(/*src=*/0, /*dst=*/3, Bytes(65536), &handler, /*token=*/7);
//   sim.Run();   // handler.OnDelivered(7) ran at net.Delay(0, 3, Bytes(65536))
//
// delay_ns = trunc(hops * latency_ns + size_bytes / bw_bytes_per_ns) in the one dimension in
// which src and dst differ. A message whose addresses differ in several dimensions crosses
// each (Send), except a message the trace names itself (SendTraceMessage), which ASTRA-sim
// charges the lowest differing dimension alone (see network/README.md).
#pragma once

#include <cstdint>
#include <string>
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
  // As ASTRA-sim's unaware backend times it: in the lowest dimension in which src and dst differ,
  // whatever other dimensions they differ in. `piece` is ignored (nothing is stored at relays).
  void SendTraceMessage(int src, int dst, Bytes size, uint64_t piece, DeliveryHandler* handler,
                        uint64_t token) override;
  std::vector<std::string> Warnings(Time end) const override;

  // A message's time depends only on its two ends' coordinates in their lowest differing
  // dimension: any symmetry that keeps hop counts (runner/symmetry.h adds no generator on a Mesh
  // and rotations only on a Ring) leaves it alike.
  bool UseSymmetry(const NpuSymmetry& symmetry) override;

  // How a message between NPUs whose addresses differ in several dimensions is timed.
  enum class Crossing {
    kEveryDimension,   // every differing dimension's hops, its bytes at the slowest (Send)
    kLowestDimension,  // the lowest differing dimension alone (ASTRA-sim; SendTraceMessage)
  };
  // Hops ASTRA-sim counts between `src` and `dst` in their lowest differing dimension.
  int Hops(int src, int dst) const;
  // The whole-ns delay a message of `size` bytes takes from `src` to `dst` (src != dst), and
  // its serialization time in ns (before truncation) when `serialization` is given.
  Time Delay(int src, int dst, Bytes size, double* serialization = nullptr,
             Crossing crossing = Crossing::kEveryDimension) const;

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
    Crossing crossing = Crossing::kEveryDimension;
    Time delay;
    double serialization_ns = 0;
    bool narrowed = false;  // several dimensions differ and the lowest alone was charged
  };
  // Trace messages between NPUs that differ in several dimensions, charged the lowest alone.
  struct Narrowed {
    uint64_t messages = 0;
    int first_src = -1;
    int first_dst = -1;
    uint64_t first_size = 0;
  };
  // A message between Send and delivery; recycled through `in_flight_`.
  struct InFlight {
    DeliveryHandler* handler;
    uint64_t token;
  };

  void Schedule(int src, int dst, Bytes size, Crossing crossing, DeliveryHandler* handler,
                uint64_t token);
  void OnEvent(uint64_t slot) override;
  // How many dimensions the addresses of `src` and `dst` differ in.
  int DifferingDims(int src, int dst) const;
  // (lowest differing dimension, hops in it); (-1, 0) when src == dst.
  std::pair<int, int> DimAndHops(int src, int dst) const;
  // Hops from coordinate `ca` to `cb` (ca != cb) along one dimension.
  static int HopsIn(const Dim& dim, int ca, int cb);

  Simulation& sim_;
  Topology topology_;
  int num_npus_;
  std::vector<Dim> dims_;
  ZeroTimeBytes zero_time_;  // noted by Send
  Narrowed narrowed_;
  SlotPool<InFlight> in_flight_;
  // Per sender, by NPU id modulo its size (4096 entries: 128 KiB whatever the machine).
  std::vector<LastSend> last_ = std::vector<LastSend>(4096);
};

}  // namespace orrery
