// A trace manifest: the NPUs of a job whose data-parallel replicas run the same program, written
// once. `orrery generate-llm` writes the rank files of one copy (<prefix>.0.et ..
// <prefix>.<R-1>.et, in copy-local ranks) and <prefix>.manifest.yaml saying how the copies fill
// the machine; a run given --workload-configuration=<prefix> finds the manifest and runs the
// files as those copies (runner/trace_set.h), as --replicate-trace runs a trace's copies.
//
//   StatusOr<std::optional<TraceManifest>> m = LoadTraceManifestOf("/tmp/gpt/gpt");
//   if (m.ok() && *m) ... (*m)->copies, (*m)->interleave, (*m)->data_parallel_groups
//
// Copy c's rank r runs on NPU (r / I)·I·K + c·I + r mod I, for K copies of R ranks and an
// interleave I that divides R: I = R puts each copy on NPUs c·R .. c·R + R - 1; Megatron-LM's
// layout (NPU = stage·dp·tp + replica·tp + tp rank) is I = tp. The communicator groups named in
// `data-parallel-groups` (--dp-groups syntax: world and pg ids) span every copy: their members in
// the files are each copy's members; every other group is the copy's own.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace orrery {
namespace et {

struct TraceManifest {
  int npus = 0;        // the job's NPUs: copies × the rank files
  int copies = 1;      // data-parallel copies of the rank files' program set
  int interleave = 0;  // ranks of a copy that sit together (see above); 0 = the whole copy
  std::string data_parallel_groups = "world";  // --dp-groups syntax
  std::string path;                            // the manifest file, for messages
};

// "<prefix>.manifest.yaml".
std::string ManifestPath(const std::string& prefix);

// The manifest of `prefix`, or nullopt when there is none; an error naming the file and key for
// a malformed one.
StatusOr<std::optional<TraceManifest>> LoadTraceManifestOf(const std::string& prefix);
StatusOr<TraceManifest> LoadTraceManifest(const std::string& path);

// Writes `m` to `path` as the YAML LoadTraceManifest reads, with a comment saying what it is.
Status WriteTraceManifest(const std::string& path, const TraceManifest& m,
                          const std::string& comment);

}  // namespace et
}  // namespace orrery
