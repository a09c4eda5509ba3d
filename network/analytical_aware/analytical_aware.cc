#include "network/analytical_aware/analytical_aware.h"

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include "common/status.h"
#include "network/analytical_aware/forwarding.h"
#include "network/symmetry.h"

namespace orrery {

namespace {

// Event arguments: a chunk reaching the end of its current link, or a link becoming free.
constexpr uint64_t kArrival = 0;
constexpr uint64_t kLinkFree = 1;

}  // namespace

AnalyticalAwareNetwork::AnalyticalAwareNetwork(Simulation& sim, Topology topology, Options options)
    : sim_(sim),
      topology_(std::move(topology)),
      num_npus_(topology_.num_npus()),
      pipeline_mtu_(options.pipeline_mtu) {
  ORRERY_CHECK(!topology_.dims.empty(), "a topology needs at least one dimension");
  ORRERY_CHECK(topology_.dims.size() < 128, "too many dimensions");
  ORRERY_CHECK(topology_.graph == nullptr,
               "AnalyticalAwareNetwork models dimensions; a graph topology needs GraphNetwork");
  int stride = 1;
  for (size_t d = 0; d < topology_.dims.size(); ++d) {
    const Dimension& dim = topology_.dims[d];
    ORRERY_CHECK(dim.npus > 1, "dimension " + std::to_string(d) + " has fewer than 2 NPUs");
    ORRERY_CHECK(dim.bandwidth.bytes_per_sec() > 0,
                 "dimension " + std::to_string(d) + " has a non-positive bandwidth");
    ORRERY_CHECK(dim.latency >= Time::Zero(),
                 "dimension " + std::to_string(d) + " has a negative latency");
    ORRERY_CHECK(dim.lanes >= 1 && dim.lanes <= 65535,
                 "dimension " + std::to_string(d) + " has " + std::to_string(dim.lanes) + " lanes");
    // A message takes one lane: its share of the link's bandwidth.
    const Bandwidth lane = Bandwidth::FromBytesPerSec(dim.bandwidth.bytes_per_sec() / dim.lanes);
    Dim p{dim.type,
          dim.npus,
          stride,
          0,
          0,
          false,
          StoreAndForwardDelays(dim.latency.Ns(), lane.bytes_per_ns()),
          dim.latency,
          lane,
          static_cast<uint16_t>(dim.lanes)};
    switch (dim.type) {
      case BlockType::kRing:
        // A 2-NPU ring has one link per direction; larger rings one each way per NPU.
        p.links_per_npu = dim.npus == 2 ? 1 : 2;
        break;
      case BlockType::kSwitch:
        p.links_per_npu = 2;  // up to the switch, down from it
        break;
      case BlockType::kMesh:
        p.links_per_npu = 2;  // towards higher and lower coordinates (absent at the ends)
        break;
      case BlockType::kFullyConnected:
        p.links_per_npu = dim.npus - 1;
        p.lazy =
            static_cast<uint64_t>(num_npus_) * (dim.npus - 1) > options.dense_fully_connected_links;
        if (p.lazy) p.links_per_npu = 0;
        break;
    }
    p.outermost = d + 1 == topology_.dims.size();
    dims_.push_back(p);
    stride *= dim.npus;
  }

  uint64_t dense = 0;
  for (const Dim& p : dims_) dense += static_cast<uint64_t>(num_npus_) * p.links_per_npu;
  ORRERY_CHECK(dense < kNone, "too many links");
  links_.reserve(dense);
  for (size_t d = 0; d < dims_.size(); ++d) {
    Dim& p = dims_[d];
    p.first_link = static_cast<uint32_t>(links_.size());
    const int di = static_cast<int>(d);
    for (int npu = 0; npu < num_npus_; ++npu) {
      const int c = Coord(npu, p);
      switch (p.type) {
        case BlockType::kRing:
          AddLink(di, LinkKind::kNpuToNpu, npu, npu + ((c + 1) % p.npus - c) * p.stride);
          if (p.links_per_npu == 2) {
            AddLink(di, LinkKind::kNpuToNpu, npu, npu + ((c + p.npus - 1) % p.npus - c) * p.stride);
          }
          break;
        case BlockType::kSwitch:
          AddLink(di, LinkKind::kNpuToSwitch, npu, -1);
          AddLink(di, LinkKind::kSwitchToNpu, npu, -1);
          break;
        case BlockType::kMesh:
          AddLink(di, c + 1 < p.npus ? LinkKind::kNpuToNpu : LinkKind::kAbsent, npu,
                  npu + p.stride);
          AddLink(di, c > 0 ? LinkKind::kNpuToNpu : LinkKind::kAbsent, npu, npu - p.stride);
          break;
        case BlockType::kFullyConnected:
          if (p.lazy) break;
          for (int j = 0; j < p.npus; ++j) {
            if (j != c) AddLink(di, LinkKind::kNpuToNpu, npu, npu + (j - c) * p.stride);
          }
          break;
      }
    }
  }
}

void AnalyticalAwareNetwork::AddLink(int dim, LinkKind kind, int npu, int peer) {
  Link l;
  l.npu = npu;
  l.peer = peer;
  l.dim = static_cast<uint8_t>(dim);
  l.kind = kind;
  links_.push_back(l);
}

uint32_t AnalyticalAwareNetwork::LazyFullyConnectedLink(int d, int from, int to) {
  const uint64_t key = static_cast<uint64_t>(from) * num_npus_ + to;
  auto it = lazy_links_.find(key);
  if (it != lazy_links_.end()) return it->second;
  ORRERY_CHECK(links_.size() < kNone, "too many links");
  const uint32_t id = static_cast<uint32_t>(links_.size());
  AddLink(d, LinkKind::kNpuToNpu, from, to);
  lazy_links_.emplace(key, id);
  return id;
}

template <typename Self>
AnalyticalAwareNetwork::Hop AnalyticalAwareNetwork::Step(Self& self, int npu, int switch_dim,
                                                         int dst) {
  const std::vector<Dim>& dims = self.dims_;
  if (switch_dim >= 0) {
    // In a switch: go down to the NPU whose coordinate in that dimension matches dst's.
    const Dim& p = dims[switch_dim];
    const int to = npu + (self.Coord(dst, p) - self.Coord(npu, p)) * p.stride;
    return Hop{p.first_link + static_cast<uint32_t>(to) * 2 + 1, to, -1};
  }
  // Dimension-ordered: the lowest dimension whose coordinate still differs.
  for (size_t d = 0; d < dims.size(); ++d) {
    const Dim& p = dims[d];
    const int a = self.Coord(npu, p);
    const int b = self.Coord(dst, p);
    if (a == b) continue;
    const uint32_t base = p.first_link + static_cast<uint32_t>(npu) * p.links_per_npu;
    switch (p.type) {
      case BlockType::kRing: {
        int clockwise = b - a;
        if (clockwise < 0) clockwise += p.npus;
        if (p.npus - clockwise < clockwise) {  // strictly shorter anticlockwise; ties go clockwise
          const int prev = a == 0 ? p.npus - 1 : a - 1;
          return Hop{base + 1, npu + (prev - a) * p.stride, -1};
        }
        const int next = a + 1 == p.npus ? 0 : a + 1;
        return Hop{base, npu + (next - a) * p.stride, -1};
      }
      case BlockType::kFullyConnected: {
        const int to = npu + (b - a) * p.stride;
        if (!p.lazy) return Hop{base + static_cast<uint32_t>(b < a ? b : b - 1), to, -1};
        if constexpr (std::is_const_v<Self>) {
          return Hop{kNone, to, -1};
        } else {
          return Hop{self.LazyFullyConnectedLink(static_cast<int>(d), npu, to), to, -1};
        }
      }
      case BlockType::kSwitch:
        return Hop{base, npu, static_cast<int8_t>(d)};
      case BlockType::kMesh:
        // Straight along the line: link 0 goes up, link 1 goes down.
        return b > a ? Hop{base, npu + p.stride, -1} : Hop{base + 1, npu - p.stride, -1};
    }
  }
  ORRERY_CHECK(false, "chunk at its destination has no next hop");
  return Hop{kNone, -1, -1};
}

std::optional<std::vector<int64_t>> AnalyticalAwareNetwork::RouteSignature(
    const std::vector<int>& members) const {
  for (const Dim& p : dims_) {
    if (p.lazy) return std::nullopt;
  }
  return SignatureOfRoutes(
      members,
      [this](int src, int dst) {
        std::vector<uint32_t> links;
        Hop h{kNone, src, -1};
        do {
          h = Step(*this, h.npu, h.switch_dim, dst);
          links.push_back(h.link);
        } while (h.switch_dim >= 0 || h.npu != dst);
        return links;
      },
      [this](uint32_t l) {
        const Link& link = links_[l];
        const Dim& p = dims_[link.dim];
        const Bandwidth bw = link.slow == kNone ? p.bandwidth : slow_[link.slow].bandwidth;
        return std::array<int64_t, 3>{BandwidthBits(bw), p.latency.ps(), p.lanes};
      });
}

void AnalyticalAwareNetwork::Send(int src, int dst, Bytes size, DeliveryHandler* handler,
                                  uint64_t token) {
  Launch(src, dst, size.count(), pipeline_mtu_, handler, token);
}

void AnalyticalAwareNetwork::SendInPieces(int src, int dst, Bytes size, uint64_t piece,
                                          DeliveryHandler* handler, uint64_t token) {
  ORRERY_CHECK(piece > 0, "a message's pieces need at least one byte");
  Launch(src, dst, size.count(), PieceUnit(pipeline_mtu_, piece), handler, token);
}

void AnalyticalAwareNetwork::Launch(int src, int dst, uint64_t size, uint64_t mtu,
                                    DeliveryHandler* handler, uint64_t token) {
  CheckSendEndpoints(src, dst, num_npus_);
  const uint32_t id = chunks_.Acquire();
  Chunk& c = chunks_[id];
  c.handler = handler;
  c.token = token;
  c.size = size;
  c.mtu = mtu;
  c.npu = src;
  c.dst = dst;
  c.switch_dim = -1;
  c.train = {sim_.now(), sim_.now()};
  Forward(id);
}

void AnalyticalAwareNetwork::Forward(uint32_t chunk) {
  Chunk& c = chunks_[chunk];
  const Hop h = NextHop(c);
  c.next_npu = h.npu;
  c.next_switch_dim = h.switch_dim;
  // With a symmetry the chunk takes its own route, timed on each link's orbit representative.
  const uint32_t link = canonical_.empty() ? h.link : canonical_[h.link];
  Link& l = links_[link];
  if (l.busy == dims_[l.dim].lanes) {
    l.waiting.Push(chunks_, chunk);
  } else {
    Transmit(link, chunk);
  }
}

bool AnalyticalAwareNetwork::UseSymmetry(const NpuSymmetry& symmetry) {
  if (symmetry.num_npus() != num_npus_ || symmetry.num_dims() != static_cast<int>(dims_.size())) {
    return false;
  }
  for (size_t d = 0; d < dims_.size(); ++d) {
    const Dim& p = dims_[d];
    if (p.lazy) return false;  // links built on first use: no table to map them in
    if (symmetry.Period(static_cast<int>(d)) == 1) continue;
    if (p.type == BlockType::kMesh) return false;
    if (p.type == BlockType::kRing) {
      // Only a rotation keeps the ring's links and their directions.
      int shift = -1;
      for (int v = 0; v < p.npus; ++v) {
        const int to = Coord(symmetry.Apply(static_cast<int>(d), 1, v * p.stride), p);
        const int s = (to - v + p.npus) % p.npus;
        if (shift >= 0 && s != shift) return false;
        shift = s;
      }
    }
  }
  auto bandwidth = [this](const Link& l) {
    return l.slow == kNone ? dims_[l.dim].bandwidth : slow_[l.slow].bandwidth;
  };
  std::vector<uint32_t> canonical(links_.size());
  for (uint32_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    canonical[i] = i;
    if (l.kind == LinkKind::kAbsent) continue;
    const Dim& p = dims_[l.dim];
    const int rep = symmetry.Rep(l.npu);
    uint32_t slot = (i - p.first_link) % static_cast<uint32_t>(p.links_per_npu);
    int peer = -1;
    if (l.kind == LinkKind::kNpuToNpu) {
      peer = symmetry.ToRep(l.npu, l.peer);
      if (p.type == BlockType::kFullyConnected) {
        const int a = Coord(rep, p), b = Coord(peer, p);
        slot = static_cast<uint32_t>(b < a ? b : b - 1);
      }
    }
    const uint32_t to = p.first_link + static_cast<uint32_t>(rep) * p.links_per_npu + slot;
    const Link& target = links_[to];
    if (target.npu != rep || target.kind != l.kind || target.dim != l.dim ||
        (peer >= 0 && target.peer != peer) ||
        bandwidth(target).bytes_per_sec() != bandwidth(l).bytes_per_sec()) {
      return false;
    }
    canonical[i] = to;
  }
  canonical_ = std::move(canonical);
  symmetry_ = &symmetry;
  zero_time_.set_multiplicity(static_cast<uint64_t>(symmetry.OrbitSize()));
  return true;
}

void AnalyticalAwareNetwork::Transmit(uint32_t link, uint32_t chunk) {
  Link& l = links_[link];
  Dim& p = dims_[l.dim];
  Chunk& c = chunks_[chunk];
  const uint64_t size = c.size;
  ++l.busy;
  l.bytes += size;
  if (c.mtu != 0) {
    // The destination takes the chunk when its last byte is in; a relay forwards its head.
    const bool last_hop = c.next_switch_dim < 0 && c.next_npu == c.dst;
    const Bandwidth bw = l.slow == kNone ? p.bandwidth : slow_[l.slow].bandwidth;
    // Busy time is the whole link's: a lane's serialization / lanes (= bytes / bandwidth).
    l.busy_ps += StartPipelinedHop(sim_, this, (uint64_t{chunk} << 1) | kArrival,
                                   (uint64_t{link} << 1) | kLinkFree, last_hop, &c.train, size,
                                   c.mtu, bw, p.latency)
                     .ps() /
                 p.lanes;
    return;
  }
  StoreAndForwardDelays& delays = l.slow == kNone ? p.delays : slow_[l.slow].delays;
  delays.For(size);
  const Time arrival = delays.arrival();
  const Time busy = delays.busy();
  if (busy == Time() && size > 0) {
    zero_time_.Note(symmetry_ != nullptr ? symmetry_->Rep(c.npu) : c.npu, size,
                    delays.serialization_ns());
  }
  l.busy_ps += busy.ps() / p.lanes;
  // Arrival first, then link-free: at equal times they run in this order, as in ASTRA-sim.
  sim_.ScheduleAfter(arrival, this, (uint64_t{chunk} << 1) | kArrival);
  sim_.ScheduleAfter(busy, this, (uint64_t{link} << 1) | kLinkFree);
}

void AnalyticalAwareNetwork::OnEvent(uint64_t arg) {
  const uint32_t index = static_cast<uint32_t>(arg >> 1);
  if ((arg & 1) == kLinkFree) {
    Link& l = links_[index];
    --l.busy;
    if (!l.waiting.empty()) Transmit(index, l.waiting.Pop(chunks_));
    return;
  }
  Chunk& c = chunks_[index];
  c.npu = c.next_npu;
  c.switch_dim = c.next_switch_dim;
  if (c.switch_dim < 0 && c.npu == c.dst) {
    DeliveryHandler* handler = c.handler;
    const uint64_t token = c.token;
    // Free the record first: the handler may Send again and reuse it.
    chunks_.Release(index);
    handler->OnDelivered(token);
    return;
  }
  Forward(index);
}

std::string AnalyticalAwareNetwork::DeviceName(int dim, int npu, bool is_switch) const {
  if (!is_switch) return "npu" + std::to_string(npu);
  const Dim& p = dims_[dim];
  // Switches of a dimension: one per combination of the other coordinates.
  const int group = npu % p.stride + npu / (p.stride * p.npus) * p.stride;
  if (dims_.size() == 1) return "sw" + std::to_string(group);
  return "sw" + std::to_string(dim) + "." + std::to_string(group);
}

void AnalyticalAwareNetwork::ScaleLinkBandwidths(const std::vector<size_t>& indices, double scale) {
  ORRERY_CHECK(scale > 0, "a link's bandwidth scale must be > 0");
  // `indices` count the links Links() lists, which leaves out Mesh placeholders.
  size_t listed = 0;
  auto next = indices.begin();
  for (Link& l : links_) {
    if (next == indices.end()) break;
    if (l.kind == LinkKind::kAbsent) continue;
    if (listed++ != *next) continue;
    ++next;
    const Dim& p = dims_[l.dim];
    const Bandwidth bw = Bandwidth::FromBytesPerSec(
        (l.slow == kNone ? p.bandwidth : slow_[l.slow].bandwidth).bytes_per_sec() * scale);
    const SlowLink slow{bw, StoreAndForwardDelays(p.latency.Ns(), bw.bytes_per_ns())};
    if (l.slow == kNone) {
      l.slow = static_cast<uint32_t>(slow_.size());
      slow_.push_back(slow);
    } else {
      slow_[l.slow] = slow;
    }
  }
  ORRERY_CHECK(next == indices.end(), "a link index past the last link, or out of order");
}

std::vector<LinkStats> AnalyticalAwareNetwork::Links() const {
  std::vector<LinkStats> out;
  out.reserve(links_.size());
  const std::string no_prefix;
  for (size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    if (l.kind == LinkKind::kAbsent) continue;
    // With a symmetry, a link carried what its orbit's representative did.
    const Link& carried = canonical_.empty() ? l : links_[canonical_[i]];
    const std::string prefix = dims_.size() == 1 ? no_prefix : "d" + std::to_string(l.dim) + ":";
    std::string name;
    switch (l.kind) {
      case LinkKind::kNpuToNpu:
        name = DeviceName(l.dim, l.npu, false) + "->" + DeviceName(l.dim, l.peer, false);
        break;
      case LinkKind::kNpuToSwitch:
        name = DeviceName(l.dim, l.npu, false) + "->" + DeviceName(l.dim, l.npu, true);
        break;
      case LinkKind::kSwitchToNpu:
        name = DeviceName(l.dim, l.npu, true) + "->" + DeviceName(l.dim, l.npu, false);
        break;
      case LinkKind::kAbsent:
        break;
    }
    out.push_back(
        LinkStats{prefix + name, carried.bytes, Time::FromPs(carried.busy_ps), std::nullopt});
  }
  return out;
}

}  // namespace orrery
