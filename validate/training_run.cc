// validate --training: simulating each run and reporting (training.h).
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "common/flags.h"
#include "common/json.h"
#include "compute/gpu_model.h"
#include "config/schema.h"
#include "et_feeder/llm_copies.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/writer.h"
#include "runner/run.h"
#include "validate/measurement_cli.h"
#include "validate/training.h"
#include "validate/validate.h"

namespace orrery {

namespace fs = std::filesystem;

namespace {

// A profile directory: `machine` as a path (relative to the runs file's directory, then to the
// working directory), else a name under `machines` (or ../machines beside the runs file, then
// configs/machines).
StatusOr<std::string> ResolveMachine(const std::string& machine, const std::string& runs_file,
                                     const std::string& machines) {
  const fs::path beside = fs::path(runs_file).parent_path();
  std::vector<fs::path> tried;
  if (machine.find('/') != std::string::npos) {
    tried = {beside / machine, fs::path(machine)};
  } else if (!machines.empty()) {
    tried = {fs::path(machines) / machine};
  } else {
    tried = {beside / ".." / "machines" / machine, fs::path("configs/machines") / machine};
  }
  std::string looked;
  for (const fs::path& p : tried) {
    std::error_code ec;
    if (fs::is_regular_file(p / "system.yaml", ec)) return p.lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + p.lexically_normal().string();
  }
  return Status::Error("machine '" + machine + "' is no profile (a directory with system.yaml, " +
                       "network.yaml and gpu.yaml); looked in " + looked);
}

// The profile's network with its node dimension scaled to `gpus` (one node's dimension alone
// when they fit in one node), written to `out`.
Status WriteScaledNetwork(const std::string& profile, int gpus, const std::string& out) {
  const std::string path = profile + "/network.yaml";
  // The project's one loader: one document, aliases bounded (config/yaml_aliases.h).
  StatusOr<YAML::Node> doc = ReadYamlDocument(path);
  if (!doc.ok()) return doc.status();
  YAML::Node net = *doc;
  const YAML::Node counts = net.IsMap() ? net["npus_count"] : YAML::Node();
  if (!counts || !counts.IsSequence() || counts.size() < 1 || counts.size() > 2) {
    return Status::Error(path + ": expected npus_count of one or two dimensions (a node, nodes)");
  }
  int per_node = 0;
  try {
    per_node = counts[0].as<int>();
  } catch (const YAML::Exception&) {
    per_node = 0;
  }
  if (per_node < 1) {
    return Status::Error(path + ": npus_count[0] is '" +
                         (counts[0].IsScalar() ? counts[0].Scalar() : std::string("not a number")) +
                         "'; expected the GPUs per node, a whole number >= 1");
  }
  if (gpus % per_node != 0 && !(counts.size() == 1 && gpus == per_node)) {
    return Status::Error(std::to_string(gpus) + " GPUs are not whole nodes of " + path + " (" +
                         std::to_string(per_node) + " GPUs per node)");
  }
  if (gpus == per_node || counts.size() == 1) {
    if (gpus != per_node) {
      return Status::Error(path + " has one node of " + std::to_string(per_node) +
                           " GPUs and no node dimension to scale to " + std::to_string(gpus));
    }
    // One node: its own dimension alone (the NICs carry nothing).
    for (const char* key : {"topology", "npus_count", "bandwidth", "latency", "lanes"}) {
      if (net[key] && net[key].IsSequence() && net[key].size() > 1) {
        YAML::Node first(YAML::NodeType::Sequence);
        first.push_back(net[key][0]);
        net[key] = first;
      }
    }
  } else {
    net["npus_count"][1] = gpus / per_node;
  }
  std::ofstream f(out);
  f << net << "\n";
  f.close();
  if (!f) return Status::Error(out + ": cannot write the scaled network");
  return Status::Ok();
}

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

bool HasFlag(const std::vector<std::string>& words, const std::string& flag) {
  for (const std::string& w : words) {
    if (w == flag || w.rfind(flag + "=", 0) == 0) return true;
  }
  return false;
}

// The published figure as a step time.
StatusOr<double> MeasuredStep(const TrainingRun& r, const et::LlmConfig& c, const GpuModel& g) {
  const double gpus = r.gpus;
  if (r.measured_kind == "step_time_s") return r.measured_value;
  if (r.measured_kind == "tokens_per_s_per_gpu") {
    return static_cast<double>(c.global_batch_size) * c.seq_length / (r.measured_value * gpus);
  }
  et::FlopsConvention convention;
  if (!et::ParseFlopsConvention(r.flops, &convention)) {
    return Status::Error("unknown FLOP convention '" + r.flops + "'");
  }
  const double flops = et::PublishedStepFlops(c, convention);
  const double tflops =
      r.measured_kind == "mfu"
          ? r.measured_value * (r.peak_tflops > 0 ? r.peak_tflops : g.peak_tflops_bf16)
          : r.measured_value;
  return flops / (tflops * 1e12 * gpus);
}

// One run: generate its step into `dir`, simulate it, fill in the result.
void SimulateRun(const TrainingOptions& o, const std::string& dir, TrainingResult* out) {
  const TrainingRun& r = out->run;
  auto fail = [&](const std::string& why) { out->problem = why; };
  StatusOr<std::string> profile = ResolveMachine(r.machine, o.runs, o.machines);
  if (!profile.ok()) return fail(profile.status().message());
  out->machine_dir = *profile;
  std::vector<std::string> words = SplitWords(r.generate);
  const std::string gpu_file = *profile + "/gpu.yaml";
  if (!HasFlag(words, "--gpu-model")) {
    if (!fs::exists(gpu_file)) {
      return fail(*profile +
                  " has no gpu.yaml (the compute model) and 'generate' gives no "
                  "--gpu-model");
    }
    words.push_back("--gpu-model");
    words.push_back(gpu_file);
  }
  StatusOr<et::LlmConfig> c = et::LlmConfigFromFlags(words);
  if (!c.ok()) return fail("generate: " + c.status().message());
  const et::LlmShape shape = et::ShapeOf(*c);
  if (shape.npus != r.gpus) {
    return fail("generate makes " + std::to_string(shape.npus) +
                " NPUs (dp × cp × tp × pp), but "
                "gpus is " +
                std::to_string(r.gpus));
  }
  StatusOr<double> measured = MeasuredStep(r, *c, *c->gpu);
  if (!measured.ok()) return fail(measured.status().message());
  out->measured_s = *measured;
  const std::string network = dir + "/network.yaml";
  Status s = WriteScaledNetwork(*profile, r.gpus, network);
  // One data-parallel copy's files and a manifest: the run simulates one NPU per orbit of the
  // copies (runner/symmetry.h) where the machine allows.
  if (s.ok()) s = et::WriteLlmCopies(*c, dir + "/step", nullptr, nullptr);
  if (!s.ok()) return fail(s.message());
  RunOptions run;
  run.workload = dir + "/step";
  run.system_config = *profile + "/system.yaml";
  run.network_config = network;
  run.record = false;
  StatusOr<RunResult> result = RunSimulation(run);
  if (!result.ok()) return fail("simulation: " + result.status().message());
  out->predicted_s = static_cast<double>(result->end.ps()) * 1e-12;
  out->error = (out->predicted_s - out->measured_s) / out->measured_s;
}

std::string Percent(double e) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * e);
  return b;
}

}  // namespace

StatusOr<TrainingReport> ValidateTraining(const TrainingOptions& o) {
  StatusOr<std::vector<TrainingRun>> runs = LoadTrainingRuns(o.runs);
  if (!runs.ok()) return runs.status();
  TrainingReport report;
  report.input = o.runs;
  for (const std::string& name : o.only) {
    const bool known = std::any_of(runs->begin(), runs->end(),
                                   [&](const TrainingRun& r) { return r.name == name; });
    if (!known) return Status::Error(o.runs + ": no run is named '" + name + "' (--run)");
  }
  for (TrainingRun& r : *runs) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), r.name) == o.only.end())
      continue;
    report.runs.push_back({});
    report.runs.back().run = std::move(r);
  }
  std::string work = o.work_dir;
  const bool own = work.empty();
  if (own) {
    char tmpl[] = "/tmp/orrery-training-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Status::Error("cannot create a scratch directory");
    work = tmpl;
  }
  // Larger runs first, so that they do not start last (ForEachIndex).
  std::vector<double> cost;
  for (const TrainingResult& t : report.runs) cost.push_back(t.run.gpus);
  const Status ran = ForEachIndex(
      report.runs.size(), o.jobs,
      [&](size_t i) {
        const std::string dir = work + "/run" + std::to_string(i);
        std::error_code ec;
        fs::create_directories(dir, ec);
        SimulateRun(o, dir, &report.runs[i]);
        fs::remove_all(dir, ec);
      },
      &cost, o.progress ? "validate --training" : "");
  if (own) {
    std::error_code ec;
    fs::remove_all(work, ec);
  }
  if (!ran.ok()) return ran;
  std::vector<double> all, held;
  for (const TrainingResult& t : report.runs) {
    if (!t.ok()) {
      ++report.failed;
      continue;
    }
    all.push_back(t.error);
    if (t.run.held_out) held.push_back(t.error);
    if (std::abs(t.error) > report.max_abs_error) {
      report.max_abs_error = std::abs(t.error);
      report.worst = t.run.name;
    }
  }
  report.held_out = static_cast<int>(held.size());
  report.geomean_abs_error = all.empty() ? 0 : GeomeanAbs(all);
  report.held_out_geomean_abs_error = held.empty() ? 0 : GeomeanAbs(held);
  return report;
}

std::string FormatTraining(const TrainingReport& r) {
  size_t width = 3;
  for (const TrainingResult& t : r.runs) width = std::max(width, t.run.name.size());
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %6s %12s %12s %8s  %s\n", static_cast<int>(width), "run",
                "GPUs", "measured s", "predicted s", "error", "held out");
  out << line;
  int simulated = 0;
  for (const TrainingResult& t : r.runs) {
    if (!t.ok()) {
      out << t.run.name << ": error: " << t.problem << "\n";
      continue;
    }
    ++simulated;
    std::snprintf(line, sizeof line, "%-*s %6d %12.3f %12.3f %8s  %s\n", static_cast<int>(width),
                  t.run.name.c_str(), t.run.gpus, t.measured_s, t.predicted_s,
                  Percent(t.error).c_str(), t.run.held_out ? "yes" : "no");
    out << line;
  }
  std::snprintf(line, sizeof line,
                "held-out runs: geomean error %.1f%% over %d; largest |error| "
                "%.1f%% (%s)\n",
                100 * r.held_out_geomean_abs_error, r.held_out, 100 * r.max_abs_error,
                r.worst.empty() ? "none" : r.worst.c_str());
  out << line;
  if (r.failed > 0) out << r.failed << " run(s) could not be simulated (above)\n";
  std::snprintf(line, sizeof line, "geomean error: %.1f%% over %d runs\n",
                100 * r.geomean_abs_error, simulated);
  out << line;
  return out.str();
}

Status WriteTrainingJson(const TrainingReport& r, const std::string& path) {
  std::ostringstream f;
  f.precision(12);
  f << "{\n  \"input\": " << JsonString(r.input)
    << ",\n  \"geomean_abs_error\": " << r.geomean_abs_error
    << ",\n  \"held_out_geomean_abs_error\": " << r.held_out_geomean_abs_error
    << ",\n  \"max_abs_error\": " << r.max_abs_error << ",\n  \"failed\": " << r.failed
    << ",\n  \"runs\": [";
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const TrainingResult& t = r.runs[i];
    f << (i ? "," : "") << "\n    {\"name\": " << JsonString(t.run.name)
      << ", \"source\": " << JsonString(t.run.source)
      << ", \"machine\": " << JsonString(t.machine_dir.empty() ? t.run.machine : t.machine_dir)
      << ", \"gpus\": " << t.run.gpus << ", \"held_out\": " << (t.run.held_out ? "true" : "false");
    if (t.ok()) {
      f << ", \"measured_s\": " << t.measured_s << ", \"predicted_s\": " << t.predicted_s
        << ", \"error\": " << t.error;
    } else {
      f << ", \"problem\": " << JsonString(t.problem);
    }
    f << "}";
  }
  f << "\n  ]\n}\n";
  std::ofstream out(path);
  out << f.str();
  out.close();
  if (!out) return Status::Error(path + ": cannot write the report");
  return Status::Ok();
}

int TrainingValidateMain(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description desc(
      "orrery validate --training RUNS.yaml: generate each published training run's step, "
      "simulate it on its machine profile and report the error (docs/training-validation.md)");
  desc.add_options()("help,h", "print this help");
  TrainingFlagSchema().AddTo(&desc);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "error: validate --training: %s\n", e.what());
    return 1;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  TrainingFlags f;
  std::set<std::string> given;
  if (const Status s = TrainingFlagSchema().Apply(vm, &f, &given); !s.ok()) {
    for (const std::string& p : s.problems()) {
      std::fprintf(stderr, "error: validate --training: %s\n", p.c_str());
    }
    return 1;
  }
  TrainingOptions o;
  o.runs = f.training;
  o.machines = f.machines;
  o.only = f.run;
  o.jobs = f.jobs;
  o.progress = isatty(2) != 0;
  StatusOr<TrainingReport> r = ValidateTraining(o);
  if (!r.ok()) {
    for (const std::string& p : r.status().problems()) {
      std::fprintf(stderr, "error: %s\n", p.c_str());
    }
    return 1;
  }
  std::fputs(FormatTraining(*r).c_str(), stdout);
  if (given.count("report") > 0) {
    Status s = WriteTrainingJson(*r, f.report);
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
  }
  return r->failed > 0 ? 1 : 0;
}

}  // namespace orrery
