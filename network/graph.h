// An explicit machine: devices (NPUs and switches) joined by unidirectional links, with
// shortest-path routing and deterministic ECMP. Used for machines that are not a product of
// dimensions: a DGX/HGX-style NVSwitch + fat-tree cluster, or a custom topology file.
//
//   PhysicalGraph g;
//   g.AddNpus(4);                          // devices 0..3 are NPUs 0..3
//   int sw = g.AddDevice("sw0", /*npu=*/false, /*forwards=*/true);
//   for (int i = 0; i < 4; ++i) g.AddBidirectional(i, sw, Bandwidth::FromGiBps(100),
//   Time::FromNs(500)); Status s = g.BuildRoutes();            // hop counts; error if some NPU
//   cannot reach another int hops = g.Hops(/*from=*/0, /*dst_npu=*/3);   // 2
//
// Routing: a message follows a path of least cost, the sum of its links' `cost` (1 per hop unless
// set; a DGX machine gives NIC links 2 so traffic inside a node always takes the NVSwitch). Only
// devices with `forwards` may be passed through (switches always; NPUs in custom files unless
// no-relay, never in a DGX machine). At a device with several
// next links on shortest paths, it takes candidate number Hash(src, dst, device) % count, counted
// in the order the links were added: deterministic run to run, and spread over flows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/units.h"

namespace orrery {

struct PhysicalGraph {
  struct Device {
    std::string name;
    bool npu = false;
    bool forwards = true;  // may carry traffic that is neither from nor to it
  };
  struct Link {
    int src = 0;
    int dst = 0;
    Bandwidth bandwidth;  // per direction
    Time latency;
    int cost = 1;  // routing metric, 1 .. kMaxCost
    // The dimension of a dimensional topology this link belongs to (GraphFromDimensions);
    // -1 on other machines.
    int dimension = -1;
  };
  static constexpr int kMaxCost = 16;

  // NPUs are devices 0 .. num_npus - 1, named npu<i>; switches follow.
  int num_npus = 0;
  std::vector<Device> devices;
  std::vector<Link> links;  // in the order added; the link index is its id
  std::string description;  // one line, e.g. "DGX: 8 nodes x 8 GPUs, two-tier fat-tree"
  // A dimensional topology's NPUs per dimension (ASTRA-sim's lists; GraphFromDimensions), NPU
  // id = Σ coordinate_d × stride_d: its NPUs send dimension-ordered, as the congestion-aware
  // backend routes them (SendDimension). Empty for other machines.
  std::vector<int> dimension_sizes;

  // Adds `n` NPUs (must come before any switch). `forwards`: NPUs may relay traffic.
  void AddNpus(int n, bool forwards = false);
  int AddDevice(std::string name, bool npu, bool forwards);
  void AddLink(int src, int dst, Bandwidth bw, Time latency, int cost = 1);
  void AddBidirectional(int a, int b, Bandwidth bw, Time latency, int cost = 1);

  // Builds the adjacency and the route-cost table; an error names an NPU pair with no path.
  Status BuildRoutes();

  // After BuildRoutes: least route cost from device `from` to NPU `dst_npu` (kUnreachable when
  // none). With every cost 1 this is the hop count.
  static constexpr uint16_t kUnreachable = 0xffff;
  int Distance(int from, int dst_npu) const {
    return hops_[static_cast<size_t>(from) * num_npus + dst_npu];
  }
  // Whether `link`, out of device `at`, starts a least-cost route to NPU `dst`: the candidates
  // that ECMP (NextLink) and the packet backend's adaptive routing choose among. On a
  // dimensional topology an NPU sends along the lowest dimension in which it differs from `dst`
  // (SendDimension), as the congestion-aware backend does: the other orders are as short, but
  // ECMP over them would send a flow through a NIC the analytical model never uses for it.
  bool IsNextHop(int at, uint32_t link, int dst) const {
    return IsNextHopAlong(at, link, dst, SendDimension(at, dst));
  }
  // The same, with SendDimension(at, dst) given (loops over a device's links compute it once).
  bool IsNextHopAlong(int at, uint32_t link, int dst, int dimension) const {
    const Link& l = links[link];
    if (dimension >= 0 && l.dimension != dimension) return false;
    return (l.dst == dst || devices[l.dst].forwards) &&
           Distance(l.dst, dst) + l.cost == Distance(at, dst);
  }
  // The dimension device `at` must send along towards NPU `dst`: on a dimensional topology, for
  // an NPU, the lowest dimension in which the two differ; otherwise -1 (any link).
  int SendDimension(int at, int dst) const {
    if (dimension_sizes.empty() || !devices[at].npu) return -1;
    int stride = 1;
    for (size_t d = 0; d < dimension_sizes.size(); ++d) {
      const int k = dimension_sizes[d];
      if ((at / stride) % k != (dst / stride) % k) return static_cast<int>(d);
      stride *= k;
    }
    return -1;
  }
  // The link a message from NPU `src` to NPU `dst` takes out of device `at` (at != dst).
  // Allocation-free: O(out-degree of `at`).
  uint32_t NextLink(int at, int src, int dst) const;
  // The whole route, for tests and reports (allocates).
  std::vector<uint32_t> Route(int src, int dst) const;

  // Out-links of a device: out_links_[out_begin_[d] .. out_begin_[d + 1]).
  std::vector<uint32_t> out_begin_;
  std::vector<uint32_t> out_links_;
  std::vector<uint16_t> hops_;  // devices x NPUs
};

}  // namespace orrery
