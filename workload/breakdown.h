// Where one NPU's time went, from its executor's activity: Holistic Trace Analysis' temporal
// breakdown (unions of intervals per kind, so two overlapping kernels count once).
//
//   NpuBreakdown b = BreakdownOf(executor.activities(), executor.stats().finish);
#pragma once

#include <vector>

#include "common/units.h"
#include "workload/executor.h"

namespace orrery {

struct NpuBreakdown {
  Time total;          // when the NPU finished
  Time compute;        // GPU compute (union)
  Time cpu;            // CPU ops (union)
  Time communication;  // collectives, sends and receives (union)
  Time overlapped;     // communication during GPU compute
  Time exposed;        // communication - overlapped
  Time memory;         // remote memory accesses (union)
  Time idle;           // total - (union of everything above)
  // overlapped / communication, in percent (0 without communication): HTA's overlap.
  double overlap_percent() const;
};

NpuBreakdown BreakdownOf(const std::vector<Activity>& activity, Time finish);

}  // namespace orrery
