#include "validate/measurement_cli.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <limits>

#include "common/flags.h"
#include "validate/nccl_tests.h"

namespace orrery {

namespace po = boost::program_options;

namespace {

// --harness-floor's value: "" when valid, otherwise what would be.
std::string CheckHarnessFloor(const std::string& v) {
  double us = 0;
  if (v == "auto" || v == "none" || ParseMeasuredTime(v, &us)) return "";
  return std::string("auto, none or ") + kMeasuredTimeRange + ", e.g. 34";
}

// What to give, and how many GPUs, and the files: the measurement and the profile.
void DeclareInputs(FlagSchema<MeasurementFlags>* s, const char* more_help,
                   const char* only_gpus_help) {
  using F = MeasurementFlags;
  s->Repeated("nccl-tests", &F::nccl_tests)
      .Default("required")
      .Help(std::string("nccl-tests log, or a CSV of measurements; give it again for each "
                        "further input, ") +
            more_help);
  s->String("machine", &F::machine)
      .Default("required")
      .Help("machine profile directory (configs/machines/...)");
  s->Integer("min-size", &F::min_size).Unit("bytes").Help("leave out smaller sizes");
  s->Integer("gpus", &F::gpus)
      .Min(1)
      .Default("none")
      .Help(
          "GPU count of an input that does not give it: a CSV without a gpus column (default: "
          "the profile's, unless it has a nodes column), a log without '#  Rank' lines");
  s->NumberList("only-gpus", &F::only_gpus)
      .Integral()
      .Min(1)
      .Max(std::numeric_limits<int>::max())
      .Help(only_gpus_help);
  s->String("collective", &F::collective).Help("collective of an input that does not name it");
}

// How the measurement is compared and simulated.
void DeclareComparison(FlagSchema<MeasurementFlags>* s) {
  using F = MeasurementFlags;
  s->Switch("in-place", &F::in_place)
      .Help(
          "compare the in-place times (nccl-tests' second group of columns) instead of the "
          "out-of-place ones; out of place, NCCL's all-gather also copies each rank's own part, "
          "which Orrery does not model");
  s->String("harness-floor", &F::harness_floor)
      .Check(CheckHarnessFloor)
      .AllowedText(std::string("auto, none or ") + kMeasuredTimeRange)
      .Help(
          "nccl-tests' own time per iteration, below which no row is measured: auto (the mean "
          "of the input's rows of 0 bytes, which time the harness alone; none without such "
          "rows) | none | a time in us (0.001 to 1e9)");
  s->Enum("network-backend", &F::backend,
          {{BackendName(Backend::kAnalyticalAware), Backend::kAnalyticalAware},
           {BackendName(Backend::kAnalyticalUnaware), Backend::kAnalyticalUnaware},
           {BackendName(Backend::kPacket), Backend::kPacket}})
      .Help("the network model (docs/packet-backend.md)");
  s->Integer("jobs", &F::jobs)
      .Min(0)
      .Max(4096)
      .Help(
          "simulations run at once, each size its own; 0 = all cores (the results are the same "
          "whatever the number)");
}

FlagSchema<MeasurementFlags>* NewMeasurementSchema(const char* more_help,
                                                   const char* only_gpus_help) {
  auto* s = new FlagSchema<MeasurementFlags>();
  DeclareInputs(s, more_help, only_gpus_help);
  DeclareComparison(s);
  return s;
}

const char* ToolName(MeasurementTool tool) {
  return tool == MeasurementTool::kValidate ? "validate" : "calibrate";
}

// Each problem of `s` as "error: <tool>: ..."; returns 1.
int PrintProblems(const std::string& tool, const Status& s) {
  for (const std::string& p : s.problems()) {
    std::fprintf(stderr, "error: %s: %s\n", tool.c_str(), p.c_str());
  }
  return 1;
}

// The flags as MeasurementOptions (the harness floor as µs, the GPU counts as integers).
void ToOptions(const MeasurementFlags& f, MeasurementOptions* o) {
  o->machine = f.machine;
  o->min_size = f.min_size;
  o->gpus = f.gpus;
  o->only_gpus.assign(f.only_gpus.begin(), f.only_gpus.end());
  o->collective = f.collective;
  o->in_place = f.in_place;
  if (f.harness_floor == "auto") {
    o->harness_floor_us = MeasurementOptions::kHarnessFloorAuto;
  } else if (f.harness_floor == "none") {
    o->harness_floor_us = 0;
  } else {
    ParseMeasuredTime(f.harness_floor, &o->harness_floor_us);  // checked by CheckHarnessFloor
  }
  o->backend = f.backend;
  o->jobs = f.jobs;
  o->progress = isatty(STDERR_FILENO) != 0;
}

}  // namespace

const FlagSchema<MeasurementFlags>& MeasurementFlagSchema(MeasurementTool tool) {
  static const FlagSchema<MeasurementFlags>* validate =
      NewMeasurementSchema("each validated and printed, then the error over all of them",
                           "keep only measurements on these GPU counts, e.g. 16,32");
  static const FlagSchema<MeasurementFlags>* calibrate =
      NewMeasurementSchema("all fitted together", "fit on these GPU counts only, e.g. 16,32");
  return tool == MeasurementTool::kValidate ? *validate : *calibrate;
}

const FlagSchema<ValidateFlags>& ValidateFlagSchema() {
  static const FlagSchema<ValidateFlags>* schema = [] {
    using F = ValidateFlags;
    auto* s = new FlagSchema<F>();
    s->String("algorithm", &F::algorithm)
        .Help(
            "auto (NCCL's fastest choice from the profile's nccl.yaml, or the log's NCCL_ALGO) "
            "| ring | tree | nvls | nvlstree, as NCCL_ALGO: a comma list, or ^ before it for all "
            "but");
    s->String("protocol", &F::protocol)
        .Help(
            "auto (NCCL's choice by size, or the log's NCCL_PROTO) | LL | LL128 | Simple, as "
            "NCCL_PROTO: a comma list, or ^ before it for all but; needs the profile's "
            "nccl.yaml");
    s->String("report", &F::report).Help("also write the rows as JSON");
    return s;
  }();
  return *schema;
}

const FlagSchema<CalibrateFlags>& CalibrateFlagSchema() {
  static const FlagSchema<CalibrateFlags>* schema = [] {
    using F = CalibrateFlags;
    auto* s = new FlagSchema<F>();
    s->String("out", &F::out).Help("write the fitted profile here (none: print nccl.yaml only)");
    s->StringList("fit", &F::fit)
        .Help(
            "fit only these algorithms' and protocols' latency and efficiency, e.g. tree,Simple "
            "(none: all but ring's)");
    return s;
  }();
  return *schema;
}

const FlagSchema<TrainingFlags>& TrainingFlagSchema() {
  static const FlagSchema<TrainingFlags>* schema = [] {
    using F = TrainingFlags;
    auto* s = new FlagSchema<F>();
    s->String("training", &F::training).Default("required").Help("the runs file");
    s->String("report", &F::report).Help("also write the results as JSON here");
    s->Integer("jobs", &F::jobs).Min(0).Max(4096).Help("runs simulated at once (0 = all cores)");
    s->Repeated("run", &F::run).Help("only this run");
    s->String("machines", &F::machines)
        .Help(
            "where machine names are looked up (none: ../machines beside the runs file, then "
            "configs/machines)");
    return s;
  }();
  return *schema;
}

std::vector<KeyDoc> ValidateFlagDocs() {
  std::vector<KeyDoc> docs = MeasurementFlagSchema(MeasurementTool::kValidate).Docs();
  for (const KeyDoc& d : ValidateFlagSchema().Docs()) docs.push_back(d);
  return docs;
}

std::vector<KeyDoc> CalibrateFlagDocs() {
  std::vector<KeyDoc> docs = MeasurementFlagSchema(MeasurementTool::kCalibrate).Docs();
  for (const KeyDoc& d : CalibrateFlagSchema().Docs()) docs.push_back(d);
  return docs;
}

std::vector<KeyDoc> TrainingFlagDocs() { return TrainingFlagSchema().Docs(); }

MeasurementCommandLine::MeasurementCommandLine(MeasurementTool tool, const char* description,
                                               MeasurementOptions* o,
                                               std::vector<std::string>* more_inputs)
    : tool_(tool), name_(ToolName(tool)), desc_(description), o_(o), more_inputs_(more_inputs) {
  desc_.add_options()("help,h", "print this help");
  MeasurementFlagSchema(tool).AddTo(&desc_);
}

int MeasurementCommandLine::Parse(int argc, char** argv, const ApplyOwn& own) {
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc_), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "error: %s: %s (see orrery %s --help)\n", name_.c_str(), e.what(),
                 name_.c_str());
    return 1;
  }
  if (vm.count("help")) {
    std::cout << desc_ << "\n";
    return 0;
  }
  MeasurementFlags f;
  Status problems = MeasurementFlagSchema(tool_).Apply(vm, &f);
  problems.Merge(own(vm));
  if (!problems.ok()) return PrintProblems(name_, problems);
  if (!f.nccl_tests.empty()) {
    o_->measurements = f.nccl_tests[0];
    more_inputs_->assign(f.nccl_tests.begin() + 1, f.nccl_tests.end());
  }
  if (o_->measurements.empty() || f.machine.empty()) {
    std::fprintf(stderr, "error: %s: --nccl-tests LOG and --machine DIR are required\n",
                 name_.c_str());
    return 1;
  }
  ToOptions(f, o_);
  return -1;
}

}  // namespace orrery
