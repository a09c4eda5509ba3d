// `orrery calibrate`: fit a machine profile's NCCL parameters (nccl.yaml: each algorithm's and
// protocol's latency floor and efficiency) to measured nccl-tests times, and write the profile.
//
//   CalibrateOptions o;  o.measurements = "mine.log";  o.machine = "configs/machines/hgx-h100";
//   o.out = "my-cluster";
//   StatusOr<CalibrationResult> r = Calibrate(o);   // r->model is the fitted nccl.yaml
//
// How: for every algorithm of the profile and every GPU count measured, the collective is
// simulated with no launch latency at full efficiency on a grid of sizes (four per octave), so a
// choice (latency L, efficiency e) costs L + T_alg(size / e), T interpolated in log-log between
// grid points (protocol-efficiency moves size / e bytes; see system_config). The parameters
// minimise the sum over rows of |log simulated - log measured| (least absolute deviations in
// log-time: published logs have non-monotonic rows that squares would let dominate), the
// simulated time being the fastest choice (NCCL's tuner), plus a small pull (1e-3 per parameter,
// squared, in log space) towards the profile's current values, which keeps parameters the data
// cannot tell apart where they were. LL128's efficiency is Simple's times 120/128 (its payload
// per 128-byte line), not a free parameter.
// Several inputs (`more`: other collectives, a ring-forced log beside a default one, other GPU
// counts) are fitted together, each row counting once: parameters one log cannot tell apart
// (NVLS always runs with Simple, so an NVLS log alone fixes only their product) are then told
// apart by another.
// The search is coordinate scans then Nelder-Mead from the current values: deterministic. By
// default the `ring` algorithm's own latency and efficiency are the reference and stay as they
// are (the protocols carry them); `fit` names the free ones instead. The result is then checked
// by a full Validate run.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "nccl/nccl_model.h"
#include "network/factory.h"
#include "validate/validate.h"

namespace orrery {

struct CalibrateOptions : MeasurementOptions {
  std::vector<std::string> more;  // further inputs fitted with `measurements`, same options
  std::string out;                // "" = print the fitted nccl.yaml only
  std::vector<std::string> fit;   // algorithms/protocols whose parameters are free (empty = all
                                  // but ring)
};

struct CalibrationResult {
  NcclModel model;                // fitted
  double mean_abs_log_error = 0;  // of the fit (surrogate)
  // Parameters no row of the input depends on, kept at the profile's values ("LL latency-us").
  std::vector<std::string> kept;
  // Of the fitted profile (full simulation), one per input: `measurements`, then `more`.
  std::vector<ValidationReport> validations;
};

StatusOr<CalibrationResult> Calibrate(const CalibrateOptions& options);

// `orrery calibrate ...`; argv[0] is "calibrate".
int CalibrateMain(int argc, char** argv);

}  // namespace orrery
