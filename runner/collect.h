// The last stage of a run: what the simulation ended with. Whether every NPU finished (else an
// error naming the stuck NPUs and what they wait for), and the per-NPU records that timelines,
// reports and the critical path read.
//
//   Status s = CheckFinished(sim, *net, system_layer, executors);
//   if (options.record) CollectRecords(executors, npu_trace, placement, system_layer, result);
#pragma once

#include <memory>
#include <vector>

#include "common/event_queue.h"
#include "common/status.h"
#include "network/network.h"
#include "runner/run.h"
#include "system/collective_engine.h"
#include "workload/executor.h"
#include "workload/placement.h"

namespace orrery {

// Ok when every NPU finished and every message sent was received; otherwise the stuck NPUs
// (those held by a send or receive first), what each was running, the collectives some member
// never issued and the messages left waiting.
Status CheckFinished(const Simulation& sim, const Network& net, SystemLayer& system_layer,
                     const std::vector<std::unique_ptr<NpuExecutor>>& executors);

// Every NPU's node records (RunResult::activity) and the critical path, from the executors'
// activities, joins and point-to-point messages (RunOptions::record).
void CollectRecords(const std::vector<std::unique_ptr<NpuExecutor>>& executors,
                    const std::vector<const et::Trace*>& npu_trace, const Placement* placement,
                    SystemLayer& system_layer, RunResult& result);

}  // namespace orrery
