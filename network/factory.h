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

std::unique_ptr<Network> MakeNetwork(Backend backend, Simulation& sim, const Topology& topology);

}  // namespace orrery
