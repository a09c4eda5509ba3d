// The options of one run: the flags of `orrery` (orrery_main.cc), a sweep point's or a validate
// row's settings. Read by every stage of RunSimulation (runner/run.h).
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "common/units.h"
#include "network/factory.h"
#include "runner/estimate.h"

namespace orrery {

// What a running simulation reports of itself (RunOptions::progress).
struct Progress {
  Time now;
  uint64_t events = 0;
  uint64_t nodes_done = 0;
  uint64_t nodes_total = 0;
};

// A printed configuration's sections (orrery --config FILE; runner/print_config.h), read in place
// of the files: a section that is a map stands in for its file. Messages name `path` and the
// lines of the printed file.
struct ConfigSections {
  std::string path;
  YAML::Node system, network, memory, nccl_model;
};

struct RunOptions {
  std::string workload;  // prefix: rank r reads <prefix>.<r>.et
  std::string system_config;
  std::string network_config;
  std::string memory_config;      // optional: default NO_MEMORY_EXPANSION
  std::string comm_group_config;  // optional ("empty" or "" = none, as ASTRA-sim)
  // With --config: the sections standing in for the files above (system_config, network_config
  // and memory_config then name the printed file, for messages and relative paths).
  ConfigSections sections;
  Backend backend = Backend::kAnalyticalAware;
  std::vector<int> queues_per_dim;  // --num-queues-per-dim (one value = every dimension)
  double injection_scale = 1.0;
  double compute_scale = 1.0;
  std::string npu_compute_scale;  // --npu-compute-scale, e.g. "3:1.5,8-15:0.5" (see npu_scale.h)
  double comm_scale = 1.0;
  bool rendezvous = false;
  bool strict = false;  // dangling dependencies are errors
  // --exact: every NPU simulated, no shortcut (runner/symmetry.h), to compare against.
  bool exact = false;
  // --link-stats: when set, a CSV of every link (WriteLinkStats) is written here after the run.
  std::string link_stats;
  bool record = false;  // keep per-node activity and link statistics (timelines, reports)
  // With `record`, also keep every phase of every chunk (RunResult::phases: the Chrome
  // timeline's chunk lanes) and every change of a communication queue's length
  // (RunResult::queues: timelines' counters, reports' queue series). Both grow with the chunks
  // a run moves (3 million phases and 6.6 million samples, 400 MB, for GPT-3 175B on 128 NPUs);
  // `orrery` keeps the phases only for --timeline, a sweep neither.
  bool record_chunk_phases = true;
  bool record_queue_lengths = true;
  // --timeline-npus: the NPUs a timeline shows, ids and ranges ("0-7,64"; "" = all). Chunk
  // phases are kept for these NPUs only; RunResult::timeline_npus carries the set to the
  // timeline writers. Reports and the summary still cover every NPU.
  std::string timeline_npus;
  // An NCCL model (nccl/nccl_model.h) to choose every collective's algorithm and protocol,
  // in place of the system configuration's 'nccl-model' (which is relative to that file).
  std::string nccl_model;
  // With an NCCL model: only these algorithms (ring, tree, nvls, nvlstree) and protocols (LL,
  // LL128, Simple), in NCCL_ALGO's and NCCL_PROTO's syntax ("ring", "nvls,ring", "^nvls"); "" =
  // any.
  std::string nccl_algorithm;
  std::string nccl_protocol;
  // How a choice nccl_algorithm leaves out is named in errors (validate's flag is --algorithm).
  std::string nccl_algorithm_flag = "--nccl-algorithm";
  // --replicate-trace: the trace's N rank files (<prefix>.0.et ..) run on the network's K·N
  // NPUs as K copies (workload/placement.h); `dp_groups` (--dp-groups) names the communicator
  // groups that span every copy ("" = the default, "world").
  bool replicate_trace = false;
  std::string dp_groups;
  // --jobs: a jobs file (runner/jobs_config.h) in place of `workload`: several traces sharing the
  // machine, each on its own NPUs.
  std::string jobs;
  // With --jobs: run only this job (an index into the file's jobs) on the NPUs it has in the
  // full placement, the other jobs' NPUs idle; -1 = every job. AddJobsAlone sets it.
  int job_alone = -1;
  // Before the run starts, its cost is estimated from the inputs (runner/estimate.h) and checked
  // against `budget`: past it, RunSimulation returns an error naming what makes the run large and
  // the flag that allows it. With `estimate_only` (--dry-run) it returns the estimate alone.
  RunBudget budget;
  bool estimate_only = false;
  // Called now and then during the run (every 2^22 events) with what is known so far.
  std::function<void(const Progress&)> progress;
  // With the system config's trace-enabled: 1, called with one line per node issued and per
  // node completed, in ASTRA-sim's words ("issue,sys->id=0, tick=0, node->id=1, ...").
  std::function<void(const std::string&)> node_trace;
};

}  // namespace orrery
