// The one interface between the system layer and every network backend.
//
//   std::unique_ptr<Network> net = MakeNetwork(backend, sim, topology);   // see network/factory.h
//   net->Send(/*src=*/0, /*dst=*/1, Bytes(4096), &handler, /*token=*/17);
//   ...  // later, at arrival time: handler.OnDelivered(17)
//
// A backend moves one message from one NPU to another and says when its last byte has arrived.
// Matching sends with receives, chunking and collective algorithms are the system layer's job,
// so every backend gets the same traffic and only the timing differs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/event_queue.h"
#include "common/status.h"
#include "common/units.h"

namespace orrery {

// Building block of one network dimension (ASTRA-sim's analytical YAML `topology` list, plus
// Orrery's Mesh: a line of NPUs, each linked both ways to its neighbours, with no wrap-around).
enum class BlockType { kRing, kFullyConnected, kSwitch, kMesh };

const char* BlockTypeName(BlockType t);

struct Dimension {
  BlockType type = BlockType::kRing;
  int npus = 2;         // NPUs along this dimension (> 1)
  Bandwidth bandwidth;  // per link, per direction
  Time latency;         // per link (hop)
  // Parallel lanes per link (analytical backends): a message takes one lane, at bandwidth /
  // lanes; up to `lanes` messages cross a link side by side (NCCL's channels). 1 = ASTRA-sim.
  int lanes = 1;
};

struct PhysicalGraph;  // network/graph.h
class NpuSymmetry;     // network/symmetry.h

// How the backends move messages, beyond the Topology's links: the packet-level backend's
// packets, buffers, flow control and routing (network/packet, network/README.md), and how the
// analytical-aware backend forwards (`aware_forwarding`, in packets of `mtu` when pipelined).
// Read from the network YAML's `packet-*` and `aware-forwarding` keys (configs/README.md) and
// given to MakeNetwork beside the Topology.
struct NetworkParams {
  // analytical-aware: kStoreAndForward holds a whole chunk at every hop (ASTRA-sim);
  // kPipelined moves it in packets of `mtu` bytes (network/analytical_aware/forwarding.h).
  enum class AwareForwarding { kStoreAndForward, kPipelined };
  enum class FlowControl { kCredit, kPfc };
  enum class Routing { kEcmp, kAdaptive };
  uint64_t mtu = 4096;        // bytes of payload per packet (the last packet may be shorter)
  uint64_t buffer_bytes = 0;  // per ingress port of a relaying device; 0 = auto (per link)
  FlowControl flow_control = FlowControl::kCredit;
  Routing routing = Routing::kEcmp;
  uint64_t pfc_xoff_bytes = 0;  // pause the upstream port at this ingress occupancy; 0 = auto
  uint64_t pfc_xon_bytes = 0;   // resume it at or below this occupancy; 0 = auto
  AwareForwarding aware_forwarding = AwareForwarding::kStoreAndForward;
};

// A multi-dimensional network as in ASTRA-sim's analytical YAML. NPU id <-> address: dimension 0
// varies fastest (id = sum addr[d] * prod_{k<d} npus[k]).
//
// When `graph` is set, the machine is that explicit graph of devices and links (a DGX-style
// fat-tree or a custom file) and `dims` are only its logical dimensions: the system layer runs
// its per-dimension collectives over NPU-id strides of `dims`, while the congestion-aware backend
// routes every message over `graph`. The product of dims[d].npus is the graph's NPU count.
struct Topology {
  std::vector<Dimension> dims;
  std::shared_ptr<const PhysicalGraph> graph = nullptr;  // null: `dims` are the physical network
  // Links slower (or faster) than the machine's description says: the network YAML's
  // `slow-links` and `slow-link-bandwidth-scale` (Orrery's). Each name is a link as Links() names
  // it ("npu3->npu4", "d1:npu2->sw1.2", "sw0->npu5#2"); a name without a "d<k>:" prefix or a
  // "#<n>" suffix also matches the prefixed and the parallel links it leaves out; "a<->b" is
  // "a->b" and "b->a". Those links run at bandwidth x `bandwidth_scale` (latency unchanged).
  // Applied by MakeNetwork; CheckSlowLinks says when a name matches no link.
  struct SlowLinks {
    std::vector<std::string> names;
    double bandwidth_scale = 1;
    std::string where;  // "file:line" of the key, for messages
  };
  SlowLinks slow_links = {};

  int num_npus() const;
  // The NPUs of one node, as NCCL counts nodes: every dimension but the last (the network across
  // nodes); the whole machine when there is one dimension. NCCL's tuner, validate's GPU counts
  // and the rings across nodes (channelRing, NCCL's rooted rings) all take a node as this.
  int NpusPerNode() const;
  // Per-dimension coordinates of `npu`.
  std::vector<int> Address(int npu) const;
  // The lowest dimension in which `a` and `b` differ, or -1 if a == b.
  int FirstDifferingDim(int a, int b) const;
};

// Network::Send's precondition, checked by every backend: both NPUs exist and differ.
[[noreturn]] void SendEndpointsFailed(int src, int dst, int num_npus);
inline void CheckSendEndpoints(int src, int dst, int num_npus) {
  // The test inline, the message (strings) out of line: every send passes here.
  if (__builtin_expect(src < 0 || src >= num_npus || dst < 0 || dst >= num_npus || src == dst, 0)) {
    SendEndpointsFailed(src, dst, num_npus);
  }
}

class DeliveryHandler {
 public:
  virtual ~DeliveryHandler() = default;
  virtual void OnDelivered(uint64_t token) = 0;
};

// Per-link traffic, for reports (backends without links report none).
struct LinkStats {
  std::string name;  // e.g. "npu3->npu4" or "npu2->switch0.1"
  uint64_t bytes = 0;
  Time busy;
  // Output-port statistics of backends with queues (the packet backend); absent otherwise.
  struct Port {
    uint64_t max_queue_bytes = 0;  // most bytes waiting in the port's output queue
    double mean_queue_bytes = 0;   // time-weighted mean over the run
    Time paused;                   // time with a packet ready but held by flow control
    uint64_t drops = 0;            // packets dropped (0: flow control is lossless)
  };
  std::optional<Port> port;
};

// The depth of one output queue over time (backends with queues, for timelines): a sample at
// each change of at least one packet, and whenever the queue empties.
struct QueueSeries {
  struct Sample {
    Time time;
    uint64_t bytes;
  };
  std::string link;  // as in Links()
  std::vector<Sample> samples;
};

// Messages whose bytes took no time: ASTRA-sim's analytical models time a message in whole ns,
// truncated, so a message that serializes in under 1 ns (4 B at 50 GB/s: a collective cut into
// chunks this fine) crosses a link in its latency alone. The analytical backends note each such
// message by its sender (an NPU, or a device of a graph); when one sender's lost serialization
// adds up to 1% of the run, the run says so once.
class ZeroTimeBytes {
 public:
  void Note(size_t sender, uint64_t size, double serialization_ns) {
    if (sender >= lost_ns_.size()) lost_ns_.resize(sender + 1, 0.0);
    lost_ns_[sender] += serialization_ns;
    messages_ += multiplicity_;
    largest_ = std::max(largest_, size);
  }
  // Under a symmetry (Network::UseSymmetry) each message stands for `k` of the full run's, one
  // per NPU of its orbit; the sender noted is its representative, whose losses each NPU of the
  // orbit has.
  void set_multiplicity(uint64_t k) { multiplicity_ = k; }
  std::vector<std::string> Warning(const std::string& backend, Time end) const {
    size_t worst = 0;
    for (size_t i = 0; i < lost_ns_.size(); ++i) {
      if (lost_ns_[i] > lost_ns_[worst]) worst = i;
    }
    if (lost_ns_.empty() || !(lost_ns_[worst] >= 0.01 * end.Ns())) return {};
    char lost[32];
    std::snprintf(lost, sizeof lost, "%.0f", lost_ns_[worst]);
    return {std::to_string(messages_) + " message" + (messages_ == 1 ? "" : "s") + " of up to " +
            std::to_string(largest_) + " B serialized in under 1 ns, which the " + backend +
            " backend truncates to 0 as ASTRA-sim does: their bytes took no time (device " +
            std::to_string(worst) + "'s alone would have taken " + lost +
            " ns, 1% or more of the run; a collective cut into chunks this small, by "
            "preferred-dataset-splits or over many NPUs, runs faster than its links allow); "
            "the analytical-aware backend with aware-forwarding: pipelined, or the packet "
            "backend, keep picoseconds"};
  }

 private:
  std::vector<double> lost_ns_;  // by sender
  uint64_t messages_ = 0;
  uint64_t multiplicity_ = 1;
  uint64_t largest_ = 0;
};

class Network {
 public:
  virtual ~Network() = default;
  virtual int num_npus() const = 0;
  virtual const Topology& topology() const = 0;
  // Starts moving `size` bytes from `src` to `dst` at the current simulated time. Calls
  // `handler->OnDelivered(token)` when the message has fully arrived at `dst`. `src != dst`.
  virtual void Send(int src, int dst, Bytes size, DeliveryHandler* handler, uint64_t token) = 0;
  // The same message, which the sender cuts into pieces of `piece` bytes (> 0) sent back to back,
  // as NCCL moves a point-to-point message in chunks (NCCL_P2P_NET_CHUNKSIZE): the
  // analytical-aware backends store and forward each piece (or its packets when they pipeline
  // smaller ones), in one record (forwarding.h), so that a relay forwards the first piece while
  // the next arrives. The other backends move it as Send does (the packet backend already
  // moves packets; the unaware one does not store messages at relays).
  virtual void SendInPieces(int src, int dst, Bytes size, uint64_t piece, DeliveryHandler* handler,
                            uint64_t token) {
    (void)piece;
    Send(src, dst, size, handler, token);
  }
  // A message the trace names itself (a Chakra send or receive, a custom collective's, or the
  // ready message of one under --rendezvous-protocol), which ASTRA-sim hands to its network as
  // it is (sim_send). Moved as SendInPieces when `piece` > 0, else as Send, except by the
  // congestion-unaware backend: ASTRA-sim's charges a message between NPUs whose addresses
  // differ in several dimensions the lowest of them alone (its MultiDimTopology::send), and
  // so does Orrery's for these messages, while its own algorithms' messages cross every
  // dimension (network/README.md, "analytical-unaware").
  virtual void SendTraceMessage(int src, int dst, Bytes size, uint64_t piece,
                                DeliveryHandler* handler, uint64_t token) {
    if (piece != 0) return SendInPieces(src, dst, size, piece, handler, token);
    Send(src, dst, size, handler, token);
  }
  // Traffic carried so far, per link (empty for backends that do not model links).
  virtual std::vector<LinkStats> Links() const { return {}; }
  // When the simulation ran out of events with messages undelivered: what holds them, in at
  // most `max_lines` lines (empty for backends that always deliver).
  virtual std::vector<std::string> DescribeStuck(int max_lines) const { return {}; }
  // Starts keeping queue depths over time (call before the run; no-op without queues).
  virtual void RecordQueueDepths() {}
  // The recorded series of every queue that ever held a packet, in link order.
  virtual std::vector<QueueSeries> QueueDepths() const { return {}; }
  // Why the backend aborted the run (Simulation::Abort), when it met a message it cannot
  // simulate; OK otherwise.
  virtual Status error() const { return Status::Ok(); }
  // What the run ending at `end` should know about how the backend timed it (ZeroTimeBytes): one
  // line each.
  virtual std::vector<std::string> Warnings(Time end) const { return {}; }
  // Before any Send: the links at `indices` (positions in Links(), increasing) run at `scale` x
  // their bandwidth (Topology::slow_links; applied by MakeNetwork). Backends without links have
  // none.
  virtual void ScaleLinkBandwidths(const std::vector<size_t>& indices, double scale) {}
  // How traffic among `members` loads this network: for every ordered pair, in member order,
  // the links its traffic may take, each numbered by its first use; then what each used link's
  // timing depends on (the analytical backends: SignatureOfRoutes, bandwidth, latency, lanes).
  // Two member lists with equal signatures give the same times, bit for bit, to the same
  // traffic among them, position for position. nullopt when the backend cannot say (no links,
  // or links not built yet).
  virtual std::optional<std::vector<int64_t>> RouteSignature(
      const std::vector<int>& members) const {
    return std::nullopt;
  }
  // Symmetry reduction (network/symmetry.h), before any Send: only the representatives of
  // `symmetry`'s orbits send, and every link stands for its orbit: a message to another NPU
  // takes its real route, each link of it timed on the orbit's representative link, which
  // carries the images of every message the full run would put on any link of the orbit.
  // Links() reports each link as its representative. False (nothing changed) when the backend
  // cannot (no such links, a packet-level fabric) or the symmetry does not map its links onto
  // links alike (a Ring dimension not rotated, a slow link whose images are not slow).
  virtual bool UseSymmetry(const NpuSymmetry& symmetry) { return false; }
};

// Numbers ids (links, devices) in the order they are first seen, for RouteSignature: two
// member lists whose routes are alike get the same numbers.
class FirstUse {
 public:
  int64_t Number(uint32_t id) {
    auto [it, added] = numbers_.emplace(id, static_cast<int64_t>(used_.size()));
    if (added) used_.push_back(id);
    return it->second;
  }
  // The ids seen, in the order of their numbers.
  const std::vector<uint32_t>& used() const { return used_; }

 private:
  std::unordered_map<uint32_t, int64_t> numbers_;
  std::vector<uint32_t> used_;
};

// RouteSignature from a backend's routes: `route(src, dst)` gives the links a message from `src`
// to `dst` crosses, in order; `describe(link)` gives what the link's timing depends on
// (bandwidth, latency, lanes, as integers).
template <typename RouteFn, typename DescribeFn>
std::vector<int64_t> SignatureOfRoutes(const std::vector<int>& members, RouteFn route,
                                       DescribeFn describe) {
  std::vector<int64_t> signature;
  FirstUse links;
  for (int src : members) {
    for (int dst : members) {
      if (src == dst) continue;
      const std::vector<uint32_t> route_links = route(src, dst);
      signature.push_back(static_cast<int64_t>(route_links.size()));
      for (uint32_t l : route_links) signature.push_back(links.Number(l));
    }
  }
  for (uint32_t l : links.used()) {
    for (int64_t v : describe(l)) signature.push_back(v);
  }
  return signature;
}

// A bandwidth as an integer for SignatureOfRoutes: its bits.
int64_t BandwidthBits(Bandwidth bw);

}  // namespace orrery
