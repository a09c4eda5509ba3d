#include "validate/training.h"

#include <stdlib.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "common/flags.h"
#include "common/json.h"
#include "config/schema.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/writer.h"
#include "runner/run.h"
#include "validate/validate.h"

namespace orrery {

namespace fs = std::filesystem;

namespace {

const char kMeasuredKinds[] = "step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu";

std::string Line(const std::string& path, const YAML::Node& n) {
  return path + ":" + std::to_string(n.Mark().line + 1);
}

bool IsText(const YAML::Node& n) {
  return n.IsScalar() && (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str");
}

// A positive number; else a problem naming `where` and the value.
bool Positive(const YAML::Node& n, const std::string& where, double* out, Status* s) {
  double v = 0;
  bool ok = n.IsScalar() && !IsText(n);
  if (ok) {
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      ok = false;
    }
  }
  if (!ok || !std::isfinite(v) || v <= 0) {
    s->Add(where + " is '" + (n.IsScalar() ? n.Scalar() : "") + "'; expected a number > 0");
    return false;
  }
  *out = v;
  return true;
}

bool Text(const YAML::Node& n, const std::string& where, std::string* out, Status* s) {
  if (!n.IsScalar() || n.Scalar().empty()) {
    s->Add(where + ": expected text");
    return false;
  }
  *out = n.Scalar();
  return true;
}

void ReadMeasured(const std::string& path, const YAML::Node& m, const std::string& where,
                  TrainingRun* run, Status* s) {
  if (!m.IsMap()) {
    s->Add(where + ": 'measured' is not a map; expected one of " + kMeasuredKinds);
    return;
  }
  for (const auto& kv : m) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    const std::string at = Line(path, kv.first) + ": run '" + run->name + "': measured." + key;
    if (key == "step_time_s" || key == "tokens_per_s_per_gpu" || key == "tflops_per_gpu" ||
        key == "mfu") {
      if (!run->measured_kind.empty()) {
        s->Add(at + ": a second figure (" + run->measured_kind + " is given); expected one");
        continue;
      }
      run->measured_kind = key;
      Positive(kv.second, at, &run->measured_value, s);
      if (key == "mfu" && run->measured_value > 1) {
        s->Add(at + " is '" + kv.second.Scalar() + "'; expected a share in (0, 1]");
      }
    } else if (key == "flops") {
      Text(kv.second, at, &run->flops, s);
      et::FlopsConvention c;
      if (!run->flops.empty() && !et::ParseFlopsConvention(run->flops, &c)) {
        s->Add(at + " is '" + run->flops + "'; expected megatron, megatron-recompute or 6n");
      }
    } else if (key == "peak_tflops") {
      Positive(kv.second, at, &run->peak_tflops, s);
    } else {
      s->Add(at + " is unknown; valid: " + kMeasuredKinds + ", flops, peak_tflops");
    }
  }
  if (run->measured_kind.empty()) {
    s->Add(where + ": 'measured' has no figure; expected one of " + kMeasuredKinds);
  } else if ((run->measured_kind == "tflops_per_gpu" || run->measured_kind == "mfu") &&
             run->flops.empty()) {
    s->Add(where + ": measured." + run->measured_kind +
           " needs 'flops' (megatron, megatron-recompute or 6n): the convention it was counted in");
  }
}

TrainingRun ReadRun(const std::string& path, const YAML::Node& n, Status* s) {
  TrainingRun run;
  run.line = static_cast<int>(n.Mark().line) + 1;
  const std::string where = path + ":" + std::to_string(run.line);
  if (!n.IsMap()) {
    s->Add(where +
           ": a run is not a map; expected name, source, machine, gpus, generate, "
           "measured, held_out");
    return run;
  }
  if (n["name"]) Text(n["name"], where + ": name", &run.name, s);
  const std::string who = where + ": run '" + run.name + "'";
  std::set<std::string> given;
  for (const auto& kv : n) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    given.insert(key);
    const std::string at = Line(path, kv.first) + ": run '" + run.name + "': " + key;
    if (key == "name") continue;
    if (key == "source") {
      Text(kv.second, at, &run.source, s);
    } else if (key == "machine") {
      Text(kv.second, at, &run.machine, s);
    } else if (key == "generate") {
      Text(kv.second, at, &run.generate, s);
    } else if (key == "sets" || key == "notes") {
      std::string text;
      Text(kv.second, at, &text, s);
      if (key == "sets") run.sets = text;
    } else if (key == "gpus") {
      double g = 0;
      if (Positive(kv.second, at, &g, s)) {
        if (g != std::floor(g) || g > (1 << 20)) {
          s->Add(at + " is '" + kv.second.Scalar() +
                 "'; expected a whole number from 1 to 1048576");
        } else {
          run.gpus = static_cast<int>(g);
        }
      }
    } else if (key == "held_out") {
      bool ok = kv.second.IsScalar() && !IsText(kv.second);
      if (ok) {
        try {
          run.held_out = kv.second.as<bool>();
        } catch (const YAML::Exception&) {
          ok = false;
        }
      }
      if (!ok) s->Add(at + " is '" + kv.second.Scalar() + "'; expected true or false");
    } else if (key == "measured") {
      ReadMeasured(path, kv.second, who, &run, s);
    } else {
      const std::vector<std::string> keys = {"name",     "source",   "machine", "gpus", "generate",
                                             "measured", "held_out", "sets",    "notes"};
      const std::string close = DidYouMean(key, keys);
      s->Add(at + " is unknown; valid: " + JoinNames(keys) +
             (close.empty() ? "" : " (did you mean " + close + "?)"));
    }
  }
  for (const char* needed : {"name", "source", "machine", "gpus", "generate", "measured"}) {
    if (given.count(needed) == 0) s->Add(who + ": '" + needed + "' is missing");
  }
  if (given.count("held_out") == 0) {
    s->Add(who +
           ": 'held_out' is missing: say whether the run set any parameter (false, with "
           "'sets') or none (true)");
  } else if (!run.held_out && run.sets.empty()) {
    s->Add(who + ": held_out is false but 'sets' does not say what the run was used to set");
  }
  return run;
}

}  // namespace

StatusOr<std::vector<TrainingRun>> LoadTrainingRuns(const std::string& path) {
  StatusOr<YAML::Node> doc = ReadYamlDocument(path);
  if (!doc.ok()) return doc.status();
  Status s = DuplicateKeys(*doc, path);
  if (!s.ok()) return s;
  const YAML::Node& root = *doc;
  if (!root.IsMap() || !root["runs"] || !root["runs"].IsSequence() || root["runs"].size() == 0) {
    return Status::Error(path + ": expected a map with 'runs:', a list of runs");
  }
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (key != "runs") s.Add(Line(path, kv.first) + ": key '" + key + "' is unknown; valid: runs");
  }
  std::vector<TrainingRun> runs;
  std::set<std::string> names;
  for (const YAML::Node& n : root["runs"]) {
    TrainingRun run = ReadRun(path, n, &s);
    if (!run.name.empty() && !names.insert(run.name).second) {
      s.Add(path + ":" + std::to_string(run.line) + ": run name '" + run.name +
            "' is used twice; expected a name per run");
    }
    runs.push_back(std::move(run));
  }
  if (!s.ok()) return s;
  return runs;
}

}  // namespace orrery
