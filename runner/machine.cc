#include "runner/machine.h"

#include "compute/gpu_model.h"
#include "config/schema.h"
#include "network/network_config.h"
#include "runner/npu_scale.h"
#include "runner/system_params_from_config.h"

namespace orrery {

Status CheckRunOptions(const RunOptions& o) {
  Status problems;
  if (o.jobs.empty() && o.workload.empty()) {
    problems.Add("--workload-configuration (or --jobs) is required");
  }
  if (!o.jobs.empty()) {
    if (!o.workload.empty()) {
      problems.Add("--jobs " + o.jobs + " and --workload-configuration " + o.workload +
                   " were both given; expected one: --jobs names each job's workload");
    }
    if (o.replicate_trace) {
      problems.Add("--replicate-trace does not apply with --jobs " + o.jobs +
                   " (each job runs its own trace on its own NPUs)");
    }
    if (!o.comm_group_config.empty() && o.comm_group_config != "empty") {
      problems.Add("--comm-group-configuration " + o.comm_group_config +
                   " does not apply with --jobs " + o.jobs +
                   "; give each job its groups with its 'comm-groups' key");
    }
  }
  if (o.system_config.empty()) problems.Add("--system-configuration is required");
  if (o.network_config.empty()) problems.Add("--network-configuration is required");
  // Scales beyond 1e6 would overflow simulated time (int64 picoseconds, about 106 days).
  if (!(o.compute_scale > 0 && o.compute_scale <= 1e6)) {
    problems.Add("--compute-scale is " + FormatNumber(o.compute_scale) +
                 "; expected a number > 0 and <= 1e6 (2 = compute takes twice as long)");
  }
  if (!(o.injection_scale >= 0 && o.injection_scale <= 1e6)) {
    problems.Add("--injection-scale is " + FormatNumber(o.injection_scale) +
                 "; expected a number >= 0 and <= 1e6 (it multiplies endpoint-delay)");
  }
  if (!(o.comm_scale > 0 && o.comm_scale <= 1e6)) {
    problems.Add("--comm-scale is " + FormatNumber(o.comm_scale) +
                 "; expected a number > 0 and <= 1e6 (it multiplies every communication size)");
  }
  return problems;
}

namespace {

// The roofline's rates: the system configuration's peak-perf and local-mem-bw, or those of its
// gpu-model (relative to the configuration's directory), which needs roofline-enabled.
StatusOr<RooflineParams> LoadRoofline(const SystemConfig& s, const std::string& path) {
  RooflineParams r{s.peak_perf_tflops * 1e12, s.local_mem_bw_gbps * 1e9};
  if (!s.gpu_model.empty()) {
    const std::string where = path + ": 'gpu-model' " + s.gpu_model;
    if (!s.roofline_enabled) {
      return Status::Error(where +
                           " times compute nodes through the roofline, but 'roofline-enabled' is "
                           "0; expected roofline-enabled: 1 (or no gpu-model)");
    }
    std::string file = s.gpu_model;
    const size_t slash = path.rfind('/');
    if (file[0] != '/' && slash != std::string::npos) file = path.substr(0, slash + 1) + file;
    StatusOr<GpuModel> g = LoadGpuModel(file);
    if (!g.ok()) return g.status().WithContext(where);
    return g->Roofline();
  }
  Status problems;
  if (s.roofline_enabled && !(s.peak_perf_tflops > 0)) {
    problems.Add(path + ": 'roofline-enabled' is on but 'peak-perf' is " +
                 FormatNumber(s.peak_perf_tflops) +
                 "; the roofline needs a peak compute rate > 0 TFLOPS (e.g. 900), or a gpu-model");
  }
  if (s.roofline_enabled && !(s.local_mem_bw_gbps > 0)) {
    problems.Add(path + ": 'roofline-enabled' is on but 'local-mem-bw' is " +
                 FormatNumber(s.local_mem_bw_gbps) +
                 "; the roofline needs a memory bandwidth > 0 GB/s (e.g. 1600), or a gpu-model");
  }
  if (!problems.ok()) return problems;
  return r;
}

}  // namespace

StatusOr<Machine> LoadMachine(const RunOptions& o) {
  Status problems = CheckRunOptions(o);
  if (!problems.ok()) return problems;

  Machine m;
  StatusOr<Topology> topology = LoadNetworkConfig(o.network_config, &m.net_params);
  StatusOr<SystemConfig> system = LoadSystemConfig(o.system_config);
  if (!o.memory_config.empty()) {
    StatusOr<MemoryConfig> memory = LoadMemoryConfig(o.memory_config);
    if (memory.ok())
      m.memory = *memory;
    else
      problems.Merge(memory.status());
  }
  if (!topology.ok()) problems.Merge(topology.status());
  if (!system.ok()) problems.Merge(system.status());
  if (!problems.ok()) return problems;

  StatusOr<RooflineParams> roofline = LoadRoofline(*system, o.system_config);
  if (!roofline.ok()) return roofline.status();
  m.roofline = *roofline;

  {
    Status supported = CheckBackendSupports(o.backend, *topology, m.net_params);
    if (!supported.ok()) return supported.WithContext(o.network_config);
    Status slow = CheckSlowLinks(o.backend, *topology, m.net_params);  // names its file and line
    if (!slow.ok()) return slow;
  }
  const int n = topology->num_npus();
  {
    Status fits = CheckMemoryFitsNetwork(m.memory, n, o.network_config);
    if (!fits.ok()) return fits;
  }
  StatusOr<std::vector<double>> npu_scales = ParseNpuScales(o.npu_compute_scale, n);
  if (!npu_scales.ok()) return npu_scales.status();
  if (!o.timeline_npus.empty()) {
    StatusOr<std::vector<bool>> shown = ParseNpuSet(o.timeline_npus, n, "--timeline-npus");
    if (!shown.ok()) return shown.status();
    m.timeline_npus = std::move(shown).value();
  }
  StatusOr<SystemParams> params = SystemParamsFromConfig(*system, o, topology->dims.size());
  if (!params.ok()) return params.status();
  for (const Dimension& d : topology->dims)
    params->whole_chunks = params->whole_chunks || d.lanes > 1;
  m.topology = std::move(topology).value();
  m.system = std::move(system).value();
  m.params = std::move(params).value();
  m.npu_scales = std::move(npu_scales).value();
  return m;
}

}  // namespace orrery
