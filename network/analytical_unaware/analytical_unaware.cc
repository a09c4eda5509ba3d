#include "network/analytical_unaware/analytical_unaware.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/status.h"
#include "network/symmetry.h"

namespace orrery {

AnalyticalUnawareNetwork::AnalyticalUnawareNetwork(Simulation& sim, Topology topology)
    : sim_(sim), topology_(std::move(topology)), num_npus_(topology_.num_npus()) {
  ORRERY_CHECK(!topology_.dims.empty(), "a topology needs at least one dimension");
  ORRERY_CHECK(topology_.graph == nullptr,
               "the congestion-unaware backend models dimensions, not a graph of links (fat-tree, "
               "custom file): use the congestion-aware backend");
  for (size_t d = 0; d < topology_.dims.size(); ++d) {
    const Dimension& dim = topology_.dims[d];
    ORRERY_CHECK(dim.npus > 1, "dimension " + std::to_string(d) + " has fewer than 2 NPUs");
    ORRERY_CHECK(dim.lanes >= 1, "dimension " + std::to_string(d) + " has no lanes");
    ORRERY_CHECK(dim.bandwidth.bytes_per_sec() > 0,
                 "dimension " + std::to_string(d) + " has a non-positive bandwidth");
    ORRERY_CHECK(dim.latency >= Time::Zero(),
                 "dimension " + std::to_string(d) + " has a negative latency");
    dims_.push_back(Dim{dim.type, dim.npus, dim.latency.Ns(),
                        dim.bandwidth.bytes_per_ns() / dim.lanes, 0, 0.0});
  }
}

int AnalyticalUnawareNetwork::HopsIn(const Dim& dim, int ca, int cb) {
  switch (dim.type) {
    case BlockType::kRing: {
      const int clockwise = (cb - ca + dim.npus) % dim.npus;
      return std::min(clockwise, dim.npus - clockwise);
    }
    case BlockType::kFullyConnected:
      return 1;
    case BlockType::kSwitch:
      return 2;
    case BlockType::kMesh:
      return ca < cb ? cb - ca : ca - cb;
  }
  return 0;
}

// Walks the dimensions once, lowest first, with the mixed-radix digits of both ids.
std::pair<int, int> AnalyticalUnawareNetwork::DimAndHops(int src, int dst) const {
  int a = src, b = dst;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const Dim& dim = dims_[d];
    const int ca = a % dim.npus;
    const int cb = b % dim.npus;
    if (ca != cb) return {static_cast<int>(d), HopsIn(dim, ca, cb)};
    a /= dim.npus;
    b /= dim.npus;
  }
  return {-1, 0};
}

int AnalyticalUnawareNetwork::Hops(int src, int dst) const { return DimAndHops(src, dst).second; }

Time AnalyticalUnawareNetwork::Delay(int src, int dst, Bytes size, double* serialization,
                                     Crossing crossing) const {
  // One walk over the dimensions: the lowest that differs (ASTRA-sim's), and for addresses that
  // differ in a higher dimension too, every differing one. ASTRA-sim charges the lowest alone
  // (MultiDimTopology::send), which its per-dimension algorithms never meet (each phase stays in
  // one dimension) but Orrery's do (a flat or channel ring across nodes, direct all-to-all):
  // such a message crosses every differing dimension, their hops' latencies, and its bytes once
  // at the slowest. A trace's own messages (kLowestDimension) keep ASTRA-sim's charge.
  const Dim* lowest = nullptr;
  int lowest_hops = 0, differ = 0, a = src, b = dst;
  double latency_ns = 0, bytes_per_ns = 0;
  for (const Dim& dim : dims_) {
    const int ca = a % dim.npus, cb = b % dim.npus;
    if (ca != cb) {
      const int hops = HopsIn(dim, ca, cb);
      if (differ++ == 0) {
        lowest = &dim;
        lowest_hops = hops;
        bytes_per_ns = dim.bytes_per_ns;
      }
      latency_ns += hops * dim.latency_ns;
      bytes_per_ns = std::min(bytes_per_ns, dim.bytes_per_ns);
    }
    a /= dim.npus;
    b /= dim.npus;
  }
  ORRERY_CHECK(lowest != nullptr,
               "a message needs src != dst (both are NPU " + std::to_string(src) + ")");
  if (differ > 1 && crossing == Crossing::kEveryDimension) {
    const double serialization_ns = static_cast<double>(size.count()) / bytes_per_ns;
    if (serialization != nullptr) *serialization = serialization_ns;
    return Time::FromNsTruncated(latency_ns + serialization_ns);
  }
  // ASTRA-sim sums in double ns and truncates the sum once to integer ns.
  if (size.count() != lowest->cached_size) {
    lowest->cached_size = size.count();
    lowest->cached_serialization_ns = static_cast<double>(size.count()) / lowest->bytes_per_ns;
  }
  if (serialization != nullptr) *serialization = lowest->cached_serialization_ns;
  return Time::FromNsTruncated(lowest_hops * lowest->latency_ns + lowest->cached_serialization_ns);
}

void AnalyticalUnawareNetwork::Send(int src, int dst, Bytes size, DeliveryHandler* handler,
                                    uint64_t token) {
  Schedule(src, dst, size, Crossing::kEveryDimension, handler, token);
}

void AnalyticalUnawareNetwork::SendTraceMessage(int src, int dst, Bytes size, uint64_t /*piece*/,
                                                DeliveryHandler* handler, uint64_t token) {
  Schedule(src, dst, size, Crossing::kLowestDimension, handler, token);
}

void AnalyticalUnawareNetwork::Schedule(int src, int dst, Bytes size, Crossing crossing,
                                        DeliveryHandler* handler, uint64_t token) {
  CheckSendEndpoints(src, dst, num_npus_);
  // A sender's last message, again: a ring sends to one neighbour in equal pieces.
  LastSend& last = last_[static_cast<size_t>(src) % last_.size()];
  if (last.src != src || last.dst != dst || last.size != size.count() ||
      last.crossing != crossing) {
    last.delay = Delay(src, dst, size, &last.serialization_ns, crossing);
    last.src = src;
    last.dst = dst;
    last.size = size.count();
    last.crossing = crossing;
    last.narrowed = crossing == Crossing::kLowestDimension && DifferingDims(src, dst) > 1;
  }
  if (size.count() > 0 && last.serialization_ns < 1) {
    zero_time_.Note(src, size.count(), last.serialization_ns);
  }
  if (last.narrowed && narrowed_.messages++ == 0) {
    narrowed_.first_src = src;
    narrowed_.first_dst = dst;
    narrowed_.first_size = size.count();
  }
  const Time delay = last.delay;
  const uint32_t slot = in_flight_.Acquire();
  in_flight_[slot] = InFlight{handler, token};
  sim_.ScheduleAfter(delay, this, slot);
}

int AnalyticalUnawareNetwork::DifferingDims(int src, int dst) const {
  int differ = 0, a = src, b = dst;
  for (const Dim& dim : dims_) {
    differ += a % dim.npus != b % dim.npus;
    a /= dim.npus;
    b /= dim.npus;
  }
  return differ;
}

std::vector<std::string> AnalyticalUnawareNetwork::Warnings(Time end) const {
  std::vector<std::string> out = zero_time_.Warning("analytical-unaware", end);
  if (narrowed_.messages == 0) return out;
  const Narrowed& n = narrowed_;
  const int d = DimAndHops(n.first_src, n.first_dst).first;
  out.push_back(std::to_string(n.messages) + " point-to-point message" +
                (n.messages == 1 ? "" : "s") + " of the trace (the first NPU " +
                std::to_string(n.first_src) + " to NPU " + std::to_string(n.first_dst) + ", " +
                std::to_string(n.first_size) +
                " B) went between NPUs that differ in several dimensions and, as in ASTRA-sim's "
                "congestion-unaware backend, took dimension " +
                std::to_string(d) +
                "'s time alone (the lowest that differs), not that of every dimension they cross; "
                "the analytical-aware and packet backends route them across every dimension "
                "(network/README.md, analytical-unaware)");
  return out;
}

void AnalyticalUnawareNetwork::OnEvent(uint64_t slot) {
  const InFlight m = in_flight_[static_cast<uint32_t>(slot)];
  // Free the slot first: the handler may Send again and reuse it.
  in_flight_.Release(static_cast<uint32_t>(slot));
  m.handler->OnDelivered(m.token);
}

bool AnalyticalUnawareNetwork::UseSymmetry(const NpuSymmetry& symmetry) {
  // Only representatives send: each message stands for one per NPU of its orbit.
  zero_time_.set_multiplicity(static_cast<uint64_t>(symmetry.OrbitSize()));
  return true;
}

}  // namespace orrery
