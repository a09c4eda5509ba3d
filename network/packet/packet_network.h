// The packet-level network: messages cut into packets that cross NIC injection queues, links
// (serialization + propagation) and switches with per-port output queues and finite buffers,
// kept lossless by credit-based flow control or PFC pause.
//
//   Topology t = ...;                      // dimensions or a graph (DGX, custom)
//   NetworkParams p;  p.flow_control = NetworkParams::FlowControl::kPfc;
//   Status ok = CheckPacketTopology(t, p); // parameters against every link; errors name the key
//   Simulation sim;
//   PacketNetwork net(sim, t, p);
//   net.Send(/*src=*/0, /*dst=*/5, Bytes(1 << 20), &handler, /*token=*/7);
//   sim.Run();                             // handler.OnDelivered(7) when the last packet arrives
//   for (const LinkStats& l : net.Links()) ... l.port->max_queue_bytes ...
//
// The model, its parameters and how it relates to the analytical backends: network/README.md,
// section "packet".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/event_queue.h"
#include "common/slot_pool.h"
#include "common/status.h"
#include "common/units.h"
#include "network/graph.h"
#include "network/network.h"

namespace orrery {

// The devices and links of a dimensional topology (ASTRA-sim's Ring / FullyConnected / Switch
// lists and Orrery's Mesh), as the congestion-aware backend builds them: NPUs 0..n-1, then one
// switch per Switch-dimension group ("sw0" with one dimension, "sw<d>.<group>" with several).
// NPUs relay traffic unless the machine is a single Switch or FullyConnected dimension. Routes
// are built, and are dimension-ordered as the congestion-aware backend's (each link knows its
// dimension: PhysicalGraph::dimension_sizes). Errors: too many NPUs or links for a graph.
StatusOr<std::shared_ptr<const PhysicalGraph>> GraphFromDimensions(const std::vector<Dimension>& d);

// The largest machines the packet backend builds (its routes are a devices x NPUs table).
constexpr int kMaxPacketNpus = 8192;
constexpr uint64_t kMaxPacketLinks = uint64_t{1} << 24;

// Per-link flow-control figures after the automatic defaults are resolved.
struct PortLimits {
  uint64_t buffer_bytes;  // ingress buffer at the link's downstream end
  uint64_t xoff_bytes;    // PFC only
  uint64_t xon_bytes;     // PFC only
};
// Headroom a PFC ingress buffer needs above xoff so that nothing is lost while the pause
// travels upstream: ceil(2 * latency * bandwidth) + 2 MTU (see network/README.md).
uint64_t PfcHeadroomBytes(Bandwidth bw, Time latency, uint64_t mtu);
// The automatic ingress buffer of a link into a relaying NPU: at least this. An NPU relays
// through its own memory (a GPU forwarding to its NIC, as NCCL's PXN does; a ring or torus of
// NPUs storing and forwarding), not a switch port's SRAM (network/README.md).
constexpr uint64_t kRelayBufferBytes = uint64_t{4} << 20;
// The automatic values for a link with this bandwidth and latency under `p`; `relay`: its far
// end is a relaying NPU.
PortLimits ResolvePortLimits(const NetworkParams& p, Bandwidth bw, Time latency,
                             bool relay = false);

// Checks the packet parameters against the topology: sizes, and for every link that the buffer
// holds a packet (credit) or that xon < xoff <= buffer - headroom (PFC). One error per problem,
// naming the key, its value and the valid range.
Status CheckPacketTopology(const Topology& topology, const NetworkParams& params);

class PacketNetwork final : public Network, private EventTarget {
 public:
  // `topology` and `params` must pass CheckPacketTopology.
  PacketNetwork(Simulation& sim, Topology topology, const NetworkParams& params);

  int num_npus() const override { return graph_->num_npus; }
  const Topology& topology() const override { return topology_; }
  void Send(int src, int dst, Bytes size, DeliveryHandler* handler, uint64_t token) override;
  // Every link of the graph, in graph order, named "<from>-><to>" ("#2", ... for a parallel
  // link), with its output port's statistics up to the current simulated time.
  std::vector<LinkStats> Links() const override;
  // The link serializes slower; its buffers and flow-control thresholds stay as built (the
  // hardware's, sized for the full rate).
  void ScaleLinkBandwidths(const std::vector<size_t>& indices, double scale) override;
  // Undelivered messages and the ports flow control holds (a PFC deadlock names its cycle).
  std::vector<std::string> DescribeStuck(int max_lines) const override;
  // Every ordered pair's routes as a depth-first walk over the devices its packets can reach:
  // with ECMP each device's one next link, with adaptive routing every candidate in out-link
  // order and which of them is ECMP's (it wins ties); devices and links numbered by first use.
  // Then each used port's bandwidth, latency, packet serialization, bubble and flow-control
  // limits. A port's state (queues, credits, pauses) is its own, and routing reads only the
  // ports it chooses among, so equal signatures give the same times to the same traffic among
  // the members, position for position. nullopt past kMaxSignatureValues values.
  std::optional<std::vector<int64_t>> RouteSignature(
      const std::vector<int>& members) const override;
  static constexpr size_t kMaxSignatureValues = size_t{1} << 22;
  void RecordQueueDepths() override;
  std::vector<QueueSeries> QueueDepths() const override;
  Status error() const override { return error_; }

  // The most packets one message may be cut into: every packet is simulated at every hop, so a
  // larger message would run for hours. Past it Send aborts the run with an error.
  static constexpr uint64_t kMaxPacketsPerMessage = uint64_t{1} << 28;

  const PhysicalGraph& graph() const { return *graph_; }
  // Packet transmissions started on some link (one per packet per hop).
  uint64_t packet_hops() const { return packet_hops_; }
  size_t messages_in_flight() const { return messages_.in_use(); }
  size_t packet_pool_size() const { return packets_.size(); }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  Status error_;

  struct Message {
    DeliveryHandler* handler;
    uint64_t token;
    uint64_t size;
    uint64_t unsent;     // bytes not yet cut into packets
    uint64_t delivered;  // bytes arrived at dst
    int32_t src;
    int32_t dst;
    uint32_t next;  // FIFO of messages waiting at a NIC port
  };

  struct Packet {
    int64_t arrive_ps;  // when its last byte reaches the link's far end
    uint32_t message;
    uint32_t bytes;
    uint32_t in_port;  // the link it arrived on (its ingress buffer), kNone at the source
    uint32_t next;     // FIFO: an output queue or a link's in-flight list
  };

  // A flow-control message travelling upstream: credits returned, or PFC pause/resume.
  struct Control {
    int64_t time_ps;  // when the sender sees it
    int64_t value;    // credit: bytes; PFC: 1 pause, 0 resume
  };

  // One unidirectional link and the output port that feeds it.
  struct Port {
    int64_t latency_ps = 0;
    Bandwidth bandwidth;
    int64_t mtu_serialization_ps = 0;
    int32_t dst_device = 0;
    bool bubble = false;  // the far end is a relaying NPU: injection keeps one MTU free
    // Output queues of packets in transit through the source device: those continuing along
    // this port's dimension, and (with `bubble`) those turning into it from another, which enter
    // its ring as injected packets do and wait for the same slack without holding up the others.
    IndexFifo queue;
    IndexFifo turning;
    uint64_t queue_bytes = 0;  // both
    // NIC injection queue (ports of NPUs): messages still to be cut into packets.
    IndexFifo messages;
    uint64_t message_bytes = 0;
    uint8_t next_class = 0;      // round robin: continuing transit, turning transit, injection
    bool busy = false;           // serializing a packet (a tx-done event is pending)
    uint64_t serving_bytes = 0;  // the packet being serialized
    // Packets on the wire, in arrival order; one pending arrival event for the head.
    IndexFifo flight;
    bool arrival_armed = false;
    // Flow control as the sender knows it, and control messages still on their way.
    int64_t credits = 0;
    bool paused = false;
    std::vector<Control> control;
    size_t control_head = 0;
    bool wake_armed = false;
    bool blocked = false;  // has a packet ready but flow control holds it
    int64_t blocked_since_ps = 0;
    // The downstream device's ingress buffer for this link.
    uint64_t ingress_bytes = 0;
    bool xoff_sent = false;
    PortLimits limits{};
    // Statistics.
    uint64_t bytes = 0;
    int64_t busy_ps = 0;
    uint64_t max_queue_bytes = 0;
    double queue_area = 0;  // integral of queue_bytes over time, byte * ps
    int64_t queue_changed_ps = 0;
    int64_t paused_ps = 0;
  };

  void OnEvent(uint64_t arg) override;
  void TrySend(uint32_t port);
  // Whether a packet that came in on `in_port` (kNone: injected here) and leaves on `out_port`
  // turns there from one dimension of a dimensional topology into another (Link::dimension).
  bool EntersDimension(uint32_t in_port, uint32_t out_port) const;
  void OnArrival(uint32_t port);
  void Absorb(Port& p);
  void PushControl(uint32_t port, int64_t value);
  void ReleaseIngress(uint32_t port, uint64_t bytes);
  void SetQueueBytes(uint32_t port, uint64_t bytes);
  uint32_t Route(int at, int src, int dst) const;
  // Route where a device has several next links toward `dst`: ECMP's pick, or with adaptive
  // routing the least loaded candidate (ties keep ECMP's pick).
  uint32_t RouteAmong(int at, int src, int dst) const;
  uint32_t NewPacket();
  void RecordDepth(uint32_t port, uint64_t bytes);

  Simulation& sim_;
  Topology topology_;
  std::shared_ptr<const PhysicalGraph> graph_holder_;
  const PhysicalGraph* graph_;
  NetworkParams params_;
  bool pfc_;
  // The only next link from a device to an NPU when there is exactly one (kNone: several, so
  // ECMP or adaptive choose; empty when the table would be too large).
  std::vector<uint32_t> unique_next_;
  std::vector<Port> ports_;
  SlotPool<Message> messages_;
  std::vector<Packet> packets_;
  uint32_t free_packets_ = kNone;  // free list threaded through Packet::next
  uint64_t packet_hops_ = 0;
  // Queue depths over time (RecordQueueDepths), per port; empty when not recording.
  std::vector<std::vector<QueueSeries::Sample>> depths_;
  std::vector<uint64_t> depth_peaks_;  // per port: the deepest of its samples but the last
};

}  // namespace orrery
