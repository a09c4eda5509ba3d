// PreparePoint's stages: the point's parameters over the base (ApplyParams), the configs it
// overrides written out (WriteConfigs), the run's options from its files (SetRunOptions), and
// its workload (a generated collective, a jobs file or a trace prefix).
#include "sweep/point.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <utility>
#include <vector>

#include "config/schema.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"
#include "network/factory.h"
#include "network/network_config.h"
#include "sweep/files.h"
#include "sweep/spec.h"

namespace orrery::sweep_internal {
namespace {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// What a point runs on before any file is written: the base's whole values with the point's in
// their place, the keys it sets per config kind, and the collective it generates.
struct PointInputs {
  std::map<std::string, std::string> files;    // system, network, workload, backend, jobs, ...
  std::map<std::string, KeyValues> overrides;  // "system" -> (key, YAML flow value), in order
  std::string collective;
  uint64_t size = 0;
  // A generated collective: given in base or by the point, or else the default when neither
  // names a workload (or jobs).
  bool generated_explicitly = false;
  bool generate = false;
};

StatusOr<PointInputs> ApplyParams(const SweepSpec& spec, const SweepPoint& p) {
  PointInputs in;
  in.files = spec.base;
  in.collective = spec.generate_collective;
  in.size = spec.generate_size;
  in.generated_explicitly = !spec.generate_collective.empty();
  in.generate = spec.base.count("workload") == 0;
  for (const auto& [name, value] : p.params) {
    const size_t dot = name.find('.');
    if (name == "workload.collective") {
      in.collective = YAML::Load(value).Scalar();
      in.generate = in.generated_explicitly = true;
    } else if (name == "workload.size") {
      // Checked when the spec was loaded.
      if (const std::string bad = SizeProblem(YAML::Load(value), &in.size); !bad.empty()) {
        return Status::Error("workload.size is " + bad);
      }
      in.generate = in.generated_explicitly = true;
    } else if (dot == std::string::npos) {
      in.files[name] = YAML::Load(value).Scalar();
      if (name == "workload") in.generate = false;
    } else {
      in.overrides[name.substr(0, dot)].emplace_back(name.substr(dot + 1), value);
    }
  }
  return in;
}

// The config `file` of `kind` (named `named` in the spec) with the point's keys set, written as
// <dir>/<kind>.yml; its path.
StatusOr<std::string> WriteOverriddenConfig(const SweepSpec& spec, const std::string& kind,
                                            const std::string& file, const std::string& named,
                                            const KeyValues& keys, const std::string& dir) {
  if (access(file.c_str(), F_OK) != 0) {
    return Status::Error(file + ": no such file (the spec's " + kind + ": " + named + ")");
  }
  if (const std::string why = NotARegularFile(file); !why.empty()) return Status::Error(why);
  // One document (a second one would be dropped from the point's copy without a word).
  StatusOr<YAML::Node> read = ReadYamlDocument(file);
  if (!read.ok()) return read.status();
  YAML::Node doc = *read;
  for (const auto& [key, value] : keys) doc[key] = YAML::Load(value);
  // A relative path in these keys is relative to the file naming it (or, set by the point, to
  // the spec); the copy lives elsewhere, so it gets the path made absolute.
  const std::string path_key = kind == "system"    ? "nccl-model"
                               : kind == "network" ? "custom-file"
                                                   : "";
  const YAML::Node path_node = path_key.empty() ? YAML::Node() : doc[path_key];
  if (path_node.IsScalar() && !path_node.Scalar().empty() && path_node.Scalar()[0] != '/') {
    const bool from_point =
        std::any_of(keys.begin(), keys.end(), [&](const auto& kv) { return kv.first == path_key; });
    doc[path_key] = AbsolutePath(Join(from_point ? spec.dir : DirOf(file), path_node.Scalar()));
  }
  if (Status s = MakeDirs(dir); !s.ok()) return s;
  const std::string path = dir + "/" + kind + ".yml";
  std::ofstream(path) << FlowYamlKeepingQuotes(doc) << "\n";
  return path;
}

// in->files' system, network and memory: the base's file (relative to the spec), or a copy
// under `dir` with the point's keys.
Status WriteConfigs(const SweepSpec& spec, const std::string& dir, PointInputs* in) {
  for (const char* kind : {"system", "network", "memory"}) {
    auto f = in->files.find(kind);
    const auto ov = in->overrides.find(kind);
    const bool has_file = f != in->files.end();
    if (!has_file && ov != in->overrides.end()) {
      return Status::Error(std::string("'") + kind + ".*' is varied but no " + kind +
                           " file is given in base");
    }
    if (!has_file) continue;
    const std::string file = Join(spec.dir, f->second);
    if (ov == in->overrides.end()) {
      f->second = file;
      continue;
    }
    StatusOr<std::string> copy =
        WriteOverriddenConfig(spec, kind, file, f->second, ov->second, dir);
    if (!copy.ok()) return copy.status();
    f->second = *copy;
  }
  return Status::Ok();
}

// The run's configs, backend, NCCL choice, jobs and trace copies from the point's files.
Status SetRunOptions(const SweepSpec& spec, PointInputs* in, Prepared* pr) {
  std::map<std::string, std::string>& files = in->files;
  if (!files.count("system") || !files.count("network")) {
    return Status::Error("base needs a system and a network config");
  }
  pr->run.system_config = files["system"];
  pr->run.network_config = files["network"];
  if (files.count("memory")) pr->run.memory_config = files["memory"];
  StatusOr<Backend> b =
      ParseBackend(files.count("backend") ? files["backend"] : "analytical-aware");
  if (!b.ok()) return Status::Error("backend: " + b.status().message());
  pr->run.backend = *b;
  // NCCL's choice per collective: a model in place of the system's 'nccl-model', and
  // NCCL_ALGO ("auto" = the tuner's choice, as NCCL without NCCL_ALGO).
  if (files.count("nccl-model")) pr->run.nccl_model = Join(spec.dir, files["nccl-model"]);
  if (files.count("nccl-algorithm") && files["nccl-algorithm"] != "auto") {
    pr->run.nccl_algorithm = files["nccl-algorithm"];
  }
  // Several traces sharing the machine (--jobs), each job's own workload named in the file.
  if (files.count("jobs")) {
    if (in->generated_explicitly) {
      return Status::Error("jobs " + files["jobs"] +
                           " and a generated workload were both given; expected "
                           "one: the jobs file names each job's workload");
    }
    if (files.count("workload")) {
      return Status::Error("jobs " + files["jobs"] + " and workload " + files["workload"] +
                           " were both given; expected one: the jobs file names each "
                           "job's workload");
    }
    in->generate = false;
    pr->run.jobs = Join(spec.dir, files["jobs"]);
  }
  pr->jobs_alone = files.count("jobs-alone") && files["jobs-alone"] == "true";
  if (pr->jobs_alone && pr->run.jobs.empty()) {
    return Status::Error("jobs-alone is true, but no jobs file is given (base or point 'jobs')");
  }
  // A trace of fewer ranks than the point's NPUs, run as copies (--replicate-trace).
  if (files.count("comm-groups")) pr->run.comm_group_config = Join(spec.dir, files["comm-groups"]);
  pr->run.replicate_trace = files.count("replicate-trace") && files["replicate-trace"] == "true";
  if (pr->run.replicate_trace && in->generate) {
    return Status::Error(
        "replicate-trace is true, but the workload is a generated collective, written for "
        "every NPU: copies apply to a trace of fewer ranks (base or point 'workload: PREFIX')");
  }
  if (files.count("dp-groups")) pr->run.dp_groups = files["dp-groups"];
  return Status::Ok();
}

// The trace prefix of one `collective` of `size` bytes on every NPU of `network_config`,
// written under <out>.work/ the first time it is asked for.
StatusOr<std::string> GeneratedWorkload(const std::string& collective, uint64_t size,
                                        const std::string& network_config, const std::string& out,
                                        GeneratedWorkloads* generated) {
  static const std::map<std::string, ChakraProtoMsg::CollectiveCommType> kTypes = {
      {"all_reduce", ChakraProtoMsg::ALL_REDUCE},
      {"all_gather", ChakraProtoMsg::ALL_GATHER},
      {"reduce_scatter", ChakraProtoMsg::REDUCE_SCATTER},
      {"all_to_all", ChakraProtoMsg::ALL_TO_ALL}};
  auto t = kTypes.find(collective);
  if (t == kTypes.end()) {
    return Status::Error("workload collective '" + collective +
                         "'; expected all_reduce, all_gather, reduce_scatter or all_to_all");
  }
  // A size given was checked when the spec was loaded (SizeProblem).
  if (size == 0) {
    return Status::Error(
        "no workload size: give base 'workload: {collective: ..., size: BYTES}' or a "
        "'workload.size' parameter");
  }
  // The NPU count from the network as Orrery reads it (any format, whole machines too).
  StatusOr<Topology> topo = LoadNetworkConfig(network_config);
  if (!topo.ok()) return topo.status();
  const uint64_t npus = static_cast<uint64_t>(topo->num_npus());
  const std::string key = collective + "_" + std::to_string(size) + "_" + std::to_string(npus);
  auto g = generated->find(key);
  if (g != generated->end()) return g->second;
  const std::string wdir = out + ".work/" + key;
  if (Status s = MakeDirs(wdir); !s.ok()) return s;
  const std::string prefix = wdir + "/" + collective;
  for (uint64_t r = 0; r < npus; ++r) {
    Status s = et::WriteTraceFile(et::RankTracePath(prefix, static_cast<int>(r)),
                                  {et::MakeCollNode(0, collective, t->second, size)});
    if (!s.ok()) return s;
  }
  return generated->emplace(key, prefix).first->second;
}

Status Prepare(const SweepSpec& spec, const SweepPoint& p, const std::string& out,
               GeneratedWorkloads* generated, Prepared* pr) {
  StatusOr<PointInputs> in = ApplyParams(spec, p);
  if (!in.ok()) return in.status();
  const std::string dir = out + ".points/" + std::to_string(p.index);
  if (Status s = WriteConfigs(spec, dir, &*in); !s.ok()) return s;
  if (Status s = SetRunOptions(spec, &*in, pr); !s.ok()) return s;
  if (in->generate) {
    StatusOr<std::string> prefix =
        GeneratedWorkload(in->collective, in->size, pr->run.network_config, out, generated);
    if (!prefix.ok()) return prefix.status();
    pr->run.workload = *prefix;
  } else if (pr->run.jobs.empty()) {
    if (!in->files.count("workload")) return Status::Error("no workload in base or point");
    pr->run.workload = Join(spec.dir, in->files["workload"]);
  }
  pr->run.record = true;  // for the collectives' statistics and the critical path
  pr->run.record_chunk_phases = false;
  pr->run.record_queue_lengths = false;
  return Status::Ok();
}

}  // namespace

Prepared PreparePoint(const SweepSpec& spec, const SweepPoint& p, const std::string& out,
                      GeneratedWorkloads* generated) {
  Prepared pr;
  // yaml-cpp reports through exceptions (a key set in a config whose document is not a map),
  // as does an allocation that fails: the point's row says so, the other points still run.
  try {
    if (Status s = Prepare(spec, p, out, generated, &pr); !s.ok()) pr.error = s.message();
  } catch (const std::exception& e) {
    pr.error = e.what();
  }
  return pr;
}

}  // namespace orrery::sweep_internal
