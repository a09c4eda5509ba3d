// A collective algorithm's name, as system files and NCCL's tuner spell it, to an AlgorithmSpec.
//
//   StatusOr<AlgorithmSpec> a = ParseAlgorithm("direct<4>");   // {kDirect, window 4}
#pragma once

#include <string>

#include "common/status.h"
#include "system/system_params.h"

namespace orrery {

// "ring", "direct<4>", "oneHalvingDoubling", ... -> AlgorithmSpec; errors list valid names.
StatusOr<AlgorithmSpec> ParseAlgorithm(const std::string& name);

}  // namespace orrery
