// Turns the system configuration file plus the command-line knobs into SystemParams.
//
//   StatusOr<SystemParams> p = SystemParamsFromConfig(system_config, run_options, /*dims=*/2);
//
// --injection-scale multiplies endpoint-delay only when the file sets it (ASTRA-sim's rule), the
// product truncated to whole ns as there;
// --num-queues-per-dim with one value applies to every network dimension.
#pragma once

#include <string>

#include "common/status.h"
#include "config/system_config.h"
#include "runner/options.h"
#include "system/collective_engine.h"
#include "system/system_params.h"

namespace orrery {

struct RunOptions;

StatusOr<SystemParams> SystemParamsFromConfig(const SystemConfig& config, const RunOptions& options,
                                              size_t num_dims);

// Loads the custom (MSCCL-style) algorithms the configuration names into `layer`:
// `*-implementation-custom` (one ET prefix, for every collective of that type) and
// `per-node-custom-implementation` (a YAML map from Chakra node id to ET prefix, for those
// nodes only). Paths are relative to the working directory, as in ASTRA-sim.
Status ConfigureCustomCollectives(const SystemConfig& config, SystemLayer& layer);

}  // namespace orrery
