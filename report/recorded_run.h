// For the report tests: small runs recorded for timelines and reports.
//
//   const RunResult r = MixedRun();   // 4 NPUs: compute, an all-reduce and a send
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "et_feeder/writer.h"
#include "runner/run.h"
#include "tests/test_case.h"

namespace orrery {

// Runs `ranks` recorded on a ring of as many NPUs (50 GiB/s, 500 ns), with `system_extra`
// (JSON members after a comma) added to the ring test system configuration.
inline RunResult RecordedRun(const std::string& name,
                             const std::vector<std::vector<ChakraProtoMsg::Node>>& ranks,
                             const std::string& system_extra = "") {
  std::string system = kRingTestSystem;
  system.insert(system.rfind('}'), system_extra);
  RunOptions o = WriteTestCase(name, ranks, system, "Ring");
  o.record = true;
  StatusOr<RunResult> r = RunSimulation(o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : RunResult();
}
// 4 NPUs on a ring (50 GiB/s, 500 ns). Every NPU: fwd (5 us) -> 1 MiB all-reduce (43000 ns,
// ASTRA-sim's figure). NPU 0 also runs a 100 us kernel after fwd, overlapping the all-reduce,
// then sends 1 MiB to NPU 1 after the all-reduce (20031 ns); NPU 1 receives it.
inline RunResult MixedRun() { return RecordedRun("mixed", MixedGraphRanks()); }

}  // namespace orrery
