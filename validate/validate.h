// `orrery validate`: simulate what nccl-tests measured, on a machine profile, and report the error.
//
//   ValidateOptions o;  o.measurements = "h100.log";  o.machine = "configs/machines/hgx-h100";
//   StatusOr<ValidationReport> r = Validate(o);
//   std::fputs(FormatValidation(*r).c_str(), stdout);   // ends "geomean error: X% over N sizes"
//
// A machine profile is a directory with system.yaml, network.yaml, optionally memory.yaml (JSON
// is YAML too) and nccl.yaml (nccl/nccl_model.h), and a README. When a measurement used
// another GPU count than the profile's network, the network's last dimension (the node count) is
// scaled to match, if it divides.
//
// With nccl.yaml every row runs as any simulation with the system key `nccl-model` does
// (nccl/nccl_tuner.h): the (algorithm, protocol) NCCL could use there that is fastest for the
// collective alone, as NCCL's tuner picks by its own cost model; a log forced with NCCL_ALGO,
// or --algorithm, keeps that algorithm only. Without nccl.yaml the profile's system.yaml runs
// as it is (with --algorithm's implementations when given).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "nccl/nccl_model.h"
#include "network/factory.h"
#include "runner/run.h"
#include "validate/nccl_tests.h"

namespace orrery {

// What `validate` and `calibrate` both read: the measurements and the profile to simulate on.
struct MeasurementOptions {
  std::string measurements;  // nccl-tests log or CSV
  std::string machine;       // profile directory
  uint64_t min_size = 0;     // rows below this size are left out
  int gpus = 0;  // for inputs without it (CSV: 0 = the profile's NPU count; log: 0 = error)
  std::vector<int> only_gpus;  // keep only measurements on these GPU counts (empty = all)
  std::string collective;      // for inputs that do not name it
  Backend backend = Backend::kAnalyticalAware;
  // Compare the in-place times (NcclRow::in_place_us) instead of the out-of-place ones; every
  // row kept must have one. Orrery's collectives copy nothing locally, so they are the in-place
  // collective: out of place, NCCL's all-gather also copies the rank's own part of the output.
  bool in_place = false;
  // nccl-tests' own time per iteration, below which no row can be measured (--harness-floor):
  // kHarnessFloorAuto = each measurement's rows of 0 bytes, when it has some (NCCL runs nothing
  // for them, so they time the harness alone); 0 = none; > 0 = this many µs for every input.
  static constexpr double kHarnessFloorAuto = -1;
  double harness_floor_us = kHarnessFloorAuto;
  // Simulations run at once (--jobs): each row (validate) or grid size (calibrate) is a
  // simulation of its own, so they run side by side; 0 = all cores. The results are the same
  // whatever the number: each simulation depends only on its own row.
  int jobs = 0;
  // A line on stderr counting the simulations done, rewritten in place and cleared at the end
  // (the command line sets it when stderr is a terminal).
  bool progress = false;
};

struct ValidateOptions : MeasurementOptions {
  // auto (NCCL's choice, or the log's NCCL_ALGO), or NCCL_ALGO's syntax: ring | tree | nvls |
  // nvlstree, a comma list of them, ^ before it for all but.
  std::string algorithm = "auto";
  // auto (NCCL's choice by size, or the log's NCCL_PROTO), or NCCL_PROTO's syntax: LL | LL128 |
  // Simple, a comma list, ^ before it for all but. Needs the profile's nccl.yaml.
  std::string protocol = "auto";
  std::string work_dir;  // scratch space for generated traces and configs
};

struct ValidationRow {
  std::string source;
  int gpus = 0;
  uint64_t size = 0;
  double measured_us = 0;
  double simulated_us = 0;
  double error = 0;    // (simulated - measured) / measured
  std::string choice;  // "nvls/Simple"; "" without nccl.yaml
  // The collective's own simulated time; simulated_us is the larger of it and the measurement's
  // harness floor (NcclMeasurement::harness_floor_us).
  double collective_us = 0;
  bool AtFloor() const { return simulated_us > collective_us; }
};

struct ValidationReport {
  std::string input;  // the measurements validated (ValidateOptions::measurements)
  std::string collective;
  std::vector<ValidationRow> rows;
  double geomean_abs_error = 0;  // geometric mean of |error| over rows
  // What the reader should know about how the rows were compared: a CSV without a gpus column
  // compared on the profile's NPU count.
  std::vector<std::string> notes;
};

StatusOr<ValidationReport> Validate(const ValidateOptions& options);
std::string FormatValidation(const ValidationReport& r);
Status WriteValidationJson(const ValidationReport& r, const std::string& path);

// Several inputs (`validate` and `calibrate` with --nccl-tests given more than once).
// An error when two of `inputs` are the same file however spelt: its rows would count twice in
// an error over all of them (and twice in a fit).
Status CheckDistinctInputs(const std::vector<std::string>& inputs);
// `options.measurements`, then each of `more`, validated with the same options: one report per
// input, in order; the first input that fails is the error.
StatusOr<std::vector<ValidationReport>> ValidateEach(const ValidateOptions& options,
                                                     const std::vector<std::string>& more);
// Reports of several inputs: a single one as FormatValidation; several each under a line
// "== INPUT", then "geomean error: X% over N sizes of K inputs" (over every row of all of them).
std::string FormatValidations(const std::vector<ValidationReport>& reports);
// As WriteValidationJson for one report; for several {"geomean_abs_error": over every row,
// "sizes": rows, "inputs": [{"file": INPUT, then the fields of one report}, ...]}.
Status WriteValidationsJson(const std::vector<ValidationReport>& reports, const std::string& path);

// Geometric mean of |e| (each floored at 1e-6 so a perfect row does not zero the mean).
double GeomeanAbs(const std::vector<double>& errors);

// f(0) ... f(n - 1), on up to `jobs` threads at once (0 = all cores), each index once; returns
// when all are done. f must touch nothing another index does. The indices are started in
// decreasing `cost` (when given, one per index; ties in index order), so that the longest
// simulations do not start last and leave the other threads idle. With a `progress` label, a line
// "<label>: K of N" on stderr counts them, and is cleared when all are done. An f that runs out
// of memory (std::bad_alloc) gives an error (kOutOfMemory) once all are done.
Status ForEachIndex(size_t n, int jobs, const std::function<void(size_t)>& f,
                    const std::vector<double>* cost = nullptr, const std::string& progress = "");

// A loaded machine profile and the scratch files that simulate collectives on it.
class ProfileSimulator {
 public:
  // Reads DIR's files; `work_dir` "" = a fresh directory under /tmp, removed on destruction.
  static StatusOr<ProfileSimulator> Open(const std::string& dir, const std::string& work_dir,
                                         Backend backend);
  ProfileSimulator(ProfileSimulator&&) noexcept;
  ~ProfileSimulator();

  int npus() const { return npus_; }
  int dims() const { return dims_; }
  // Whether `gpus` GPUs fit in one node of a profile of several dimensions: they then run as a
  // communicator group of the first node's first `gpus` NPUs on the profile's own network (its
  // node dimension cannot shrink to one), the other NPUs idle.
  bool InOneNode(int gpus) const { return dims_ > 1 && gpus >= 2 && gpus <= per_node_; }
  // GPUs per node and nodes when `gpus` GPUs run (one node for a one-dimension profile).
  int Heads(int gpus) const { return dims_ > 1 && !InOneNode(gpus) ? per_node_ : gpus; }
  int Nodes(int gpus) const { return dims_ > 1 && !InOneNode(gpus) ? gpus / per_node_ : 1; }
  const NcclModel* nccl() const { return has_nccl_ ? &nccl_ : nullptr; }
  const std::string& dir() const { return dir_; }
  // The system config's preferred-dataset-splits: the chunks a collective is cut into.
  int splits() const { return splits_; }

  // The measurements `o` names, on the GPU counts it keeps (a CSV without GPU counts is on the
  // profile's), with only their rows of at least o.min_size bytes; an error when none is left.
  // Rows of 0 bytes are left out whatever o.min_size (counted in NcclMeasurement::empty_rows):
  // NCCL runs nothing for an empty buffer (enqueue.cc, taskAppend returns at count 0), so their
  // time is nccl-tests' own overhead, not a collective's. Their mean time (in place with
  // o.in_place) is the measurement's harness_floor_us under kHarnessFloorAuto; o's own when > 0.
  StatusOr<std::vector<NcclMeasurement>> Load(const MeasurementOptions& o) const;
  // A network file for `gpus` NPUs (the node dimension scaled; the profile's own when they fit
  // in one node, InOneNode).
  // `nodes` (0 = unknown) is how many hosts the measurement ran on: GPUs per host that are not
  // the profile's GPUs per node are an error.
  StatusOr<std::string> Network(int gpus, const std::string& source, int nodes = 0);
  // A system file running NCCL algorithm `algorithm` ("" = the profile's implementations) with
  // this launch latency and efficiency (negative = the profile's).
  StatusOr<std::string> System(const std::string& algorithm, double latency_us, double efficiency);
  // One collective of nccl-tests size `size` on `gpus` NPUs: the simulated time in µs.
  StatusOr<double> TimeUs(const std::string& collective, int gpus, uint64_t size,
                          const std::string& system_file, const std::string& network_file);
  // The same collective as NCCL would run it: the profile's nccl.yaml chooses the algorithm and
  // protocol (only `algorithm`'s when not ""), exactly as `nccl-model` does in any run.
  struct Tuned {
    double time_us = 0;
    std::string choice;  // "nvls/Simple"
  };
  StatusOr<Tuned> NcclTimeUs(const std::string& collective, int gpus, uint64_t size,
                             const std::string& algorithm, const std::string& protocol,
                             const std::string& network_file);

 private:
  ProfileSimulator() = default;
  // Runs one collective of nccl-tests size `size` on `gpus` NPUs; `nccl`: its nccl_model and
  // nccl_algorithm apply.
  StatusOr<RunResult> Run(const std::string& collective, int gpus, uint64_t size,
                          const std::string& system_file, const std::string& network_file,
                          const RunOptions* nccl);
  std::string dir_, system_, network_, memory_, work_;
  bool own_work_ = false;
  int npus_ = 0, dims_ = 0, per_node_ = 0, splits_ = 1;
  bool has_nccl_ = false;
  NcclModel nccl_;
  Backend backend_ = Backend::kAnalyticalAware;
  std::vector<std::string> files_;  // written, removed on destruction
  // Scratch files so far (system files, each run's traces): every one is named by its number,
  // so that runs on several threads at once (Validate, Calibrate) do not share files.
  std::atomic<uint64_t> serial_{0};
};

// `orrery validate ...`; argv[0] is "validate".
int ValidateMain(int argc, char** argv);

}  // namespace orrery
