#include "network/factory.h"

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
                         "): it has no links to route over; use analytical-aware");
  }
  return Status::Ok();
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
  switch (backend) {
    case Backend::kAnalyticalAware:
      return (net_params.aware_forwarding == NetworkParams::AwareForwarding::kPipelined
                  ? "analytical-aware, pipelined in " + packets
                  : std::string("analytical-aware, store-and-forward")) +
             lanes;
    case Backend::kAnalyticalUnaware:
      return "analytical-unaware" + lanes;
    case Backend::kPacket:
      return "packet, " + packets + ", " +
             (net_params.flow_control == NetworkParams::FlowControl::kPfc ? "pfc" : "credit") +
             " flow control, " +
             (net_params.routing == NetworkParams::Routing::kAdaptive ? "adaptive" : "ecmp") +
             " routing";
  }
  return "?";
}

std::unique_ptr<Network> MakeNetwork(Backend backend, Simulation& sim, const Topology& topology,
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

}  // namespace orrery
