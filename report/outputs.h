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

// Chrome trace event format (JSON object, "traceEvents"): one process per NPU (pid = NPU id + 1),
// one thread per track (CPU, GPU compute, communication, remote memory, and as many receive lanes
// as overlapping receives need; the chunk phases of collectives in as many "chunks" lanes as run
// at once, when the run kept them), complete ("X") events in microseconds, sorted by time;
// communication queue lengths as counters ("C"); with the packet backend, one more process of
// counters: the depth of every output queue that held packets (RunResult::port_queues); the
// critical path as the last process. Every event has a "cat"; tids are unique over the file and
// larger than every pid; a slice's "dur" ends it exactly at the next one's "ts" in a viewer's
// double arithmetic (TimelineDurationText). Only the NPUs of RunResult::timeline_npus
// (--timeline-npus), when set; the critical path and the network queues stay whole. Needs a
// recorded run.
Status WriteChromeTrace(const RunResult& r, const std::string& path);

// The "dur" text of a slice from `start` to `end` (whole ns): in microseconds, such that the
// double of its "ts" text plus the double of this text is exactly the double of the end's "ts"
// text (what JavaScript viewers compute), and within a ulp of the difference (what importers
// that round to whole ns read). Usually the plain difference with 3 decimals.
std::string TimelineDurationText(Time start, Time end);

// Chakra's timeline_visualizer input (USER_GUIDE: "issue,<dummy_str>=npu_id,<dummy_str>=
// curr_cycle,<dummy_str>=node_id,<dummy_str>=node_name", and "callback,..."):
//   issue,sys->id=0, tick=0, node->id=1, node->name=fwd (COMP_NODE)
//   callback,sys->id=0, tick=5000, node->id=1, node->name=fwd (COMP_NODE)
// The visualizer reads the node's type from the name column (ChakraTimelineName). Metadata and
// invalid nodes, which it cannot place, are left out. Only the NPUs of
// RunResult::timeline_npus, when set.
Status WriteChakraTimeline(const RunResult& r, const std::string& path);
// A node's name column there: its name with ',' and '=' replaced (';', ':') and "_NODE" and
// "_MEMORY" lowered, then its type: "fwd (COMP_NODE)", "load (MEM_LOAD_NODE REMOTE_MEMORY)".
std::string ChakraTimelineName(const std::string& name, et::NodeType type);

// Per NPU breakdown, per collective statistics, per link traffic, per queue length over time
// (docs/outputs.md).
Status WriteReportJson(const RunResult& r, const std::string& path);
// The same as CSV files: <prefix>.npus.csv, .collectives.csv, .links.csv and .queues.csv.
Status WriteReportCsv(const RunResult& r, const std::string& prefix);

// A compact human-readable table: mean and slowest NPU breakdown, in us or ms.
std::string SummaryTable(const RunResult& r);

}  // namespace orrery
