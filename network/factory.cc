#include "network/factory.h"

#include <sstream>
#include <string>
#include <vector>

#include "network/analytical_aware/analytical_aware.h"
#include "network/analytical_aware/graph_network.h"
#include "network/analytical_unaware/analytical_unaware.h"
#include "network/graph.h"
#include "network/packet/packet_network.h"

namespace orrery {

namespace {
constexpr Backend kAllBackends[] = {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware,
                                    Backend::kPacket};

// `name` without its "d<k>:" dimension prefix, if it has one.
std::string WithoutDimension(const std::string& name) {
  if (name.size() < 3 || name[0] != 'd') return name;
  size_t i = 1;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  return i > 1 && i < name.size() && name[i] == ':' ? name.substr(i + 1) : name;
}

// `name` without its "#<n>" parallel-link suffix, if it has one.
std::string WithoutParallel(const std::string& name) {
  const size_t hash = name.rfind('#');
  return hash == std::string::npos ? name : name.substr(0, hash);
}

// "a<->b" as "a->b" and "b->a" (a "d<k>:" prefix kept on both); any other name as it is.
std::vector<std::string> Directions(const std::string& name) {
  const size_t both = name.find("<->");
  if (both == std::string::npos) return {name};
  const std::string bare = WithoutDimension(name);
  const std::string prefix = name.substr(0, name.size() - bare.size());
  const size_t at = bare.find("<->");
  const std::string a = bare.substr(0, at), b = bare.substr(at + 3);
  return {prefix + a + "->" + b, prefix + b + "->" + a};
}

// The indices in `links` (Network::Links()) of the links `slow` names (Topology::SlowLinks), in
// link order; an error names the first name that matches no link.
StatusOr<std::vector<size_t>> SlowLinkIndices(const Topology::SlowLinks& slow,
                                              const std::vector<LinkStats>& links) {
  std::vector<bool> chosen(links.size(), false);
  for (const std::string& name : slow.names) {
    for (const std::string& wanted : Directions(name)) {
      bool found = false;
      for (size_t i = 0; i < links.size(); ++i) {
        const std::string& l = links[i].name;
        const std::string bare = WithoutDimension(l);
        if (wanted == l || wanted == WithoutParallel(l) || wanted == bare ||
            wanted == WithoutParallel(bare)) {
          chosen[i] = true;
          found = true;
        }
      }
      if (found) continue;
      std::string msg = slow.where + ": key 'slow-links' names '" + name + "'";
      if (wanted != name) msg += " (" + wanted + ")";
      msg += ", but the network has no such link; expected a link as --link-stats names it";
      std::vector<std::string> names;
      for (const LinkStats& l : links) names.push_back(l.name);
      const std::string guess = DidYouMean(wanted, names);
      if (!guess.empty()) msg += " (did you mean '" + guess + "'?)";
      if (!names.empty()) {
        msg += ", e.g. '" + names.front() + "'";
        if (names.size() > 1) msg += " or '" + names.back() + "'";
      }
      msg += ", or 'a<->b' for both directions";
      return Status::Error(msg);
    }
  }
  std::vector<size_t> indices;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i]) indices.push_back(i);
  }
  return indices;
}

std::unique_ptr<Network> BuildNetwork(Backend backend, Simulation& sim, const Topology& topology,
                                      const NetworkParams& net_params) {
  switch (backend) {
    case Backend::kAnalyticalAware: {
      const uint64_t pipeline_mtu =
          net_params.aware_forwarding == NetworkParams::AwareForwarding::kPipelined ? net_params.mtu
                                                                                    : 0;
      if (topology.graph != nullptr) {
        GraphNetwork::Options options;
        options.pipeline_mtu = pipeline_mtu;
        return std::make_unique<GraphNetwork>(sim, topology, options);
      }
      AnalyticalAwareNetwork::Options options;
      options.pipeline_mtu = pipeline_mtu;
      return std::make_unique<AnalyticalAwareNetwork>(sim, topology, options);
    }
    case Backend::kAnalyticalUnaware:
      return std::make_unique<AnalyticalUnawareNetwork>(sim, topology);
    case Backend::kPacket:
      return std::make_unique<PacketNetwork>(sim, topology, net_params);
  }
  return nullptr;
}

}  // namespace

const char* BackendName(Backend b) {
  switch (b) {
    case Backend::kAnalyticalAware:
      return "analytical-aware";
    case Backend::kAnalyticalUnaware:
      return "analytical-unaware";
    case Backend::kPacket:
      return "packet";
  }
  return "?";
}

StatusOr<Backend> ParseBackend(const std::string& name) {
  std::vector<std::string> names;
  for (Backend b : kAllBackends) {
    if (name == BackendName(b)) return b;
    names.push_back(BackendName(b));
  }
  std::string valid = "one of ";
  for (size_t i = 0; i < names.size(); ++i) valid += (i ? ", " : "") + names[i];
  const std::string guess = DidYouMean(name, names);
  if (!guess.empty()) valid += " (did you mean '" + guess + "'?)";
  return Status::Invalid("", "network backend", name, valid);
}

Status CheckBackendSupports(Backend backend, const Topology& topology,
                            const NetworkParams& net_params) {
  if (backend == Backend::kPacket) {
    Status s = CheckPacketTopology(topology, net_params);
    if (!s.ok()) return s.WithContext("--network-backend packet");
    return s;
  }
  if (backend == Backend::kAnalyticalUnaware && topology.graph != nullptr) {
    return Status::Error("--network-backend analytical-unaware cannot model this machine (" +
                         topology.graph->description +
                         "): it has no links to route over; use analytical-aware or packet");
  }
  return Status::Ok();
}

Status CheckSlowLinks(Backend backend, const Topology& topology, const NetworkParams& net_params) {
  if (topology.slow_links.names.empty()) return Status::Ok();
  if (backend == Backend::kAnalyticalUnaware) {
    return Status::Error(topology.slow_links.where +
                         ": key 'slow-links' needs a backend that models links, "
                         "analytical-aware or packet; --network-backend analytical-unaware "
                         "has none");
  }
  Simulation sim;  // the links' names, from the network as the backend builds it
  return SlowLinkIndices(topology.slow_links,
                         BuildNetwork(backend, sim, topology, net_params)->Links())
      .status();
}

std::string DescribeNetworkModel(Backend backend, const Topology& topology,
                                 const NetworkParams& net_params) {
  const std::string packets = std::to_string(net_params.mtu) + " B packets";
  std::string lanes;
  bool several = false;
  for (const Dimension& d : topology.dims) {
    lanes += (lanes.empty() ? "" : ", ") + std::to_string(d.lanes);
    several = several || d.lanes > 1;
  }
  lanes = several ? ", lanes [" + lanes + "]" : "";
  std::string slow;
  if (!topology.slow_links.names.empty()) {
    std::string names;
    for (const std::string& n : topology.slow_links.names) names += (names.empty() ? "" : " ") + n;
    std::ostringstream scale;
    scale << topology.slow_links.bandwidth_scale;
    slow = ", slow links [" + names + "] at " + scale.str() + "x bandwidth";
  }
  switch (backend) {
    case Backend::kAnalyticalAware:
      return (net_params.aware_forwarding == NetworkParams::AwareForwarding::kPipelined
                  ? "analytical-aware, pipelined in " + packets
                  : std::string("analytical-aware, store-and-forward")) +
             lanes + slow;
    case Backend::kAnalyticalUnaware:
      return "analytical-unaware" + lanes;
    case Backend::kPacket:
      return "packet, " + packets + ", " +
             (net_params.flow_control == NetworkParams::FlowControl::kPfc ? "pfc" : "credit") +
             " flow control, " +
             (net_params.routing == NetworkParams::Routing::kAdaptive ? "adaptive" : "ecmp") +
             " routing" + slow;
  }
  return "?";
}

std::unique_ptr<Network> MakeNetwork(Backend backend, Simulation& sim, const Topology& topology,
                                     const NetworkParams& net_params) {
  std::unique_ptr<Network> net = BuildNetwork(backend, sim, topology, net_params);
  if (!topology.slow_links.names.empty()) {
    StatusOr<std::vector<size_t>> slow = SlowLinkIndices(topology.slow_links, net->Links());
    ORRERY_CHECK(slow.ok(), "slow links not checked by CheckSlowLinks: " + slow.status().message());
    net->ScaleLinkBandwidths(*slow, topology.slow_links.bandwidth_scale);
  }
  return net;
}

}  // namespace orrery
