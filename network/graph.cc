#include "network/graph.h"

#include <utility>

namespace orrery {

namespace {

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser: a fixed, platform-independent hash
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void PhysicalGraph::AddNpus(int n, bool forwards) {
  ORRERY_CHECK(static_cast<int>(devices.size()) == num_npus, "NPUs must be added before switches");
  for (int i = 0; i < n; ++i) {
    devices.push_back(Device{"npu" + std::to_string(num_npus + i), true, forwards});
  }
  num_npus += n;
}

int PhysicalGraph::AddDevice(std::string name, bool npu, bool forwards) {
  ORRERY_CHECK(!npu || static_cast<int>(devices.size()) == num_npus,
               "NPUs must be added before switches");
  devices.push_back(Device{std::move(name), npu, forwards});
  if (npu) ++num_npus;
  return static_cast<int>(devices.size()) - 1;
}

void PhysicalGraph::AddLink(int src, int dst, Bandwidth bw, Time latency, int cost) {
  ORRERY_CHECK(cost >= 1 && cost <= kMaxCost, "link cost out of range");
  links.push_back(Link{src, dst, bw, latency, cost});
}

void PhysicalGraph::AddBidirectional(int a, int b, Bandwidth bw, Time latency, int cost) {
  AddLink(a, b, bw, latency, cost);
  AddLink(b, a, bw, latency, cost);
}

Status PhysicalGraph::BuildRoutes() {
  const size_t nd = devices.size();
  if (num_npus < 2) return Status::Error("a machine needs at least 2 NPUs");
  if (nd * static_cast<size_t>(num_npus) > (size_t{1} << 32)) {
    return Status::Error("the machine is too large to route: " + std::to_string(nd) +
                         " devices x " + std::to_string(num_npus) + " NPUs");
  }
  // Out- and in-adjacency, in link order (CSR).
  out_begin_.assign(nd + 1, 0);
  std::vector<uint32_t> in_begin(nd + 1, 0);
  for (const Link& l : links) {
    ++out_begin_[l.src + 1];
    ++in_begin[l.dst + 1];
  }
  for (size_t d = 0; d < nd; ++d) {
    out_begin_[d + 1] += out_begin_[d];
    in_begin[d + 1] += in_begin[d];
  }
  out_links_.assign(links.size(), 0);
  std::vector<uint32_t> in_links(links.size());
  {
    std::vector<uint32_t> out_fill(out_begin_.begin(), out_begin_.end() - 1);
    std::vector<uint32_t> in_fill(in_begin.begin(), in_begin.end() - 1);
    for (uint32_t i = 0; i < links.size(); ++i) {
      out_links_[out_fill[links[i].src]++] = i;
      in_links[in_fill[links[i].dst]++] = i;
    }
  }
  // Least cost from every device to every destination NPU: Dial's bucket queue (costs are small
  // integers) over reversed links. A device that does not forward is reached (as a source) but
  // not passed through.
  hops_.assign(nd * num_npus, kUnreachable);
  std::vector<uint16_t> dist(nd);
  std::vector<std::vector<int>> buckets(kMaxCost + 1);
  for (int t = 0; t < num_npus; ++t) {
    dist.assign(nd, kUnreachable);
    dist[t] = 0;
    buckets[0].push_back(t);
    size_t queued = 1;
    for (int d = 0; queued > 0; ++d) {
      std::vector<int>& bucket = buckets[d % (kMaxCost + 1)];
      for (size_t i = 0; i < bucket.size(); ++i) {
        const int u = bucket[i];
        --queued;
        if (dist[u] != d || (u != t && !devices[u].forwards)) continue;
        for (uint32_t k = in_begin[u]; k < in_begin[u + 1]; ++k) {
          const Link& l = links[in_links[k]];
          const int nd_w = d + l.cost;
          if (nd_w >= kUnreachable) return Status::Error("a route costs more than 65534");
          if (nd_w >= dist[l.src]) continue;
          dist[l.src] = static_cast<uint16_t>(nd_w);
          buckets[nd_w % (kMaxCost + 1)].push_back(l.src);
          ++queued;
        }
      }
      bucket.clear();
    }
    for (size_t d = 0; d < nd; ++d) hops_[d * num_npus + t] = dist[d];
  }
  for (int s = 0; s < num_npus; ++s) {
    for (int t = 0; t < num_npus; ++t) {
      if (s != t && Distance(s, t) == kUnreachable) {
        return Status::Error("the machine is disconnected: there is no path from " +
                             devices[s].name + " to " + devices[t].name +
                             " (every NPU must reach every other NPU; only switches" +
                             (devices[0].forwards ? " and NPUs" : "") + " relay traffic)");
      }
    }
  }
  return Status::Ok();
}

uint32_t PhysicalGraph::NextLink(int at, int src, int dst) const {
  const int dimension = SendDimension(at, dst);
  auto candidate = [&](uint32_t link) { return IsNextHopAlong(at, link, dst, dimension); };
  uint32_t count = 0;
  for (uint32_t k = out_begin_[at]; k < out_begin_[at + 1]; ++k) count += candidate(out_links_[k]);
  ORRERY_CHECK(count > 0, "no route from " + devices[at].name + " to " + devices[dst].name);
  uint32_t pick = 0;
  if (count > 1) {
    const uint64_t h =
        Mix((static_cast<uint64_t>(src) << 32 | static_cast<uint32_t>(dst)) ^ Mix(at));
    pick = static_cast<uint32_t>(h % count);
  }
  for (uint32_t k = out_begin_[at];; ++k) {
    if (candidate(out_links_[k]) && pick-- == 0) return out_links_[k];
  }
}

std::vector<uint32_t> PhysicalGraph::Route(int src, int dst) const {
  std::vector<uint32_t> route;
  for (int at = src; at != dst; at = links[route.back()].dst) {
    route.push_back(NextLink(at, src, dst));
  }
  return route;
}

}  // namespace orrery
