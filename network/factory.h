// Picks a network backend by name.
//
//   StatusOr<Backend> b = ParseBackend("analytical-aware");
//   std::unique_ptr<Network> net = MakeNetwork(*b, sim, topology);   // + NetworkParams
#pragma once

#include <memory>
#include <string>

#include "common/event_queue.h"
#include "common/status.h"
#include "network/network.h"

namespace orrery {

enum class Backend { kAnalyticalAware, kAnalyticalUnaware, kPacket };

// "analytical-aware" | "analytical-unaware" | "packet"; anything else is an error listing them.
StatusOr<Backend> ParseBackend(const std::string& name);
const char* BackendName(Backend b);

// An error when `backend` cannot model `topology` (the unaware backend has no graph of links, so
// a DGX fat-tree or a custom topology file needs analytical-aware; the packet backend checks
// its size limits and `net_params` against every link).
Status CheckBackendSupports(Backend backend, const Topology& topology,
                            const NetworkParams& net_params = NetworkParams());

// An error when `topology.slow_links` names a link that `backend`'s network does not have, or
// the backend models no links (analytical-unaware); the message starts with the key's
// "file:line". The topology must pass CheckBackendSupports first.
Status CheckSlowLinks(Backend backend, const Topology& topology,
                      const NetworkParams& net_params = NetworkParams());

// One line naming the model a backend runs with these parameters, for reports:
// "analytical-aware, store-and-forward", "analytical-aware, pipelined in 4096 B packets, lanes
// [16]" (lanes when a dimension has more than one), "analytical-unaware", "packet, 4096 B
// packets, credit flow control, ecmp routing"; with slow links, ", slow links [npu3<->npu4] at
// 0.5x bandwidth" after it.
std::string DescribeNetworkModel(Backend backend, const Topology& topology,
                                 const NetworkParams& net_params = NetworkParams());

// The topology must pass CheckBackendSupports and CheckSlowLinks. A topology with a graph gets
// GraphNetwork (aware). `net_params` is read by the packet backend, and by analytical-aware for its
// forwarding.
std::unique_ptr<Network> MakeNetwork(Backend backend, Simulation& sim, const Topology& topology,
                                     const NetworkParams& net_params = NetworkParams());

}  // namespace orrery
