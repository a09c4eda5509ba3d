#include "network/analytical_aware/graph_network.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>

#include "common/status.h"
#include "network/analytical_aware/forwarding.h"

namespace orrery {

namespace {

constexpr uint64_t kArrival = 0;
constexpr uint64_t kLinkFree = 1;

}  // namespace

GraphNetwork::GraphNetwork(Simulation& sim, Topology topology, Options options)
    : sim_(sim),
      topology_(std::move(topology)),
      graph_(topology_.graph.get()),
      pipeline_mtu_(options.pipeline_mtu) {
  ORRERY_CHECK(graph_ != nullptr, "GraphNetwork needs a topology with a graph");
  ORRERY_CHECK(graph_->hops_.size() == graph_->devices.size() * graph_->num_npus,
               "the graph's routes are not built (PhysicalGraph::BuildRoutes)");
  ORRERY_CHECK(graph_->links.size() < kNone, "too many links");
  ORRERY_CHECK(topology_.num_npus() == graph_->num_npus,
               "the logical dimensions do not multiply to the graph's NPU count");
  links_.resize(graph_->links.size());
  for (size_t i = 0; i < links_.size(); ++i) {
    links_[i].latency = graph_->links[i].latency;
    links_[i].bandwidth = graph_->links[i].bandwidth;
    ORRERY_CHECK(links_[i].bandwidth.bytes_per_ns() > 0, "a link has a non-positive bandwidth");
    links_[i].delays =
        StoreAndForwardDelays(links_[i].latency.Ns(), links_[i].bandwidth.bytes_per_ns());
  }
}

void GraphNetwork::ScaleLinkBandwidths(const std::vector<size_t>& indices, double scale) {
  ORRERY_CHECK(scale > 0, "a link's bandwidth scale must be > 0");
  for (size_t i : indices) {
    ORRERY_CHECK(i < links_.size(), "no link " + std::to_string(i));
    Link& l = links_[i];
    l.bandwidth = Bandwidth::FromBytesPerSec(l.bandwidth.bytes_per_sec() * scale);
    l.delays = StoreAndForwardDelays(l.latency.Ns(), l.bandwidth.bytes_per_ns());
  }
}

std::optional<std::vector<int64_t>> GraphNetwork::RouteSignature(
    const std::vector<int>& members) const {
  return SignatureOfRoutes(
      members, [this](int src, int dst) { return graph_->Route(src, dst); },
      [this](uint32_t l) {
        return std::array<int64_t, 3>{BandwidthBits(links_[l].bandwidth), links_[l].latency.ps(),
                                      1};
      });
}

void GraphNetwork::Send(int src, int dst, Bytes size, DeliveryHandler* handler, uint64_t token) {
  Launch(src, dst, size.count(), pipeline_mtu_, handler, token);
}

void GraphNetwork::SendInPieces(int src, int dst, Bytes size, uint64_t piece,
                                DeliveryHandler* handler, uint64_t token) {
  ORRERY_CHECK(piece > 0, "a message's pieces need at least one byte");
  Launch(src, dst, size.count(), PieceUnit(pipeline_mtu_, piece), handler, token);
}

void GraphNetwork::Launch(int src, int dst, uint64_t size, uint64_t mtu, DeliveryHandler* handler,
                          uint64_t token) {
  CheckSendEndpoints(src, dst, graph_->num_npus);
  const uint32_t id = chunks_.Acquire();
  Chunk& c = chunks_[id];
  c.handler = handler;
  c.token = token;
  c.size = size;
  c.mtu = mtu;
  c.src = src;
  c.dst = dst;
  c.at = src;
  c.train = {sim_.now(), sim_.now()};
  Forward(id);
}

void GraphNetwork::Forward(uint32_t chunk) {
  Chunk& c = chunks_[chunk];
  c.link = graph_->NextLink(c.at, c.src, c.dst);
  Link& l = links_[c.link];
  if (l.busy) {
    l.waiting.Push(chunks_, chunk);
  } else {
    Transmit(c.link, chunk);
  }
}

void GraphNetwork::Transmit(uint32_t link, uint32_t chunk) {
  Link& l = links_[link];
  Chunk& c = chunks_[chunk];
  const uint64_t size = c.size;
  l.busy = true;
  l.bytes += size;
  if (c.mtu != 0) {
    l.busy_ps +=
        StartPipelinedHop(sim_, this, (uint64_t{chunk} << 1) | kArrival,
                          (uint64_t{link} << 1) | kLinkFree, graph_->links[link].dst == c.dst,
                          &c.train, size, c.mtu, l.bandwidth, l.latency)
            .ps();
    return;
  }
  l.delays.For(size);
  if (l.delays.busy() == Time() && size > 0) {
    zero_time_.Note(static_cast<size_t>(c.at), size, l.delays.serialization_ns());
  }
  l.busy_ps += l.delays.busy().ps();
  // Arrival first, then link-free: at equal times they run in this order.
  sim_.ScheduleAfter(l.delays.arrival(), this, (uint64_t{chunk} << 1) | kArrival);
  sim_.ScheduleAfter(l.delays.busy(), this, (uint64_t{link} << 1) | kLinkFree);
}

void GraphNetwork::OnEvent(uint64_t arg) {
  const uint32_t index = static_cast<uint32_t>(arg >> 1);
  if ((arg & 1) == kLinkFree) {
    Link& l = links_[index];
    l.busy = false;
    if (!l.waiting.empty()) Transmit(index, l.waiting.Pop(chunks_));
    return;
  }
  Chunk& c = chunks_[index];
  c.at = graph_->links[c.link].dst;
  if (c.at == c.dst) {
    DeliveryHandler* handler = c.handler;
    const uint64_t token = c.token;
    chunks_.Release(index);  // first: the handler may Send again and reuse it
    handler->OnDelivered(token);
    return;
  }
  Forward(index);
}

std::vector<LinkStats> GraphNetwork::Links() const {
  std::vector<LinkStats> out;
  out.reserve(links_.size());
  std::map<std::string, int> seen;
  for (size_t i = 0; i < links_.size(); ++i) {
    const PhysicalGraph::Link& g = graph_->links[i];
    std::string name = graph_->devices[g.src].name + "->" + graph_->devices[g.dst].name;
    const int count = ++seen[name];
    if (count > 1) name += "#" + std::to_string(count);
    out.push_back(LinkStats{name, links_[i].bytes, Time::FromPs(links_[i].busy_ps), std::nullopt});
  }
  return out;
}

}  // namespace orrery
