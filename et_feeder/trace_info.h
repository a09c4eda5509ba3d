// What a Chakra trace holds, for people: `orrery trace-info PATH [--json FILE]`.
//
//   StatusOr<Trace> t = Trace::Load("w.0.et");
//   std::string text = DescribeTrace(*t);   // nodes by type, compute, collectives, groups, ...
//   Status s = WriteTraceJson("w.0.et", "w.0.json");   // every message, one JSON document
//
// PATH is one rank's file or a trace prefix (<prefix>.0.et, <prefix>.1.et, ... up to the first
// missing one). Each file is loaded as a run loads it, so every error a run would report for it
// is reported here, and a file that loads here loads in a run.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"
#include "et_feeder/trace.h"

namespace orrery {
namespace et {

// Indented lines: nodes by type (compute split into GPU and CPU), compute time (duration_micros
// summed), collectives by type with their sizes, groups (pg_name), sends and receives with their
// peers, remote memory, dependencies (kept, implied, dangling, ctrl_deps ignored) and the
// longest dependency chain by compute time.
std::string DescribeTrace(const Trace& trace);

// The file's GlobalMetadata and nodes as one JSON document, {"metadata": {...}, "nodes": [...]},
// in protobuf's JSON mapping (the field names Chakra's chakra_jsonizer writes; its output is the
// messages one after another, not one document).
Status WriteTraceJson(const std::string& et_path, const std::string& json_path);

// The flags of trace-info as docs/cli.md lists them.
std::vector<KeyDoc> TraceInfoFlagDocs();

// `orrery trace-info PATH [--json FILE]`; returns the process exit code.
int TraceInfoMain(int argc, char** argv);

}  // namespace et
}  // namespace orrery
