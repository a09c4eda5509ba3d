// `orrery validate --training RUNS.yaml`: generate each published training run's step
// (generate-llm), simulate it on its machine profile scaled to the run's GPUs, and compare the
// step time with the published one.
//
//   TrainingOptions o;  o.runs = "configs/training/published.yaml";  o.jobs = 2;
//   StatusOr<TrainingReport> r = ValidateTraining(o);
//   std::fputs(FormatTraining(*r).c_str(), stdout);   // ends "geomean error: X% over N runs"
//
// A runs file (docs/training-validation.md):
//   runs:
//     - name: gpt3-175b-h100-512
//       source: "URL, table"
//       machine: dgx-h100-ib         # a profile under configs/machines, or a profile's path
//       gpus: 512
//       generate: "--model gpt3-175b --tp 4 --pp 8 --dp 16 --global-batch-size 2048 ..."
//       measured: {tokens_per_s_per_gpu: 782}
//       held_out: true
// `measured` holds one of step_time_s; tokens_per_s_per_gpu; tflops_per_gpu or mfu, each with
// `flops: megatron | megatron-recompute | 6n` (et_feeder/llm_workload.h, PublishedStepFlops; mfu
// is a share of the profile GPU's BF16 peak, or of `peak_tflops` when given).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace orrery {

struct TrainingRun {
  std::string name;
  std::string source;
  std::string machine;  // as written in the file
  int gpus = 0;
  std::string generate;  // generate-llm's flags
  // The published figure, as given: its kind ("step_time_s", "tokens_per_s_per_gpu",
  // "tflops_per_gpu", "mfu"), its value, and for FLOP rates the convention and peak.
  std::string measured_kind;
  double measured_value = 0;
  std::string flops;       // tflops_per_gpu, mfu: megatron | megatron-recompute | 6n
  double peak_tflops = 0;  // mfu: the peak it is a share of (0: the profile GPU's BF16 peak)
  bool held_out = true;
  std::string sets;  // what this run was used to set, when not held out
  int line = 0;      // in the runs file
};

// Reads a runs file; every problem (unknown key, missing field, bad value, a name used twice)
// named with the file, line and run.
StatusOr<std::vector<TrainingRun>> LoadTrainingRuns(const std::string& path);

struct TrainingOptions {
  std::string runs;               // the runs file
  std::string machines;           // where machine names are looked up ("" = beside the file:
                                  // ../machines, then configs/machines from the working dir)
  std::vector<std::string> only;  // run only these names (empty = all)
  int jobs = 0;                   // runs simulated at once (0 = all cores)
  std::string work_dir;           // scratch ("" = a fresh directory under /tmp, removed)
  bool progress = false;
};

struct TrainingResult {
  TrainingRun run;
  std::string machine_dir;
  double measured_s = 0;   // the published figure as a step time
  double predicted_s = 0;  // the simulated step
  double error = 0;        // (predicted - measured) / measured
  std::string problem;     // why the run could not be simulated ("" = it was)
  bool ok() const { return problem.empty(); }
};

struct TrainingReport {
  std::string input;
  std::vector<TrainingResult> runs;  // in the file's order
  double geomean_abs_error = 0;      // over the runs simulated
  double held_out_geomean_abs_error = 0;
  int held_out = 0;
  double max_abs_error = 0;
  std::string worst;  // the run with max_abs_error
  int failed = 0;     // runs that could not be simulated
};

StatusOr<TrainingReport> ValidateTraining(const TrainingOptions& options);
// The table, one row per run (a failed run with its problem), then the held-out runs' geomean and
// the worst run, and last "geomean error: X% over N runs".
std::string FormatTraining(const TrainingReport& r);
Status WriteTrainingJson(const TrainingReport& r, const std::string& path);

// `orrery validate --training RUNS.yaml [--report FILE.json] [--jobs N] [--run NAME]...`; argv[0]
// is "validate". Returns the exit code: 1 when any run could not be simulated.
int TrainingValidateMain(int argc, char** argv);

}  // namespace orrery
