#include "validate/validate.h"

#include <omp.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <new>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

#include "common/json.h"
#include "config/schema.h"
#include "config/system_config.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"
#include "network/network_config.h"
#include "runner/run.h"
#include "validate/measurement_cli.h"
#include "validate/training.h"
#include "validate/validate_internal.h"

namespace orrery {

using validate_internal::Collectives;
using validate_internal::ValidCollectives;

// ---------------------------------------------------------------------------------------------
// Validate

namespace {

// What a reader of the report should know about its measurements and the run: their own
// notes, GPU counts not in the file, rows of 0 bytes, in-place times, the backend, and the
// harness's own time per iteration.
void AddMeasurementNotes(const ValidateOptions& o, const std::vector<NcclMeasurement>& ms,
                         ValidationReport* report) {
  for (const NcclMeasurement& m : ms) {
    report->notes.insert(report->notes.end(), m.notes.begin(), m.notes.end());
    if (!m.gpus_from_file && o.gpus == 0) {
      report->notes.push_back(m.source + " gives no GPU count (no 'gpus' column): compared on " +
                              "the profile's " + std::to_string(m.gpus) +
                              " NPUs; give --gpus N if it was measured on N GPUs");
    }
    if (m.empty_rows > 0) {
      report->notes.push_back(m.source + ": " + std::to_string(m.empty_rows) + " row" +
                              (m.empty_rows > 1 ? "s" : "") +
                              " of 0 bytes left out: NCCL runs nothing for an empty buffer, so "
                              "the time there is nccl-tests' own overhead");
    }
  }
  if (o.in_place) report->notes.push_back("in-place times compared (--in-place)");
  if (o.backend == Backend::kAnalyticalUnaware) {
    report->notes.push_back(
        "--network-backend analytical-unaware: every message moves at its link's rate (a lane's, "
        "with lanes) whatever else is in flight, so a collective that keeps more chunks on a link "
        "than it has lanes (NCCL's channels) runs faster than the link allows; the shipped "
        "profiles are calibrated on analytical-aware");
  }
  for (const NcclMeasurement& m : ms) {
    if (m.harness_floor_us <= 0) {
      // One thread driving several GPUs is a floor of its own this log cannot measure.
      if (m.gpus_per_thread > 1 && o.harness_floor_us != 0) {
        const std::string g = std::to_string(m.gpus_per_thread);
        report->notes.push_back(
            m.source + ": one thread drives " + g + " GPUs (nccl-tests -g " + g +
            ", the header's nGpus) and issues each iteration's calls to them in turn, so rows "
            "far below 1 MiB may sit at that harness's own time per iteration (33.5-34.7 us for "
            "-g 8 on 8 x A100), which this log has no rows of 0 bytes to measure; "
            "--harness-floor US compares them at it");
      }
      continue;
    }
    char floor[32];
    std::snprintf(floor, sizeof floor, "%.2f", m.harness_floor_us);
    report->notes.push_back(
        m.source + ": nccl-tests' own time per iteration is " + floor + " us (" +
        (o.harness_floor_us > 0 ? std::string("--harness-floor")
                                : "the mean of its rows of 0 bytes, which time the harness alone") +
        "); no row can be measured below it, so a simulated time below it is compared as it "
        "(marked *); --harness-floor none compares the collective alone");
  }
}

// How one measurement's rows run: the NCCL algorithm and protocol they are limited to, and the
// system (without an NCCL model) and network files.
struct Plan {
  std::string algorithm, protocol, system, network;
};

// Measurement m's plan; its files are written here, once per measurement.
StatusOr<Plan> PlanOf(const ValidateOptions& o, const NcclMeasurement& m, ProfileSimulator* sim) {
  Plan plan;
  plan.algorithm = o.algorithm != "auto" ? o.algorithm : m.algorithm;
  plan.protocol = o.protocol != "auto" ? o.protocol : m.protocol;
  if (StatusOr<std::set<std::string>> a = NcclAlgorithmsIn(plan.algorithm); !a.ok()) {
    return a.status().WithContext(m.source + ": the log's NCCL_ALGO '" + m.algorithm + "'");
  }
  if (StatusOr<std::set<std::string>> p = NcclProtocolsIn(plan.protocol); !p.ok()) {
    return p.status().WithContext(m.source + ": the log's NCCL_PROTO '" + m.protocol + "'");
  }
  if (sim->nccl() == nullptr && !plan.protocol.empty()) {
    return Status::Error(m.source + ": NCCL_PROTO '" + plan.protocol + "' needs an NCCL model, " +
                         "and " + o.machine + " has no nccl.yaml");
  }
  if (sim->nccl() == nullptr && !plan.algorithm.empty() && !IsNcclAlgorithm(plan.algorithm)) {
    return Status::Error(m.source + ": NCCL_ALGO '" + plan.algorithm + "' (a list, or all " +
                         "but some) needs an NCCL model to choose among them, and " + o.machine +
                         " has no nccl.yaml; give one algorithm");
  }
  StatusOr<std::string> network = sim->Network(m.gpus, m.source, m.nodes);
  if (!network.ok()) return network.status();
  plan.network = *network;
  // With an NCCL model, every row runs NCCL's choice for its size, chosen as in any run
  // with 'nccl-model' (nccl/nccl_tuner.h); without one, the profile's system file.
  if (sim->nccl() == nullptr) {
    StatusOr<std::string> f = sim->System(plan.algorithm, -1, -1);
    if (!f.ok()) return f.status();
    plan.system = *f;
  }
  return plan;
}

// The rows to compare, (measurement, row) in order, and the simulations they need: a size a
// measurement repeats (several runs in one log) is simulated once, since the same inputs give
// the same time, and a log of one row repeated 200,000 times is one simulation.
struct RowSimulations {
  std::vector<std::pair<size_t, const NcclRow*>> rows;  // (measurement, row)
  std::vector<size_t> distinct_of;                      // row -> its simulation
  std::vector<size_t> distinct;                         // simulation -> its first row
};

RowSimulations DistinctSizes(const std::vector<NcclMeasurement>& ms, ValidationReport* report) {
  RowSimulations r;
  for (size_t mi = 0; mi < ms.size(); ++mi) {
    for (const NcclRow& row : ms[mi].rows) r.rows.push_back({mi, &row});
  }
  r.distinct_of.resize(r.rows.size());
  std::map<std::pair<size_t, uint64_t>, size_t> first;  // (measurement, size) -> simulation
  std::vector<uint64_t> repeated(ms.size(), 0);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto key = std::make_pair(r.rows[i].first, r.rows[i].second->size);
    auto [it, added] = first.emplace(key, r.distinct.size());
    if (added) r.distinct.push_back(i);
    if (!added) ++repeated[r.rows[i].first];
    r.distinct_of[i] = it->second;
  }
  for (size_t m = 0; m < ms.size(); ++m) {
    if (repeated[m] == 0) continue;
    report->notes.push_back(ms[m].source + ": " + std::to_string(repeated[m]) + " row" +
                            (repeated[m] > 1 ? "s repeat sizes" : " repeats a size") +
                            " of earlier rows; each size is simulated once and compared with "
                            "every row of it");
  }
  return r;
}

// Every distinct size simulated, side by side (o.jobs).
StatusOr<std::vector<StatusOr<ProfileSimulator::Tuned>>> SimulateSizes(
    const ValidateOptions& o, const std::vector<NcclMeasurement>& ms,
    const std::vector<Plan>& plans, const RowSimulations& r, const std::string& collective,
    ProfileSimulator* sim) {
  std::vector<StatusOr<ProfileSimulator::Tuned>> simulated(r.distinct.size(),
                                                           Status::Error("not simulated"));
  std::vector<double> cost;  // the bytes the GPUs move, roughly: largest first
  for (size_t i : r.distinct) {
    cost.push_back(static_cast<double>(r.rows[i].second->size) * ms[r.rows[i].first].gpus);
  }
  const Status ran = ForEachIndex(
      r.distinct.size(), o.jobs,
      [&](size_t d) {
        const size_t i = r.distinct[d];
        const int gpus = ms[r.rows[i].first].gpus;
        const uint64_t size = r.rows[i].second->size;
        const Plan& plan = plans[r.rows[i].first];
        if (sim->nccl() != nullptr) {
          simulated[d] =
              sim->NcclTimeUs(collective, gpus, size, plan.algorithm, plan.protocol, plan.network);
        } else {
          StatusOr<double> us = sim->TimeUs(collective, gpus, size, plan.system, plan.network);
          simulated[d] = us.ok()
                             ? StatusOr<ProfileSimulator::Tuned>(ProfileSimulator::Tuned{*us, ""})
                             : StatusOr<ProfileSimulator::Tuned>(us.status());
        }
      },
      &cost, o.progress ? "validate " + o.measurements + ": sizes simulated" : "");
  if (!ran.ok()) return ran;
  return simulated;
}

}  // namespace

StatusOr<ValidationReport> Validate(const ValidateOptions& o) {
  StatusOr<ProfileSimulator> sim = ProfileSimulator::Open(o.machine, o.work_dir, o.backend);
  if (!sim.ok()) return sim.status();
  StatusOr<std::vector<NcclMeasurement>> ms = sim->Load(o);
  if (!ms.ok()) return ms.status();
  ValidationReport report;
  report.input = o.measurements;
  report.collective = ms->front().collective;
  if (Collectives().count(report.collective) == 0) {
    return Status::Error(o.measurements + ": collective '" + report.collective +
                         "' is not one validate simulates; valid: " + ValidCollectives());
  }
  if (o.algorithm != "auto") {
    if (StatusOr<std::set<std::string>> a = NcclAlgorithmsIn(o.algorithm); !a.ok()) {
      return a.status().WithContext("--algorithm (or auto)");
    }
  }
  if (o.protocol != "auto") {
    if (StatusOr<std::set<std::string>> p = NcclProtocolsIn(o.protocol); !p.ok()) {
      return p.status().WithContext("--protocol (or auto)");
    }
  }
  AddMeasurementNotes(o, *ms, &report);
  // Each measurement's network and system files first (they are written once, in order), then
  // every row's simulation, side by side (o.jobs), then the rows in their order: the report is
  // the same whatever the number of jobs, and so is the first error.
  std::vector<Plan> plans;
  for (const NcclMeasurement& m : *ms) {
    StatusOr<Plan> plan = PlanOf(o, m, &*sim);
    if (!plan.ok()) return plan.status();
    plans.push_back(std::move(*plan));
  }
  const RowSimulations r = DistinctSizes(*ms, &report);
  StatusOr<std::vector<StatusOr<ProfileSimulator::Tuned>>> simulated =
      SimulateSizes(o, *ms, plans, r, report.collective, &*sim);
  if (!simulated.ok()) return simulated.status();
  std::vector<double> errors;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const NcclMeasurement& m = (*ms)[r.rows[i].first];
    const StatusOr<ProfileSimulator::Tuned>& sim_row = (*simulated)[r.distinct_of[i]];
    if (!sim_row.ok()) return sim_row.status().WithContext(m.source);
    ValidationRow v;
    v.source = m.source;
    v.gpus = m.gpus;
    v.size = r.rows[i].second->size;
    v.measured_us = r.rows[i].second->time_us;
    v.collective_us = sim_row->time_us;
    v.simulated_us = std::max(v.collective_us, m.harness_floor_us);
    v.choice = sim_row->choice;
    v.error = (v.simulated_us - v.measured_us) / v.measured_us;
    errors.push_back(v.error);
    report.rows.push_back(v);
  }
  report.geomean_abs_error = GeomeanAbs(errors);
  return report;
}

std::string FormatValidation(const ValidationReport& r) {
  std::string out;
  for (const std::string& note : r.notes) out += "note: " + note + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%6s %14s %14s %14s %9s  %s\n", "GPUs", "size (B)",
                "measured us", "simulated us", "error", "NCCL choice");
  out += line;
  for (const ValidationRow& v : r.rows) {
    std::snprintf(
        line, sizeof line, "%6d %14llu %14.2f %14.2f %+8.1f%%  %s\n", v.gpus,
        static_cast<unsigned long long>(v.size), v.measured_us, v.simulated_us, 100 * v.error,
        ((v.choice.empty() ? "(profile)" : v.choice) + (v.AtFloor() ? " *" : "")).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "geomean error: %.1f%% over %zu sizes\n",
                100 * r.geomean_abs_error, r.rows.size());
  return out + line;
}

namespace {

// One report's fields as JSON members, each line starting with `indent`.
std::string ReportJsonFields(const ValidationReport& r, const std::string& indent) {
  std::ostringstream f;
  f << std::setprecision(12);  // a time of 1234567.89 us as it is, not 1.23457e+06
  f << indent << "\"collective\": " << JsonString(r.collective) << ",\n"
    << indent << "\"geomean_abs_error\": " << r.geomean_abs_error << ",\n"
    << indent << "\"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) f << (i ? ", " : "") << JsonString(r.notes[i]);
  f << "],\n" << indent << "\"rows\": [\n";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const ValidationRow& v = r.rows[i];
    f << indent << "  {\"gpus\": " << v.gpus << ", \"size\": " << v.size
      << ", \"measured_us\": " << v.measured_us << ", \"simulated_us\": " << v.simulated_us
      << ", \"error\": " << v.error << ", \"choice\": " << JsonString(v.choice)
      << ", \"collective_us\": " << v.collective_us
      << ", \"at_harness_floor\": " << (v.AtFloor() ? "true" : "false") << "}"
      << (i + 1 < r.rows.size() ? ",\n" : "\n");
  }
  f << indent << "]\n";
  return f.str();
}

Status WriteText(const std::string& text, const std::string& path) {
  std::ofstream f(path);
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  f << text;
  f.close();  // a full disk shows when the buffer is written out
  return f ? Status::Ok() : Status::Error(path + ": write failed: " + std::strerror(errno));
}

std::vector<double> AllErrors(const std::vector<ValidationReport>& reports) {
  std::vector<double> errors;
  for (const ValidationReport& r : reports) {
    for (const ValidationRow& row : r.rows) errors.push_back(row.error);
  }
  return errors;
}

}  // namespace

Status WriteValidationJson(const ValidationReport& r, const std::string& path) {
  return WriteText("{\n" + ReportJsonFields(r, "  ") + "}\n", path);
}

Status CheckDistinctInputs(const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      std::error_code error;
      if (std::filesystem::equivalent(inputs[i], inputs[j], error) && !error) {
        return Status::Error("--nccl-tests '" + inputs[i] + "' is the same file as '" + inputs[j] +
                             "': give each input once");
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<ValidationReport>> ValidateEach(const ValidateOptions& options,
                                                     const std::vector<std::string>& more) {
  std::vector<std::string> inputs = {options.measurements};
  inputs.insert(inputs.end(), more.begin(), more.end());
  Status distinct = CheckDistinctInputs(inputs);
  if (!distinct.ok()) return distinct;
  std::vector<ValidationReport> reports;
  for (const std::string& input : inputs) {
    ValidateOptions one = options;
    one.measurements = input;
    StatusOr<ValidationReport> r = Validate(one);
    if (!r.ok()) return r.status();
    reports.push_back(std::move(*r));
  }
  return reports;
}

std::string FormatValidations(const std::vector<ValidationReport>& reports) {
  if (reports.size() == 1) return FormatValidation(reports[0]);
  std::string out;
  for (const ValidationReport& r : reports) out += "== " + r.input + "\n" + FormatValidation(r);
  const std::vector<double> errors = AllErrors(reports);
  char line[128];
  std::snprintf(line, sizeof line, "geomean error: %.1f%% over %zu sizes of %zu inputs\n",
                100 * GeomeanAbs(errors), errors.size(), reports.size());
  return out + line;
}

Status WriteValidationsJson(const std::vector<ValidationReport>& reports, const std::string& path) {
  if (reports.size() == 1) return WriteValidationJson(reports[0], path);
  const std::vector<double> errors = AllErrors(reports);
  std::ostringstream f;
  f << std::setprecision(12);
  f << "{\n  \"geomean_abs_error\": " << GeomeanAbs(errors) << ",\n  \"sizes\": " << errors.size()
    << ",\n  \"inputs\": [\n";
  for (size_t i = 0; i < reports.size(); ++i) {
    f << "    {\n      \"file\": " << JsonString(reports[i].input) << ",\n"
      << ReportJsonFields(reports[i], "      ") << "    }" << (i + 1 < reports.size() ? "," : "")
      << "\n";
  }
  f << "  ]\n}\n";
  return WriteText(f.str(), path);
}

int ValidateMain(int argc, char** argv) {
  // validate --training RUNS.yaml: whole training steps against published throughput.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--training" || arg.rfind("--training=", 0) == 0) {
      return TrainingValidateMain(argc, argv);
    }
  }
  ValidateOptions o;
  std::vector<std::string> more;
  ValidateFlags f;
  std::set<std::string> given;
  MeasurementCommandLine cli(MeasurementTool::kValidate,
                             "orrery validate: simulate what nccl-tests measured and report the "
                             "error",
                             &o, &more);
  ValidateFlagSchema().AddTo(&cli.options());
  const int done = cli.Parse(argc, argv, [&](const boost::program_options::variables_map& vm) {
    return ValidateFlagSchema().Apply(vm, &f, &given);
  });
  if (done >= 0) return done;
  const bool report = given.count("report") > 0;
  if (report && f.report.empty()) {
    std::fprintf(stderr, "error: --report needs a file name (FILE.json)\n");
    return 1;
  }
  o.algorithm = f.algorithm;
  o.protocol = f.protocol;
  StatusOr<std::vector<ValidationReport>> r = ValidateEach(o, more);
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
    return 1;
  }
  if (report) {
    Status s = WriteValidationsJson(*r, f.report);
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::fputs(FormatValidations(*r).c_str(), stdout);
  return 0;
}

}  // namespace orrery
