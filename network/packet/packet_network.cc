#include "network/packet/packet_network.h"

#include <algorithm>
#include <map>
#include <utility>

namespace orrery {

namespace {

constexpr uint64_t kTxDone = 0;   // the port finished serializing a packet
constexpr uint64_t kArrival = 1;  // the head of the port's in-flight list reached the far end
constexpr uint64_t kWake = 2;     // a flow-control message the blocked port waits for arrives

}  // namespace

PacketNetwork::PacketNetwork(Simulation& sim, Topology topology, const NetworkParams& params)
    : sim_(sim), topology_(std::move(topology)), params_(params) {
  if (topology_.graph != nullptr) {
    graph_holder_ = topology_.graph;
  } else {
    StatusOr<std::shared_ptr<const PhysicalGraph>> g = GraphFromDimensions(topology_.dims);
    ORRERY_CHECK(g.ok(), "the packet backend cannot build this network (CheckPacketTopology): " +
                             g.status().message());
    graph_holder_ = *g;
  }
  graph_ = graph_holder_.get();
  ORRERY_CHECK(graph_->hops_.size() == graph_->devices.size() * graph_->num_npus,
               "the graph's routes are not built (PhysicalGraph::BuildRoutes)");
  ORRERY_CHECK(topology_.num_npus() == graph_->num_npus,
               "the logical dimensions do not multiply to the graph's NPU count");
  pfc_ = params_.flow_control == NetworkParams::FlowControl::kPfc;
  ports_.resize(graph_->links.size());
  for (size_t i = 0; i < ports_.size(); ++i) {
    const PhysicalGraph::Link& l = graph_->links[i];
    ORRERY_CHECK(l.bandwidth.bytes_per_sec() > 0, "a link has a non-positive bandwidth");
    Port& p = ports_[i];
    p.latency_ps = l.latency.ps();
    p.bandwidth = l.bandwidth;
    p.mtu_serialization_ps = (Bytes(params_.mtu) / l.bandwidth).ps();
    p.dst_device = l.dst;
    p.bubble = graph_->devices[l.dst].npu && graph_->devices[l.dst].forwards;
    p.limits = ResolvePortLimits(params_, l.bandwidth, l.latency, p.bubble);
    p.credits = static_cast<int64_t>(p.limits.buffer_bytes);
  }
  // Single-path hops resolved once (most hops in switched and ring machines), when the table and
  // the work to fill it (every link against every NPU) stay small.
  const size_t nd = graph_->devices.size();
  const size_t n = graph_->num_npus;
  if (nd * n <= (size_t{1} << 24) && graph_->links.size() * n <= (size_t{1} << 27)) {
    unique_next_.assign(nd * n, kNone);
    for (size_t at = 0; at < nd; ++at) {
      for (size_t dst = 0; dst < n; ++dst) {
        if (at == dst || graph_->Distance(at, dst) == PhysicalGraph::kUnreachable) continue;
        uint32_t only = kNone, count = 0;
        const int dimension = graph_->SendDimension(at, dst);
        for (uint32_t k = graph_->out_begin_[at]; k < graph_->out_begin_[at + 1]; ++k) {
          const uint32_t link = graph_->out_links_[k];
          if (graph_->IsNextHopAlong(at, link, dst, dimension)) {
            only = link;
            ++count;
          }
        }
        if (count == 1) unique_next_[at * n + dst] = only;
      }
    }
  }
}

// Inline: the single-path lookup is most of the hops, on the hot path.
inline uint32_t PacketNetwork::Route(int at, int src, int dst) const {
  if (!unique_next_.empty()) {
    const uint32_t only = unique_next_[static_cast<size_t>(at) * graph_->num_npus + dst];
    if (only != kNone) return only;
  }
  return RouteAmong(at, src, dst);
}

uint32_t PacketNetwork::RouteAmong(int at, int src, int dst) const {
  const uint32_t ecmp = graph_->NextLink(at, src, dst);
  if (params_.routing != NetworkParams::Routing::kAdaptive) return ecmp;
  // Adaptive: the least loaded candidate, by bytes waiting at the port (the packet being
  // serialized, transit packets and, at an NPU, messages to inject); ties keep ECMP's pick.
  auto load = [&](uint32_t link) {
    const Port& p = ports_[link];
    return (p.busy ? p.serving_bytes : 0) + p.queue_bytes + p.message_bytes;
  };
  uint32_t best = ecmp;
  uint64_t best_load = load(ecmp);
  const int dimension = graph_->SendDimension(at, dst);
  for (uint32_t k = graph_->out_begin_[at]; k < graph_->out_begin_[at + 1]; ++k) {
    const uint32_t link = graph_->out_links_[k];
    if (graph_->IsNextHopAlong(at, link, dst, dimension) && load(link) < best_load) {
      best = link;
      best_load = load(link);
    }
  }
  return best;
}

std::optional<std::vector<int64_t>> PacketNetwork::RouteSignature(
    const std::vector<int>& members) const {
  const bool adaptive = params_.routing == NetworkParams::Routing::kAdaptive;
  std::vector<int64_t> signature;
  FirstUse devices, links;
  auto device = [&](int d) { return devices.Number(static_cast<uint32_t>(d)); };
  std::vector<uint32_t> expanded(graph_->devices.size(), 0);  // the pair (from 1) that expanded it
  uint32_t pair = 0;
  std::vector<int> stack;
  std::vector<uint32_t> candidates;
  for (int src : members) {
    for (int dst : members) {
      if (src == dst) continue;
      ++pair;
      // Every device a packet from src to dst can be at, depth first: its next links (with ECMP
      // the one NextLink picks; adaptive: every candidate, in out-link order, and which is
      // ECMP's, which wins ties), each with its far device.
      signature.push_back(-1);
      signature.push_back(device(src));
      stack.assign(1, src);
      expanded[src] = pair;
      while (!stack.empty()) {
        const int at = stack.back();
        stack.pop_back();
        const uint32_t ecmp = graph_->NextLink(at, src, dst);
        candidates.clear();
        if (adaptive) {
          for (uint32_t k = graph_->out_begin_[at]; k < graph_->out_begin_[at + 1]; ++k) {
            if (graph_->IsNextHop(at, graph_->out_links_[k], dst)) {
              candidates.push_back(graph_->out_links_[k]);
            }
          }
        } else {
          candidates.push_back(ecmp);
        }
        signature.push_back(device(at));
        signature.push_back(static_cast<int64_t>(candidates.size()));
        signature.push_back(std::find(candidates.begin(), candidates.end(), ecmp) -
                            candidates.begin());
        for (uint32_t l : candidates) {
          const int w = graph_->links[l].dst;
          signature.push_back(links.Number(l));
          signature.push_back(device(w));
          if (w != dst && expanded[w] != pair) {
            expanded[w] = pair;
            stack.push_back(w);
          }
        }
        if (signature.size() > kMaxSignatureValues) return std::nullopt;
      }
    }
  }
  // What a port's timing and flow control depend on.
  for (uint32_t l : links.used()) {
    const Port& p = ports_[l];
    for (int64_t v :
         {BandwidthBits(p.bandwidth), p.latency_ps, p.mtu_serialization_ps,
          static_cast<int64_t>(p.bubble), static_cast<int64_t>(p.limits.buffer_bytes),
          static_cast<int64_t>(p.limits.xoff_bytes), static_cast<int64_t>(p.limits.xon_bytes)}) {
      signature.push_back(v);
    }
  }
  return signature;
}

uint32_t PacketNetwork::NewPacket() {
  if (free_packets_ != kNone) {
    const uint32_t id = free_packets_;
    free_packets_ = packets_[id].next;
    return id;
  }
  ORRERY_CHECK(packets_.size() < kNone, "too many packets in flight");
  packets_.emplace_back();
  return static_cast<uint32_t>(packets_.size() - 1);
}

void PacketNetwork::Send(int src, int dst, Bytes size, DeliveryHandler* handler, uint64_t token) {
  CheckSendEndpoints(src, dst, graph_->num_npus);
  const uint64_t packets = size.count() / params_.mtu + (size.count() % params_.mtu != 0);
  if (packets > kMaxPacketsPerMessage) {
    if (error_.ok()) {
      error_ = Status::Error(
          "the packet backend cannot simulate a message of " + std::to_string(size.count()) +
          " B from NPU " + std::to_string(src) + " to NPU " + std::to_string(dst) + ": " +
          std::to_string(packets) + " packets of packet-mtu " + std::to_string(params_.mtu) +
          " B, above its limit of " + std::to_string(kMaxPacketsPerMessage) +
          " per message; use the analytical-aware backend for messages this large");
    }
    sim_.Abort();
    return;
  }
  const uint32_t id = messages_.Acquire();
  Message& m = messages_[id];
  m.handler = handler;
  m.token = token;
  m.size = size.count();
  m.unsent = m.size;
  m.delivered = 0;
  m.src = src;
  m.dst = dst;
  const uint32_t out = Route(src, src, dst);
  Port& p = ports_[out];
  p.messages.Push(messages_, id);
  p.message_bytes += m.size;
  TrySend(out);
}

void PacketNetwork::SetQueueBytes(uint32_t port, uint64_t bytes) {
  Port& p = ports_[port];
  const int64_t now = sim_.now().ps();
  if (!depths_.empty()) RecordDepth(port, bytes);
  p.queue_area +=
      static_cast<double>(p.queue_bytes) * static_cast<double>(now - p.queue_changed_ps);
  // The deepest queue is of the depths held for some time, as the mean: a packet queued and
  // sent in the same instant (every packet at an idle port) did not wait.
  if (now > p.queue_changed_ps) p.max_queue_bytes = std::max(p.max_queue_bytes, p.queue_bytes);
  p.queue_changed_ps = now;
  p.queue_bytes = bytes;
}

void PacketNetwork::Absorb(Port& p) {
  const int64_t now = sim_.now().ps();
  while (p.control_head < p.control.size() && p.control[p.control_head].time_ps <= now) {
    const Control& c = p.control[p.control_head++];
    if (pfc_) {
      p.paused = c.value != 0;
    } else {
      p.credits += c.value;
    }
  }
  if (p.control_head == p.control.size()) {
    p.control.clear();
    p.control_head = 0;
  } else if (p.control_head >= 1024 && 2 * p.control_head >= p.control.size()) {
    p.control.erase(p.control.begin(), p.control.begin() + p.control_head);
    p.control_head = 0;
  }
}

void PacketNetwork::PushControl(uint32_t port, int64_t value) {
  Port& p = ports_[port];
  const int64_t at = (sim_.now() + Time::FromPs(p.latency_ps)).ps();  // saturates
  if (!pfc_ && p.control_head < p.control.size() && p.control.back().time_ps == at) {
    p.control.back().value += value;  // credits returned at the same instant travel together
  } else {
    p.control.push_back(Control{at, value});
  }
  if (p.blocked && !p.wake_armed) {
    p.wake_armed = true;
    sim_.Schedule(Time::FromPs(p.control[p.control_head].time_ps), this,
                  (uint64_t{port} << 2) | kWake);
  }
}

void PacketNetwork::ReleaseIngress(uint32_t port, uint64_t bytes) {
  if (port == kNone) return;  // injected here: it held no ingress buffer
  Port& p = ports_[port];
  p.ingress_bytes -= bytes;
  if (!pfc_) {
    PushControl(port, static_cast<int64_t>(bytes));
  } else if (p.xoff_sent && p.ingress_bytes <= p.limits.xon_bytes) {
    p.xoff_sent = false;
    PushControl(port, 0);
  }
}

bool PacketNetwork::EntersDimension(uint32_t in_port, uint32_t out_port) const {
  if (in_port == kNone) return false;
  const int in = graph_->links[in_port].dimension;
  return in >= 0 && in != graph_->links[out_port].dimension;
}

void PacketNetwork::TrySend(uint32_t port) {
  Port& p = ports_[port];
  if (p.busy) return;
  const bool have_transit = !p.queue.empty();
  const bool have_turning = !p.turning.empty();
  const bool have_local = !p.messages.empty();
  if (!have_transit && !have_turning && !have_local) return;
  Absorb(p);
  const int64_t now = sim_.now().ps();
  const uint64_t local_bytes =
      have_local ? std::min(params_.mtu, messages_[p.messages.head].unsent) : 0;
  // Credits: a packet entering a ring of relaying NPUs also needs one MTU of slack downstream
  // (bubble flow control), so entering traffic can never fill the ring and deadlock it. A packet
  // enters a ring when it is injected, and when it turns into this port's dimension from another
  // at a relaying NPU (a torus routed X then Y enters the Y ring there); one continuing along
  // the ring needs only its own room.
  auto fits = [&](uint64_t bytes, bool entering) {
    return pfc_ ? !p.paused
                : p.credits >=
                      static_cast<int64_t>(bytes + (entering && p.bubble ? params_.mtu : 0));
  };
  const bool ok[3] = {have_transit && fits(packets_[p.queue.head].bytes, false),
                      have_turning && fits(packets_[p.turning.head].bytes, true),
                      have_local && fits(local_bytes, true)};
  int take = -1;
  for (int i = 0; i < 3 && take < 0; ++i) {
    const int c = (p.next_class + i) % 3;
    if (ok[c]) take = c;
  }
  if (take < 0) {
    if (!p.blocked) {
      p.blocked = true;
      p.blocked_since_ps = now;
    }
    if (!p.wake_armed && p.control_head < p.control.size()) {
      p.wake_armed = true;
      sim_.Schedule(Time::FromPs(p.control[p.control_head].time_ps), this,
                    (uint64_t{port} << 2) | kWake);
    }
    return;
  }
  if (p.blocked) {
    p.paused_ps += now - p.blocked_since_ps;
    p.blocked = false;
  }
  p.next_class = static_cast<uint8_t>((take + 1) % 3);

  uint32_t packet;
  uint64_t bytes;
  if (take == 2) {
    const uint32_t mid = p.messages.head;
    bytes = local_bytes;
    packet = NewPacket();
    Packet& k = packets_[packet];
    k.message = mid;
    k.bytes = static_cast<uint32_t>(bytes);
    k.in_port = kNone;
    Message& m = messages_[mid];
    m.unsent -= bytes;
    p.message_bytes -= bytes;
    if (m.unsent == 0) p.messages.Pop(messages_);
  } else {
    packet = (take == 0 ? p.queue : p.turning).Pop(packets_);
    const Packet& k = packets_[packet];
    bytes = k.bytes;
    SetQueueBytes(port, p.queue_bytes - bytes);
    ReleaseIngress(k.in_port, bytes);
  }
  if (!pfc_) p.credits -= static_cast<int64_t>(bytes);
  const int64_t serialization =
      bytes == params_.mtu ? p.mtu_serialization_ps : (Bytes(bytes) / p.bandwidth).ps();
  p.busy = true;
  p.serving_bytes = bytes;
  p.bytes += bytes;
  p.busy_ps = (Time::FromPs(p.busy_ps) + Time::FromPs(serialization)).ps();
  ++packet_hops_;
  Packet& k = packets_[packet];
  // Saturating: a time past int64 picoseconds is Infinite(), which Schedule reports.
  k.arrive_ps = (Time::FromPs(now) + Time::FromPs(serialization) + Time::FromPs(p.latency_ps)).ps();
  p.flight.Push(packets_, packet);
  // Arrival first, then tx-done: at equal times they run in this order (as the aware model).
  if (!p.arrival_armed) {
    p.arrival_armed = true;
    sim_.Schedule(Time::FromPs(k.arrive_ps), this, (uint64_t{port} << 2) | kArrival);
  }
  sim_.ScheduleAfter(Time::FromPs(serialization), this, (uint64_t{port} << 2) | kTxDone);
}

void PacketNetwork::OnArrival(uint32_t port) {
  Port& p = ports_[port];
  const int64_t now = sim_.now().ps();
  // arrival_armed stays set while delivering, so a Send from a handler that puts a packet on
  // this very link does not schedule a second arrival event.
  while (!p.flight.empty() && packets_[p.flight.head].arrive_ps <= now) {
    const uint32_t packet = p.flight.Pop(packets_);
    Packet& k = packets_[packet];
    const uint32_t mid = k.message;
    Message& m = messages_[mid];
    const int at = p.dst_device;
    if (at == m.dst) {
      // The NIC takes it at line rate: its credit goes straight back.
      if (!pfc_) PushControl(port, k.bytes);
      m.delivered += k.bytes;
      k.next = free_packets_;
      free_packets_ = packet;
      if (m.delivered == m.size) {
        DeliveryHandler* handler = m.handler;
        const uint64_t token = m.token;
        messages_.Release(mid);  // first: the handler may Send again and reuse it
        handler->OnDelivered(token);
      }
      continue;
    }
    const uint32_t out = Route(at, m.src, m.dst);
    p.ingress_bytes += k.bytes;
    ORRERY_CHECK(p.ingress_bytes <= p.limits.buffer_bytes,
                 "ingress buffer overrun at " + graph_->devices[at].name +
                     " (flow control must keep it lossless)");
    if (pfc_ && !p.xoff_sent && p.ingress_bytes >= p.limits.xoff_bytes) {
      p.xoff_sent = true;
      PushControl(port, 1);
    }
    k.in_port = port;
    Port& o = ports_[out];
    (o.bubble && EntersDimension(port, out) ? o.turning : o.queue).Push(packets_, packet);
    SetQueueBytes(out, o.queue_bytes + k.bytes);
    TrySend(out);
  }
  if (!p.flight.empty()) {
    sim_.Schedule(Time::FromPs(packets_[p.flight.head].arrive_ps), this,
                  (uint64_t{port} << 2) | kArrival);
  } else {
    p.arrival_armed = false;
  }
}

void PacketNetwork::OnEvent(uint64_t arg) {
  const uint32_t port = static_cast<uint32_t>(arg >> 2);
  switch (arg & 3) {
    case kTxDone:
      ports_[port].busy = false;
      TrySend(port);
      return;
    case kArrival:
      OnArrival(port);
      return;
    case kWake:
      ports_[port].wake_armed = false;
      TrySend(port);
      return;
  }
}

void PacketNetwork::RecordQueueDepths() {
  depths_.assign(ports_.size(), {});
  depth_peaks_.assign(ports_.size(), 0);
}

void PacketNetwork::RecordDepth(uint32_t port, uint64_t bytes) {
  std::vector<QueueSeries::Sample>& v = depths_[port];
  const Time now = sim_.now();
  // Several changes at one instant (a packet queued and sent at once) leave one sample: the
  // depth held after it.
  if (!v.empty() && v.back().time == now) {
    v.back().bytes = bytes;
    const uint64_t before = v.size() >= 2 ? v[v.size() - 2].bytes : 0;  // queues start empty
    if (before == bytes) v.pop_back();
    return;
  }
  // A sample per MTU of change keeps the series short; a new deepest depth is always sampled,
  // so that the track's peak is the port's max_queue_bytes (a queue under one MTU had no track,
  // and a peak reached in steps under one MTU was left out).
  const uint64_t last = v.empty() ? 0 : v.back().bytes;
  uint64_t& peak = depth_peaks_[port];  // of every sample but the last
  const uint64_t deepest = std::max(peak, last);
  const uint64_t change = bytes > last ? bytes - last : last - bytes;
  if (change >= params_.mtu || bytes > deepest || (bytes == 0 && last != 0)) {
    peak = deepest;
    v.push_back({now, bytes});
  }
}

std::vector<QueueSeries> PacketNetwork::QueueDepths() const {
  std::vector<QueueSeries> out;
  const std::vector<LinkStats> names = Links();
  for (size_t i = 0; i < depths_.size(); ++i) {
    if (depths_[i].empty()) continue;
    out.push_back(QueueSeries{names[i].name, depths_[i]});
  }
  return out;
}

void PacketNetwork::ScaleLinkBandwidths(const std::vector<size_t>& indices, double scale) {
  ORRERY_CHECK(scale > 0, "a link's bandwidth scale must be > 0");
  for (size_t i : indices) {
    ORRERY_CHECK(i < ports_.size(), "no link " + std::to_string(i));
    Port& p = ports_[i];
    p.bandwidth = Bandwidth::FromBytesPerSec(p.bandwidth.bytes_per_sec() * scale);
    p.mtu_serialization_ps = (Bytes(params_.mtu) / p.bandwidth).ps();
  }
}

std::vector<LinkStats> PacketNetwork::Links() const {
  const int64_t now = sim_.now().ps();
  std::vector<LinkStats> out;
  out.reserve(ports_.size());
  std::map<std::string, int> seen;
  for (size_t i = 0; i < ports_.size(); ++i) {
    const PhysicalGraph::Link& g = graph_->links[i];
    const Port& p = ports_[i];
    // On a list of several dimensions a link is named with its dimension, "d1:npu2->sw1.2", as
    // the congestion-aware backend names it (slow-links and --link-stats files agree).
    std::string name =
        (topology_.dims.size() > 1 && g.dimension >= 0 ? "d" + std::to_string(g.dimension) + ":"
                                                       : std::string()) +
        graph_->devices[g.src].name + "->" + graph_->devices[g.dst].name;
    const int count = ++seen[name];
    if (count > 1) name += "#" + std::to_string(count);
    LinkStats s{name, p.bytes, Time::FromPs(p.busy_ps), std::nullopt};
    LinkStats::Port port;
    port.max_queue_bytes =
        now > p.queue_changed_ps ? std::max(p.max_queue_bytes, p.queue_bytes) : p.max_queue_bytes;
    const double area = p.queue_area + static_cast<double>(p.queue_bytes) *
                                           static_cast<double>(now - p.queue_changed_ps);
    port.mean_queue_bytes = now > 0 ? area / static_cast<double>(now) : 0.0;
    port.paused = Time::FromPs(p.paused_ps + (p.blocked ? now - p.blocked_since_ps : 0));
    port.drops = 0;  // both flow controls are lossless: a packet is never sent without room
    s.port = port;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> PacketNetwork::DescribeStuck(int max_lines) const {
  std::vector<std::string> lines;
  const size_t undelivered = messages_in_flight();
  if (undelivered == 0 || max_lines <= 0) return lines;
  std::vector<uint32_t> held;
  for (uint32_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i].blocked) held.push_back(i);
  }
  lines.push_back("packet network: " + std::to_string(undelivered) + " message(s) undelivered; " +
                  std::to_string(held.size()) +
                  " port(s) hold packets that flow control will not let go" +
                  (pfc_ ? " (paused by the buffer at their far end)" : " (no credits)"));
  const int64_t now = sim_.now().ps();
  const std::vector<LinkStats> links = Links();  // names as --link-stats gives them, by port
  for (uint32_t i : held) {
    if (static_cast<int>(lines.size()) >= max_lines - 1) break;
    const Port& p = ports_[i];
    int queued = 0;
    for (uint32_t k = p.queue.head; k != kNone; k = packets_[k].next) ++queued;
    for (uint32_t k = p.turning.head; k != kNone; k = packets_[k].next) ++queued;
    lines.push_back("  " + links[i].name + ": held for " +
                    Time::FromPs(now - p.blocked_since_ps).ToHuman() + ", " +
                    std::to_string(queued) + " relayed packet(s) and " +
                    std::to_string(p.message_bytes) + " bytes to inject waiting; far-end buffer " +
                    std::to_string(ports_[i].ingress_bytes) + " of " +
                    std::to_string(p.limits.buffer_bytes) + " bytes");
  }
  if (pfc_ && !held.empty()) {
    lines.push_back(
        "ports pausing each other in a cycle are a PFC deadlock (cyclic buffer dependency): "
        "packet-flow-control: credit avoids it on rings and tori, or raise packet-buffer-bytes");
  }
  return lines;
}

}  // namespace orrery
