// The run's outputs beyond the sys[i] lines: a Chrome/Perfetto timeline, Chakra's
// timeline-visualizer log, a JSON or CSV report, and the stdout summary table.
//
//   StatusOr<RunResult> r = RunSimulation(options_with_record);
//   Status s = WriteChromeTrace(*r, "step.json");        // open in ui.perfetto.dev
//   s = WriteReportJson(*r, "report.json");
//   std::fputs(SummaryTable(*r).c_str(), stdout);
//
// All of them are deterministic: same run, same bytes.
#pragma once

#include <string>

#include "common/status.h"
#include "runner/run.h"

namespace orrery {

// Chrome trace event format (JSON object, "traceEvents"): one process per NPU, one thread per
// track (CPU, GPU compute, communication, remote memory, and as many receive lanes as
// overlapping receives need; the chunk phases of collectives in as many "chunks" lanes as run at
// once), complete ("X") events in microseconds, sorted by time; communication queue lengths as
// counters ("C"); with the packet backend, one more process of counters: the depth of every
// output queue that held packets (RunResult::port_queues).
// Only the NPUs of RunResult::timeline_npus (--timeline-npus), when set; the critical path and
// the network queues stay whole. Needs a recorded run.
Status WriteChromeTrace(const RunResult& r, const std::string& path);

// ASTRA-sim's trace-enabled lines, the input of Chakra's timeline_visualizer:
//   issue,sys->id=0, tick=0, node->id=1, node->name=fwd, node->type=COMP_NODE
//   callback,sys->id=0, tick=5000, node->id=1, node->name=fwd, node->type=COMP_NODE
// Only the NPUs of RunResult::timeline_npus, when set.
Status WriteChakraTimeline(const RunResult& r, const std::string& path);

// Per NPU breakdown, per collective statistics, per link traffic, per queue length over time
// (docs/outputs.md).
Status WriteReportJson(const RunResult& r, const std::string& path);
// The same as CSV files: <prefix>.npus.csv, .collectives.csv, .links.csv and .queues.csv.
Status WriteReportCsv(const RunResult& r, const std::string& prefix);

// A compact human-readable table: mean and slowest NPU breakdown, in us or ms.
std::string SummaryTable(const RunResult& r);

}  // namespace orrery
