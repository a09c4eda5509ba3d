// The command lines of `validate`, `calibrate` and `validate --training`, their flags declared
// once on config/flag_schema.h: the flags validate and calibrate share (MeasurementFlagSchema)
// and each command's own. From the declarations come the parsers, --help, the checks (one
// message per bad value: "--jobs is '5000'; expected an integer >= 0 and <= 4096") and the
// tables of docs/cli.md (ValidateFlagDocs, CalibrateFlagDocs, TrainingFlagDocs).
//
//   MeasurementCommandLine cli(MeasurementTool::kValidate, "orrery validate: ...", &o, &more);
//   ValidateFlagSchema().AddTo(&cli.options());
//   ValidateFlags f;
//   const int done = cli.Parse(argc, argv, [&](const auto& vm) {
//     return ValidateFlagSchema().Apply(vm, &f);
//   });
//   if (done >= 0) return done;   // --help, or an error printed as "error: validate: ..."
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/flag_schema.h"
#include "config/key_doc.h"
#include "network/factory.h"
#include "validate/validate.h"

namespace orrery {

// The flags validate and calibrate share, as given (MeasurementCommandLine turns them into
// MeasurementOptions).
struct MeasurementFlags {
  std::vector<std::string> nccl_tests;  // the first is MeasurementOptions::measurements
  std::string machine;
  uint64_t min_size = 0;
  int gpus = 0;  // 0 = not given
  std::vector<double> only_gpus;
  std::string collective;
  bool in_place = false;
  std::string harness_floor = "auto";  // auto | none | a time in µs
  Backend backend = Backend::kAnalyticalAware;
  int jobs = 0;
};

enum class MeasurementTool { kValidate, kCalibrate };

// The shared flags; `tool` words the help of --nccl-tests (what several inputs do) and
// --only-gpus.
const FlagSchema<MeasurementFlags>& MeasurementFlagSchema(MeasurementTool tool);

// validate's own flags.
struct ValidateFlags {
  std::string algorithm = "auto";
  std::string protocol = "auto";
  std::string report;
};
const FlagSchema<ValidateFlags>& ValidateFlagSchema();

// calibrate's own flags.
struct CalibrateFlags {
  std::string out;
  std::vector<std::string> fit;
};
const FlagSchema<CalibrateFlags>& CalibrateFlagSchema();

// validate --training's flags.
struct TrainingFlags {
  std::string training;
  std::string report;
  int jobs = 0;
  std::vector<std::string> run;
  std::string machines;
};
const FlagSchema<TrainingFlags>& TrainingFlagSchema();

// The flag tables of docs/cli.md: each command's flags (validate's and calibrate's shared ones
// first).
std::vector<KeyDoc> ValidateFlagDocs();
std::vector<KeyDoc> CalibrateFlagDocs();
std::vector<KeyDoc> TrainingFlagDocs();

// The command line validate and calibrate share: the constructor declares the shared flags
// (options() takes a tool's own); Parse parses argv, checks every flag (the shared ones, then
// the tool's with `own`), fills `o` and returns -1 to go on, or the exit code (0 after --help,
// 1 after an error, each problem printed as "error: <tool>: ...").
// --nccl-tests may be given more than once: the first goes to o->measurements, the others to
// *more_inputs, in order.
class MeasurementCommandLine {
 public:
  using ApplyOwn = std::function<Status(const boost::program_options::variables_map&)>;
  MeasurementCommandLine(MeasurementTool tool, const char* description, MeasurementOptions* o,
                         std::vector<std::string>* more_inputs);
  boost::program_options::options_description& options() { return desc_; }
  int Parse(int argc, char** argv, const ApplyOwn& own);

 private:
  MeasurementTool tool_;
  std::string name_;
  boost::program_options::options_description desc_;
  MeasurementOptions* o_;
  std::vector<std::string>* more_inputs_;
};

}  // namespace orrery
