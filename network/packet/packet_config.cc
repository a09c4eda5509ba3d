// What a packet network is built from (declared in packet_network.h): the graph of a
// dimensions network, the port limits of a link, and the checks of the packet keys against
// every link.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>
#include <utility>

#include "network/packet/packet_network.h"

namespace orrery {

namespace {

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// "400 GB/s, 936.25 ns" in the network YAML's units (GB = 2^30 B).
std::string Describe(Bandwidth bw, Time latency) {
  return FormatNumber(bw.bytes_per_sec() / 1073741824.0) + " GB/s, " + FormatNumber(latency.Ns()) +
         " ns";
}

// NPUs relay other NPUs' traffic on a ring or a mesh, and between the dimensions of several.
bool NpusRelay(const std::vector<Dimension>& dims) {
  return dims.size() > 1 ||
         (!dims.empty() && (dims[0].type == BlockType::kRing || dims[0].type == BlockType::kMesh));
}

}  // namespace

StatusOr<std::shared_ptr<const PhysicalGraph>> GraphFromDimensions(
    const std::vector<Dimension>& dims) {
  if (dims.empty()) return Status::Error("the network has no dimensions");
  double npus = 1, links = 0;
  for (const Dimension& d : dims) npus *= d.npus;
  for (const Dimension& d : dims) {
    const double per_npu = d.type == BlockType::kFullyConnected ? d.npus - 1.0 : 2.0;
    links += npus * per_npu;
  }
  if (npus > kMaxPacketNpus) {
    return Status::Error("the packet backend models at most " + std::to_string(kMaxPacketNpus) +
                         " NPUs (its routes are a table of devices x NPUs); this network has " +
                         FormatNumber(npus));
  }
  if (links > static_cast<double>(kMaxPacketLinks)) {
    return Status::Error("the packet backend models at most " + std::to_string(kMaxPacketLinks) +
                         " links; this network has " + FormatNumber(links));
  }
  const int n = static_cast<int>(npus);
  const bool relay = NpusRelay(dims);
  auto g = std::make_shared<PhysicalGraph>();
  g->AddNpus(n, relay);
  g->description = std::to_string(dims.size()) + "-D network of " + std::to_string(n) + " NPUs";
  int stride = 1;
  for (size_t di = 0; di < dims.size(); ++di) {
    const Dimension& d = dims[di];
    const int k = d.npus;
    g->dimension_sizes.push_back(k);
    const size_t first_link = g->links.size();
    const Bandwidth bw = d.bandwidth;
    const Time lat = d.latency;
    if (d.type == BlockType::kSwitch) {
      // One switch per group of NPUs that differ only in this dimension's coordinate; group =
      // the NPU id with that coordinate removed (as the congestion-aware backend names them).
      for (int group = 0; group < n / k; ++group) {
        const int low = group % stride, high = group / stride;
        const std::string name = dims.size() == 1
                                     ? "sw" + std::to_string(group)
                                     : "sw" + std::to_string(di) + "." + std::to_string(group);
        const int sw = g->AddDevice(name, /*npu=*/false, /*forwards=*/true);
        for (int c = 0; c < k; ++c) {
          const int npu = low + c * stride + high * stride * k;
          g->AddBidirectional(npu, sw, bw, lat);
        }
      }
    } else {
      for (int npu = 0; npu < n; ++npu) {
        const int c = (npu / stride) % k;
        const int base = npu - c * stride;
        if (d.type == BlockType::kFullyConnected) {
          for (int o = 0; o < k; ++o) {
            if (o != c) g->AddLink(npu, base + o * stride, bw, lat);
          }
        } else if (d.type == BlockType::kRing) {
          // Clockwise first (as the analytical backends); a 2-NPU ring has one link each way.
          g->AddLink(npu, base + ((c + 1) % k) * stride, bw, lat);
          if (k > 2) g->AddLink(npu, base + ((c + k - 1) % k) * stride, bw, lat);
        } else {  // Mesh: a line, no wrap-around
          if (c + 1 < k) g->AddLink(npu, base + (c + 1) * stride, bw, lat);
          if (c > 0) g->AddLink(npu, base + (c - 1) * stride, bw, lat);
        }
      }
    }
    for (size_t l = first_link; l < g->links.size(); ++l) {
      g->links[l].dimension = static_cast<int>(di);
    }
    stride *= k;
  }
  Status routed = g->BuildRoutes();
  if (!routed.ok()) return routed;
  return std::shared_ptr<const PhysicalGraph>(std::move(g));
}

namespace {

// The largest port buffer, as the largest packet-buffer-bytes.
constexpr uint64_t kMaxBufferBytes = uint64_t{1} << 40;

// The shortest time a packet may take on a link (CheckPacketTopology).
constexpr double kMinPacketPs = 100;

// ceil(2 x latency x bandwidth): the bytes a link holds over a round trip. Saturates at 2^62
// (CheckPacketTopology refuses links past 2^40), so the sums below cannot wrap.
uint64_t RoundTripBytes(Bandwidth bw, Time latency) {
  const double bytes = std::ceil(2.0 * latency.Ns() * bw.bytes_per_ns());
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  return bytes < kLimit ? static_cast<uint64_t>(bytes) : uint64_t{1} << 62;
}

}  // namespace

uint64_t PfcHeadroomBytes(Bandwidth bw, Time latency, uint64_t mtu) {
  // After the packet that crosses xoff arrives (<= 1 MTU over xoff), the pause needs one
  // latency to reach the sender, which then finishes the packet it is serializing; everything
  // already on the wire still lands: at most 2 * latency * bandwidth + 2 MTU more.
  return RoundTripBytes(bw, latency) + 3 * mtu;
}

PortLimits ResolvePortLimits(const NetworkParams& p, Bandwidth bw, Time latency, bool relay) {
  PortLimits l;
  const uint64_t round_trip = RoundTripBytes(bw, latency);
  // Auto: a round trip of data plus 16 packets, enough for line rate with credits, and for PFC
  // 13 packets between xoff and zero; into a relaying NPU, its memory (kRelayBufferBytes).
  l.buffer_bytes = p.buffer_bytes > 0
                       ? p.buffer_bytes
                       : std::max(round_trip + 16 * p.mtu, relay ? kRelayBufferBytes : uint64_t{0});
  const uint64_t headroom = PfcHeadroomBytes(bw, latency, p.mtu);
  l.xoff_bytes = p.pfc_xoff_bytes > 0 ? p.pfc_xoff_bytes
                                      : (l.buffer_bytes > headroom ? l.buffer_bytes - headroom : 0);
  l.xon_bytes = p.pfc_xon_bytes > 0
                    ? p.pfc_xon_bytes
                    : (l.xoff_bytes > 2 * p.mtu ? l.xoff_bytes - 2 * p.mtu : l.xoff_bytes / 2);
  return l;
}

namespace {

// Every kind of link once: (bandwidth, latency, into a relaying NPU, a name for messages).
// A link into a relaying NPU has that NPU's memory for a buffer (ResolvePortLimits).
struct LinkKind {
  Bandwidth bw;
  Time latency;
  bool relay;
  std::string name;
  std::string into;  // " into a relaying NPU", " into a switch", or empty
  std::string Label() const { return name + " (" + Describe(bw, latency) + ")" + into; }
};

// The kinds of link of `t`, or why the packet backend cannot run it at all (the MTU, lanes, too
// many NPUs).
StatusOr<std::vector<LinkKind>> LinkKinds(const Topology& t, const NetworkParams& p) {
  if (p.mtu < 64 || p.mtu > (uint64_t{1} << 24)) {
    return Status::Error("key 'packet-mtu' is " + std::to_string(p.mtu) +
                         "; expected 64 .. 16777216 bytes");
  }
  for (size_t d = 0; t.graph == nullptr && d < t.dims.size(); ++d) {
    if (t.dims[d].lanes != 1) {
      return Status::Error(
          "key 'lanes' is " + std::to_string(t.dims[d].lanes) + " for dimension " +
          std::to_string(d) +
          "; the packet backend has one link per pair of devices (expected 1; lanes are "
          "modelled by the analytical backends)");
    }
  }
  std::vector<LinkKind> kinds;
  if (t.graph != nullptr) {
    std::set<std::tuple<double, int64_t, bool>> seen;
    for (const PhysicalGraph::Link& l : t.graph->links) {
      const PhysicalGraph::Device& to = t.graph->devices[l.dst];
      const bool relay = to.npu && to.forwards;
      if (!seen.emplace(l.bandwidth.bytes_per_sec(), l.latency.ps(), relay).second) continue;
      kinds.push_back({l.bandwidth, l.latency, relay,
                       "link " + t.graph->devices[l.src].name + "->" + to.name, ""});
    }
    return kinds;
  }
  double npus = 1;
  for (const Dimension& d : t.dims) npus *= d.npus;
  if (npus > kMaxPacketNpus) {
    return Status::Error("the packet backend models at most " + std::to_string(kMaxPacketNpus) +
                         " NPUs (its routes are a table of devices x NPUs); this network has " +
                         FormatNumber(npus) + " (use analytical-aware for larger machines)");
  }
  // Every dimension has links into NPUs (a switch's down-links, or NPU to NPU), and a switch
  // dimension also links up into its switches.
  const bool relay = NpusRelay(t.dims);
  for (size_t d = 0; d < t.dims.size(); ++d) {
    const std::string name =
        "a link of dimension " + std::to_string(d) + " (" + BlockTypeName(t.dims[d].type) + ")";
    if (relay) {
      kinds.push_back({t.dims[d].bandwidth, t.dims[d].latency, true, name, " into a relaying NPU"});
    }
    if (!relay || t.dims[d].type == BlockType::kSwitch) {
      kinds.push_back(
          {t.dims[d].bandwidth, t.dims[d].latency, false, name, relay ? " into a switch" : ""});
    }
  }
  return kinds;
}

}  // namespace

Status CheckPacketTopology(const Topology& t, const NetworkParams& p) {
  StatusOr<std::vector<LinkKind>> link_kinds = LinkKinds(t, p);
  if (!link_kinds.ok()) return link_kinds.status();
  const std::vector<LinkKind>& kinds = *link_kinds;
  Status problems;
  const bool pfc = p.flow_control == NetworkParams::FlowControl::kPfc;

  // The most demanding link decides; one message per key.
  uint64_t need_buffer = 0, need_xoff_max = UINT64_MAX;
  std::string buffer_link, xoff_link, xon_link;
  for (const LinkKind& k : kinds) {
    // Packets are timed in whole picoseconds: a packet must take at least 100 of them on every
    // link, so that rounding its serialization moves a link's rate by at most 1% (64 B at
    // 10^6 GB/s had taken 0 ps: an instant link, paced by credits alone).
    const double packet_ps = static_cast<double>(p.mtu) / k.bw.bytes_per_ns() * 1000.0;
    if (packet_ps < kMinPacketPs) {
      problems.Add("key 'packet-mtu' is " + std::to_string(p.mtu) + ", which " + k.Label() +
                   " sends in " + FormatNumber(packet_ps) +
                   " ps; packets are timed in whole picoseconds, so one must take at least " +
                   FormatNumber(kMinPacketPs) + " ps on every link (1% rounding): expected " +
                   "a packet-mtu of at least " +
                   FormatNumber(std::ceil(kMinPacketPs / 1000.0 * k.bw.bytes_per_ns())) +
                   " B, or slower links");
      return problems;
    }
    // The automatic buffer and the PFC headroom hold a round trip of data: past the largest
    // buffer, the link is out of the packet backend's range (credits with a given buffer still
    // run it, at buffer / round trip).
    const uint64_t round_trip = RoundTripBytes(k.bw, k.latency);
    // Automatic: a round trip + 16 MTU; PFC's least buffer: headroom (+ 3 MTU) + 1 MTU.
    const uint64_t extra_mtus = p.buffer_bytes == 0 ? 16 : 4;
    if ((p.buffer_bytes == 0 || pfc) && round_trip > kMaxBufferBytes - extra_mtus * p.mtu) {
      problems.Add(k.Label() + " holds " +
                   FormatNumber(std::ceil(2.0 * k.latency.Ns() * k.bw.bytes_per_ns())) +
                   " bytes over a round trip (2 x latency x bandwidth), so the " +
                   (p.buffer_bytes == 0 ? "automatic packet-buffer-bytes"
                                        : "packet-buffer-bytes PFC needs") +
                   " (that plus " + std::to_string(extra_mtus) +
                   " MTU) would be above 2^40 bytes, the largest port buffer; expected links "
                   "with 2 x latency x bandwidth below 2^40 bytes" +
                   (pfc ? "" : ", or a packet-buffer-bytes of at most 2^40 that paces the link"));
      return problems;
    }
    const PortLimits l = ResolvePortLimits(p, k.bw, k.latency, k.relay);
    const uint64_t headroom = PfcHeadroomBytes(k.bw, k.latency, p.mtu);
    // Credit: a packet plus the bubble a new packet needs (network/README.md). PFC: xoff at
    // least one packet above zero, and the headroom above it.
    const uint64_t need = pfc ? headroom + p.mtu : 2 * p.mtu;
    if (need > need_buffer) {
      need_buffer = need;
      buffer_link = k.Label();
    }
    if (pfc && p.pfc_xon_bytes > 0 && l.xon_bytes >= l.xoff_bytes && xon_link.empty()) {
      xon_link = k.Label() + ", whose xoff is " + std::to_string(l.xoff_bytes);
    }
    if (pfc && l.buffer_bytes >= headroom && l.buffer_bytes - headroom < need_xoff_max) {
      need_xoff_max = l.buffer_bytes - headroom;
      xoff_link = k.Label();
    }
  }
  if (!xon_link.empty()) {
    problems.Add("key 'packet-pfc-xon-bytes' is " + std::to_string(p.pfc_xon_bytes) +
                 "; expected less than packet-pfc-xoff-bytes of every link, but " + xon_link);
  }
  if (p.buffer_bytes > 0 && p.buffer_bytes < need_buffer) {
    problems.Add("key 'packet-buffer-bytes' is " + std::to_string(p.buffer_bytes) + " but " +
                 buffer_link + " needs at least " + std::to_string(need_buffer) +
                 (pfc ? " with PFC (headroom ceil(2 x latency x bandwidth) + 3 MTU, plus one MTU "
                        "below xoff)"
                      : " with credits (two MTUs)") +
                 "; expected " + std::to_string(need_buffer) +
                 " .. 2^40, or 0 for automatic sizing");
  } else if (pfc && p.pfc_xoff_bytes > 0 &&
             (p.pfc_xoff_bytes < p.mtu || p.pfc_xoff_bytes > need_xoff_max)) {
    problems.Add("key 'packet-pfc-xoff-bytes' is " + std::to_string(p.pfc_xoff_bytes) +
                 "; expected " + std::to_string(p.mtu) + " .. " + std::to_string(need_xoff_max) +
                 " (one MTU .. buffer - headroom of " + xoff_link + "), or 0 for automatic");
  }
  return problems;
}

}  // namespace orrery
