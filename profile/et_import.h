// PyTorch execution traces (with or without the Kineto trace of the same run) as Chakra
// execution traces, with Chakra's linking and conversion semantics (profile/README.md, "With an
// execution trace"):
//
//   std::vector<ExecutionTrace> ets = ...;      // LoadExecutionTrace, one per rank
//   std::vector<const KinetoTrace*> kineto;     // empty, or one per ET (the same run's)
//   StatusOr<ImportResult> r = ImportExecutionTraces(ets, kineto, ranks, world, options);
//
// Operators are joined to their Kineto operators by record-function id (the Kineto trace's
// "Record function id", or its "External id" when it records none and the names agree), and a
// GPU op to the innermost joined operator that launched it. Every operator is a CPU node of its
// exclusive time, its GPU ops nodes after it; each thread's operators run in call order (a
// depth-first walk of the call tree, Chakra's convert_ctrl_dep_to_data_dep), GPU ops in stream
// order, and an operator waits for the one of another thread that last wrote a tensor it reads.
#pragma once

#include <vector>

#include "common/status.h"
#include "profile/execution_trace.h"
#include "profile/importer.h"
#include "profile/kineto.h"

namespace orrery {
namespace profile {

StatusOr<ImportResult> ImportExecutionTraces(const std::vector<ExecutionTrace>& ets,
                                             const std::vector<const KinetoTrace*>& kineto,
                                             const std::vector<int>& ranks, int world,
                                             const ImportOptions& o);

}  // namespace profile
}  // namespace orrery
