// `orrery --print-config` and `orrery --config FILE`: a run's effective configuration as one
// YAML document, and a run read back from it (docs/cli.md, "Printed configurations").
//
//   flags:      every run flag with its effective value (defaults filled in), except the files
//               the sections below stand in for
//   system:     every system key with its effective value (defaults filled in; gpu-model made
//               absolute; nccl-model left out when the nccl-model section holds the model)
//   network:    the network configuration's keys with the defaults its machine uses filled in
//               (NetworkConfigWithDefaults; custom-file made absolute)
//   memory:     the remote-memory configuration's keys with defaults, when the run has one
//   nccl-model: the NCCL model the run uses (--nccl-model or the system key), when it uses one,
//               every entry's keys with their defaults (NcclModelWithDefaults)
//
// Paths in 'flags' are as given, relative to the working directory; run the printed file from
// the same directory. Printing the configuration of a printed configuration gives it again.
#pragma once

#include <set>
#include <string>

#include "common/status.h"
#include "runner/options.h"
#include "runner/run_flags.h"

namespace orrery {

// The document for the run `f` describes, whose options are `o` (RunOptionsFromFlags, with
// UsePrintedSections when it came from --config). Errors: a configuration file that cannot be
// read or is not valid (the run's own checks, LoadMachine's, run first).
StatusOr<std::string> PrintConfig(const RunFlags& f, const RunOptions& o);

// Reads a printed configuration: the flags its 'flags' section sets go into *f (their names into
// *given), its other sections into *sections. Errors name the file, line and key.
Status ReadPrintedConfig(const std::string& path, RunFlags* f, std::set<std::string>* given,
                         ConfigSections* sections);

// Points `o` at the sections in place of the files; an error when a flag names a file a section
// stands in for (e.g. --system-configuration with a 'system' section).
Status UsePrintedSections(const ConfigSections& sections, RunOptions* o);

}  // namespace orrery
