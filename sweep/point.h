// One sweep point made ready to run: the point's parameters applied to the spec's base, the
// configs whose keys it sets copied under <out>.points/<index>/, a generated collective written
// under <out>.work/ (once per collective, size and NPU count, shared by the points that ask for
// it), and the RunOptions that run it.
//
//   GeneratedWorkloads generated;
//   Prepared pr = PreparePoint(spec, point, "results", &generated);
//   if (pr.error.empty()) RunSimulation(pr.run);   // else the point's row says pr.error
#pragma once

#include <map>
#include <string>

#include "runner/run.h"
#include "sweep/sweep.h"

namespace orrery::sweep_internal {

// The files one point runs on, written under <out>.points/<index>/ when a key is overridden.
struct Prepared {
  RunOptions run;
  bool jobs_alone = false;  // jobs-alone: run each job alone too (AddJobsAlone)
  std::string error;
};

// Generated workloads written so far: "<collective>_<size>_<npus>" -> the trace prefix.
using GeneratedWorkloads = std::map<std::string, std::string>;

// Point `p` of `spec`, its files written beside the output prefix `out`; what is wrong with it
// in `error` when it cannot run (the point's row shows it).
Prepared PreparePoint(const SweepSpec& spec, const SweepPoint& p, const std::string& out,
                      GeneratedWorkloads* generated);

}  // namespace orrery::sweep_internal
