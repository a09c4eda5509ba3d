// The second stage of a run: which trace each NPU runs. One file per NPU (<prefix>.<r>.et), the
// copies of one trace (--replicate-trace), or several jobs' traces on their NPUs (--jobs); each
// distinct file loaded once, in parallel.
//
//   StatusOr<TraceSet> s = LoadTraceSet(options, /*n=*/machine.num_npus());
//   const et::Trace& t = *s->npu_trace[npu];
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "et_feeder/trace.h"
#include "runner/options.h"
#include "workload/placement.h"

namespace orrery {

struct TraceSet {
  // With --replicate-trace or --jobs, where each rank runs; null with one file per NPU.
  std::unique_ptr<Placement> placement;
  // The comm-group file of the trace, or of each job (job index -> path; "" = none).
  std::vector<std::string> comm_group_files;
  // Every distinct file loaded, then an empty trace for idle NPUs (the last).
  std::vector<std::unique_ptr<et::Trace>> traces;
  std::vector<int> trace_index;             // per NPU: index into `traces`
  std::vector<const et::Trace*> npu_trace;  // per NPU: traces[trace_index[npu]]
  // Per NPU, the file it runs ("" idle): its trace may have been loaded from another file with
  // the same bytes, whose path the trace carries.
  std::vector<std::string> npu_file;
  std::vector<std::string> warnings;        // files past the network's NPUs, dangling deps, ...
};

// Loads the traces a run of `n` NPUs needs; every problem of the files, each naming its file.
StatusOr<TraceSet> LoadTraceSet(const RunOptions& o, int n);

}  // namespace orrery
