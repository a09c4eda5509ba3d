// The flags of a run (`orrery --workload-configuration=... ...`), declared once: RunFlagSchema()
// gives each flag's name, help, default, unit and range or choices (config/flag_schema.h), from
// which come the command line's parser and --help, the checks, docs/cli.md's table and the
// 'flags' section of --print-config (runner/print_config.h). RunOptionsFromFlags turns them into
// a run's options, checking what no single flag can (--jobs-alone without --jobs, ...).
//
//   RunFlags f;
//   Status s = RunFlagSchema().Apply(vm, &f, &given);
//   StatusOr<RunOptions> o = RunOptionsFromFlags(f, given);
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/flag_schema.h"
#include "network/factory.h"
#include "runner/options.h"

namespace orrery {

// One field per flag; the defaults are the flags' defaults.
struct RunFlags {
  std::string workload;
  std::string system_config;
  std::string network_config;
  std::string memory_config;
  std::string comm_group_config = "empty";
  std::vector<double> queues_per_dim = {1};
  double injection_scale = 1;
  double compute_scale = 1;
  std::string npu_compute_scale;
  double comm_scale = 1;
  bool rendezvous = false;
  Backend backend = Backend::kAnalyticalAware;
  std::string nccl_model;
  std::string nccl_algorithm;
  std::string nccl_protocol;
  std::string link_stats;
  bool strict = false;
  bool exact = false;
  bool replicate_trace = false;
  std::string dp_groups;
  std::string jobs;
  bool jobs_alone = false;
  std::string timeline;
  std::string timeline_chakra;
  std::string timeline_npus;
  std::string timeline_chunks = "on";
  std::string report;
  std::string report_csv;
  bool dry_run = false;
  std::string max_memory;
  bool force = false;
  std::string log_level = "info";
  std::string log_file;
  std::string logging_configuration;
  std::string logging_folder;
};

const FlagSchema<RunFlags>& RunFlagSchema();

// The flags that say what `orrery` does with a run's flags rather than how it runs (they are not
// part of a printed configuration).
struct RunCommandFlags {
  bool print_config = false;  // print the effective configuration and stop
  std::string config;         // a printed configuration to run
};
const FlagSchema<RunCommandFlags>& RunCommandFlagSchema();

// The options of the run the flags describe. `given` names the flags given (an empty
// --dp-groups is an error, an absent one the default). Errors: every problem across flags, and
// an output file that cannot be written (checked before the run, so that a typo does not cost a
// whole simulation).
StatusOr<RunOptions> RunOptionsFromFlags(const RunFlags& f, const std::set<std::string>& given);

// Whether an output flag's file (or, with `prefix`, the files <path>.*.csv) can be written: ""
// when it can, else what is wrong.
std::string OutputPathProblem(const std::string& flag, const std::string& path, bool prefix);

}  // namespace orrery
