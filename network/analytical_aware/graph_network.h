// The congestion-aware model over an explicit graph (network/graph.h): DGX-style fat-trees and
// custom topology files.
//
//   Simulation sim;
//   GraphNetwork net(sim, topology);           // topology.graph set, routes built
//   net.Send(/*src=*/0, /*dst=*/9, Bytes(4096), &handler, /*token=*/7);
//   sim.Run();                                  // handler.OnDelivered(7) at the arrival time
//
// The same link model as AnalyticalAwareNetwork: each message is one chunk, store-and-forward,
// per link busy trunc(size / bw) ns and arriving trunc(latency + size / bw) ns after it starts,
// FIFO per link. The route is the graph's: shortest in hops, deterministic ECMP. With
// Options::pipeline_mtu a chunk moves on as soon as its first packet is in (forwarding.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/event_queue.h"
#include "common/slot_pool.h"
#include "common/units.h"
#include "network/analytical_aware/forwarding.h"
#include "network/graph.h"
#include "network/network.h"

namespace orrery {

class GraphNetwork final : public Network, private EventTarget {
 public:
  struct Options {
    uint64_t pipeline_mtu = 0;  // 0: store-and-forward; > 0: pipelined in packets of this size
  };

  GraphNetwork(Simulation& sim, Topology topology) : GraphNetwork(sim, std::move(topology), {}) {}
  GraphNetwork(Simulation& sim, Topology topology, Options options);

  int num_npus() const override { return graph_->num_npus; }
  const Topology& topology() const override { return topology_; }
  void Send(int src, int dst, Bytes size, DeliveryHandler* handler, uint64_t token) override;
  std::vector<std::string> Warnings(Time end) const override {
    return zero_time_.Warning("analytical-aware", end);
  }
  // Each piece stored and forwarded, or pipelined in packets when the network pipelines
  // smaller ones: a chunk whose packets are min(pipeline_mtu, piece) bytes.
  void SendInPieces(int src, int dst, Bytes size, uint64_t piece, DeliveryHandler* handler,
                    uint64_t token) override;
  // Every link of the graph, in the graph's order, named "<from>-><to>" (a parallel link gets
  // "#2", "#3", ... appended).
  std::vector<LinkStats> Links() const override;
  void ScaleLinkBandwidths(const std::vector<size_t>& indices, double scale) override;
  // The graph's routes (PhysicalGraph::Route) and each link's bandwidth (slowed or not) and
  // latency: the network keeps no state but its links'.
  std::optional<std::vector<int64_t>> RouteSignature(
      const std::vector<int>& members) const override;

  size_t in_flight() const { return chunks_.in_use(); }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;

  struct Link {
    IndexFifo waiting;  // chunks waiting for the link (a lane of it)
    bool busy = false;
    Time latency;         // as given, for pipelined forwarding
    Bandwidth bandwidth;  // as given, for pipelined forwarding
    uint64_t bytes = 0;
    int64_t busy_ps = 0;
    StoreAndForwardDelays delays;  // for the last message size it carried
  };

  struct Chunk {
    DeliveryHandler* handler;
    uint64_t token;
    uint64_t size;
    int32_t src;
    int32_t dst;
    int32_t at;     // the device the chunk is at (or leaving)
    uint32_t link;  // the link it is on or waiting for
    uint32_t next = kNone;
    PacketTrain train;  // pipelined: when its last packets are whole where it is (or will be)
    uint64_t mtu;       // 0: stored and forwarded whole; > 0: pipelined in packets of this size
  };

  void OnEvent(uint64_t arg) override;
  // Send with packets of `mtu` bytes (0: store-and-forward of the whole message).
  void Launch(int src, int dst, uint64_t size, uint64_t mtu, DeliveryHandler* handler,
              uint64_t token);
  void Forward(uint32_t chunk);
  void Transmit(uint32_t link, uint32_t chunk);

  Simulation& sim_;
  Topology topology_;
  const PhysicalGraph* graph_;
  uint64_t pipeline_mtu_;
  std::vector<Link> links_;
  SlotPool<Chunk> chunks_;
  ZeroTimeBytes zero_time_;  // store-and-forward messages whose bytes took no time
};

}  // namespace orrery
