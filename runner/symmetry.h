// When a run may simulate one NPU per orbit of a symmetry (network/symmetry.h) instead of every
// NPU: a stage between loading the traces and simulating (docs/scale.md, "What each shortcut
// assumes").
//
//   std::string why_not;
//   std::optional<NpuSymmetry> s = ChooseSymmetry(options, machine, trace_set, &why_not);
//
// The generators come from the traces: copies of one trace (a trace manifest's data-parallel
// copies, --replicate-trace) give the shift from each copy to the next, taken to the smallest
// power that moves the coordinates of one network dimension only; one trace on every NPU with
// nothing but world collectives (no sends, no groups) gives every dimension's rotation. The
// run must treat the images alike: an analytical backend on a network of dimensions (not a
// graph, not packets), no shared remote memory, the same compute scale on every NPU of an
// orbit, no custom collectives, no timelines or reports (they show every NPU's own records).
// Links are checked by the network (Network::UseSymmetry), phases as they start
// (SystemLayer::CheckPhaseSymmetry): a run that breaks a generator is run again without it.
#pragma once

#include <optional>
#include <string>

#include "network/symmetry.h"
#include "runner/machine.h"
#include "runner/options.h"
#include "runner/trace_set.h"

namespace orrery {

// The symmetry the run may use, or nullopt with the reason in `why_not` ("" when the run has
// nothing to gain: no copies, or every NPU differs).
std::optional<NpuSymmetry> ChooseSymmetry(const RunOptions& o, const Machine& m,
                                          const TraceSet& traces, std::string* why_not);

}  // namespace orrery
