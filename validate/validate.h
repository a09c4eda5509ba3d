// `orrery validate`: simulate what nccl-tests measured, on a machine profile, and report the error.
//
//   ValidateOptions o;  o.measurements = "h100.log";  o.machine = "configs/machines/hgx-h100";
//   StatusOr<ValidationReport> r = Validate(o);
//   std::fputs(FormatValidation(*r).c_str(), stdout);   // ends "geomean error: X% over N sizes"
//
// A machine profile is a directory with system.yaml, network.yaml and optionally memory.yaml
// (JSON is YAML too) and a README. When a measurement used another GPU count than the profile's
// network, the network's last dimension (the node count) is scaled to match, if it divides.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "network/factory.h"

namespace orrery {

struct ValidateOptions {
  std::string measurements;        // nccl-tests log or CSV
  std::string machine;             // profile directory
  std::string algorithm = "auto";  // auto (the profile's) | ring | tree | nvls
  uint64_t min_size = 0;           // rows below this size are left out
  int gpus = 0;                    // for CSVs without a gpus column; 0 = the profile's NPU count
  std::string collective;          // for inputs that do not name it
  Backend backend = Backend::kAnalyticalAware;
  std::string work_dir;  // scratch space for generated traces and configs
};

struct ValidationRow {
  std::string source;
  int gpus = 0;
  uint64_t size = 0;
  double measured_us = 0;
  double simulated_us = 0;
  double error = 0;  // (simulated - measured) / measured
};

struct ValidationReport {
  std::string collective;
  std::vector<ValidationRow> rows;
  double geomean_abs_error = 0;  // geometric mean of |error| over rows
};

StatusOr<ValidationReport> Validate(const ValidateOptions& options);
std::string FormatValidation(const ValidationReport& r);
Status WriteValidationJson(const ValidationReport& r, const std::string& path);

// Geometric mean of |e| (each floored at 1e-6 so a perfect row does not zero the mean).
double GeomeanAbs(const std::vector<double>& errors);

// `orrery validate ...`; argv[0] is "validate".
int ValidateMain(int argc, char** argv);

}  // namespace orrery
