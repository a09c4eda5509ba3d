// ASTRA-sim 2.0's congestion-aware analytical network, extended to several dimensions.
//
//   Simulation sim;
//   AnalyticalAwareNetwork net(sim, topology);
//   net.Send(/*src=*/0, /*dst=*/2, Bytes(4096), &handler, /*token=*/7);
//   sim.Run();                                // handler.OnDelivered(7) at the arrival time
//   for (const LinkStats& l : net.Links()) ...  // bytes and busy time per link
//
// Each message is one chunk, forwarded store-and-forward along unidirectional links. A link
// sends one chunk at a time (FIFO): it is busy for trunc(size / bw) ns and the chunk reaches
// the next device after trunc(latency + size / bw) ns; a dimension of k lanes carries k chunks
// side by side, each at bw / k. With Options::pipeline_mtu (YAML
// `aware-forwarding: pipelined`) a chunk instead moves on as soon as its first packet is in
// (network/analytical_aware/forwarding.h). Routing is dimension-ordered; inside a
// dimension Ring takes the shorter way (ties clockwise), FullyConnected goes direct and Switch
// goes NPU -> switch -> NPU. Equations and differences from ASTRA-sim: network/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/event_queue.h"
#include "common/slot_pool.h"
#include "common/units.h"
#include "network/analytical_aware/forwarding.h"
#include "network/network.h"

namespace orrery {

class AnalyticalAwareNetwork final : public Network, private EventTarget {
 public:
  struct Options {
    // A FullyConnected dimension gets all of its npus * (dim_npus - 1) links up front when
    // that is at most this many; above it, links are created on first use.
    uint64_t dense_fully_connected_links = uint64_t{1} << 20;
    // 0: store-and-forward, as ASTRA-sim. > 0: pipelined forwarding in packets of this many
    // bytes (forwarding.h); delays are then kept in picoseconds, not truncated per hop.
    uint64_t pipeline_mtu = 0;
  };

  AnalyticalAwareNetwork(Simulation& sim, Topology topology)
      : AnalyticalAwareNetwork(sim, std::move(topology), Options()) {}
  AnalyticalAwareNetwork(Simulation& sim, Topology topology, Options options);

  int num_npus() const override { return num_npus_; }
  const Topology& topology() const override { return topology_; }
  void Send(int src, int dst, Bytes size, DeliveryHandler* handler, uint64_t token) override;
  std::vector<std::string> Warnings(Time end) const override {
    return zero_time_.Warning("analytical-aware", end);
  }
  // Each piece stored and forwarded, or pipelined in packets when the network pipelines
  // smaller ones: a chunk whose packets are min(pipeline_mtu, piece) bytes.
  void SendInPieces(int src, int dst, Bytes size, uint64_t piece, DeliveryHandler* handler,
                    uint64_t token) override;
  // Every link built so far, in construction order (lazy FullyConnected links once used).
  // Dimension-ordered routing: dims_[d] before dims_[d + 1].
  std::vector<LinkStats> Links() const override;
  void ScaleLinkBandwidths(const std::vector<size_t>& indices, double scale) override;
  // Dimension-ordered routes and each link's bandwidth (slowed or not), latency and lanes: the
  // network keeps no state but its links'. nullopt with a FullyConnected dimension built lazily.
  std::optional<std::vector<int64_t>> RouteSignature(
      const std::vector<int>& members) const override;

  bool UseSymmetry(const NpuSymmetry& symmetry) override;

  size_t num_links() const { return links_.size(); }
  // Messages sent and not yet delivered.
  size_t in_flight() const { return chunks_.in_use(); }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;

  // kAbsent: a placeholder keeping Mesh links arithmetically indexed (no link past a line's end).
  enum class LinkKind : uint8_t { kNpuToNpu, kNpuToSwitch, kSwitchToNpu, kAbsent };

  struct Dim {
    BlockType type;
    int npus;
    int stride;           // product of the sizes of the lower dimensions
    uint32_t first_link;  // this dimension's dense links start here
    int links_per_npu;    // dense links leaving (or, for Switch, touching) each NPU
    bool lazy;            // FullyConnected links created on first use
    // One lane's store-and-forward delays for the last message size on this dimension.
    StoreAndForwardDelays delays;
    Time latency;            // as given, for pipelined forwarding
    Bandwidth bandwidth;     // of one lane, for pipelined forwarding
    uint16_t lanes;          // chunks a link carries side by side, each at bandwidth / lanes
    bool outermost = false;  // the last dimension: npu / stride is already its coordinate
  };

  // One unidirectional link of Dim::lanes lanes. Waiting chunks (every lane busy) form an
  // intrusive FIFO through Chunk::next.
  struct Link {
    IndexFifo waiting;  // chunks waiting for the link (a lane of it)
    int32_t npu;        // the NPU end (the source unless kind is kSwitchToNpu)
    int32_t peer;       // the other NPU for kNpuToNpu; unused otherwise
    uint8_t dim;
    LinkKind kind;
    uint16_t busy = 0;      // lanes in use
    uint32_t slow = kNone;  // index into slow_ when the link is not at its dimension's bandwidth
    uint64_t bytes = 0;
    int64_t busy_ps = 0;
  };

  // A message in flight; recycled through `chunks_`.
  struct Chunk {
    DeliveryHandler* handler;
    uint64_t token;
    uint64_t size;
    int32_t npu;  // where the chunk is (when at a switch: the NPU it came from)
    int32_t dst;
    int32_t next_npu;  // position after the link it is on or waiting for
    uint32_t next = kNone;
    int8_t switch_dim;  // >= 0 while the chunk sits in that dimension's switch
    int8_t next_switch_dim;
    PacketTrain train;  // pipelined: when its last packets are whole where it is (or will be)
    uint64_t mtu;       // 0: stored and forwarded whole; > 0: pipelined in packets of this size
  };

  struct Hop {
    uint32_t link;  // kNone: a lazy FullyConnected link not built yet (Step on a const network)
    int32_t npu;
    int8_t switch_dim;
  };

  void OnEvent(uint64_t arg) override;
  void AddLink(int dim, LinkKind kind, int npu, int peer);
  int Coord(int npu, const Dim& dim) const {
    // Divisions are the slowest step of a hop: none on a one-dimensional network.
    const int above = dim.stride == 1 ? npu : npu / dim.stride;
    return dim.outermost ? above : above % dim.npus;
  }
  // The next hop from `npu` (in dimension `switch_dim`'s switch when >= 0) towards `dst`. A
  // lazy FullyConnected link is built on first use when `self` is not const; a const `self`
  // gives link kNone for one not built yet. One template for both, so that the hot path
  // (NextHop) compiles to what it was before RouteSignature shared it.
  template <typename Self>
  static Hop Step(Self& self, int npu, int switch_dim, int dst);
  Hop NextHop(const Chunk& c) { return Step(*this, c.npu, c.switch_dim, c.dst); }
  uint32_t LazyFullyConnectedLink(int d, int from, int to);
  // Send with packets of `mtu` bytes (0: store-and-forward of the whole message).
  void Launch(int src, int dst, uint64_t size, uint64_t mtu, DeliveryHandler* handler,
              uint64_t token);
  void Forward(uint32_t chunk);
  void Transmit(uint32_t link, uint32_t chunk);
  std::string DeviceName(int dim, int npu, bool is_switch) const;

  Simulation& sim_;
  Topology topology_;
  int num_npus_;
  uint64_t pipeline_mtu_;
  std::vector<Dim> dims_;
  std::vector<Link> links_;
  // With a symmetry (UseSymmetry): every link's orbit representative; empty otherwise.
  std::vector<uint32_t> canonical_;
  const NpuSymmetry* symmetry_ = nullptr;
  // Links slowed by ScaleLinkBandwidths: one lane's bandwidth and store-and-forward delays each.
  struct SlowLink {
    Bandwidth bandwidth;
    StoreAndForwardDelays delays;
  };
  std::vector<SlowLink> slow_;
  // Lazy FullyConnected links, keyed by from * num_npus + to.
  std::unordered_map<uint64_t, uint32_t> lazy_links_;
  SlotPool<Chunk> chunks_;
  ZeroTimeBytes zero_time_;  // store-and-forward messages whose bytes took no time
};

}  // namespace orrery
