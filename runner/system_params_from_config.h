// Turns the system configuration file plus the command-line knobs into SystemParams.
//
//   StatusOr<SystemParams> p = SystemParamsFromConfig(system_config, run_options, /*dims=*/2);
//
// --injection-scale multiplies endpoint-delay only when the file sets it (ASTRA-sim's rule);
// --num-queues-per-dim with one value applies to every network dimension.
#pragma once

#include <string>

#include "common/status.h"
#include "config/system_config.h"
#include "system/system_params.h"

namespace orrery {

struct RunOptions;

// "ring", "direct<4>", "oneHalvingDoubling", ... -> AlgorithmSpec; errors list valid names.
StatusOr<AlgorithmSpec> ParseAlgorithm(const std::string& name);

StatusOr<SystemParams> SystemParamsFromConfig(const SystemConfig& config, const RunOptions& options,
                                              size_t num_dims);

}  // namespace orrery
