// Picks a network backend by name.
//
//   StatusOr<Backend> b = ParseBackend("analytical-aware");
//   std::unique_ptr<Network> net = MakeNetwork(*b, sim, topology);
#pragma once

#include <memory>
#include <string>

#include "common/event_queue.h"
#include "common/status.h"
#include "network/network.h"

namespace orrery {

enum class Backend { kAnalyticalAware, kAnalyticalUnaware };

// "analytical-aware" | "analytical-unaware"; anything else is an error listing those two.
StatusOr<Backend> ParseBackend(const std::string& name);
const char* BackendName(Backend b);

// An error when `backend` cannot model `topology` (the unaware backend has no graph of links, so
// a DGX fat-tree or a custom topology file needs analytical-aware).
Status CheckBackendSupports(Backend backend, const Topology& topology);

// The topology must pass CheckBackendSupports. A topology with a graph gets GraphNetwork.
std::unique_ptr<Network> MakeNetwork(Backend backend, Simulation& sim, const Topology& topology);

}  // namespace orrery
