// The third stage of a run: the system layer made ready for the traces. Communicator groups
// from the comm-group files (placed in each copy or job), the NCCL tuner when the system
// configuration or the flags name a model, and what a run should say of the implementation
// lists before it starts.
//
//   Status s = DefineGroups(options, trace_set, system_layer, &warnings);
//   StatusOr<std::unique_ptr<NcclTuner>> t = MakeRunTuner(options, machine, system_layer, *net);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "nccl/nccl_tuner.h"
#include "network/network.h"
#include "runner/machine.h"
#include "runner/options.h"
#include "runner/trace_set.h"
#include "system/collective_engine.h"

namespace orrery {

// The comm-group file's groups (or each job's), defined in `system_layer`: as they are without
// a placement, once per copy (a data-parallel group once, spanning them) or in their job.
Status DefineGroups(const RunOptions& o, TraceSet& set, SystemLayer& system_layer,
                    std::vector<std::string>* warnings);

// NCCL's per-call choice (the system key nccl-model or --nccl-model), or null without a model.
StatusOr<std::unique_ptr<NcclTuner>> MakeRunTuner(const RunOptions& o, const Machine& m,
                                                  SystemLayer& system_layer, const Network& net);

// Without a tuner: implementation lists shorter than the network's dimensions, and one*
// algorithms on the congestion-unaware backend, as warnings.
std::vector<std::string> ImplementationListWarnings(const RunOptions& o, const Machine& m);

}  // namespace orrery
