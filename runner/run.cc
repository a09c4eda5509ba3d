#include "runner/run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <set>

#include "common/event_queue.h"
#include "et_feeder/process_groups.h"
#include "memory/remote_memory.h"
#include "network/network.h"
#include "runner/collect.h"
#include "runner/machine.h"
#include "runner/symmetry.h"
#include "runner/system_params_from_config.h"
#include "runner/system_setup.h"
#include "runner/trace_set.h"
#include "system/collective_engine.h"
#include "workload/breakdown.h"
#include "workload/placement.h"

namespace orrery {

namespace {

// Keeps what the system layer reports, for timelines and reports (RunOptions::record).
class PhaseRecorder : public SystemObserver {
 public:
  // `phases_of` (empty = all): the NPUs whose phases are kept, the timeline's.
  PhaseRecorder(int n, bool phases, bool queues, std::vector<bool> phases_of)
      : keep_phases_(phases),
        keep_queues_(queues),
        phases_of_(std::move(phases_of)),
        phases_(n),
        queues_(n) {}

  void OnPhaseDone(const PhaseRecord& r) override {
    if (!keep_phases_ || (!phases_of_.empty() && !phases_of_[static_cast<size_t>(r.npu)])) return;
    ChunkPhaseRecord c;
    c.node_id = r.token;  // the node index until Finish() maps it to the node id
    c.stream = r.stream;
    c.phase = r.phase;
    c.num_phases = r.num_phases;
    c.type = r.spec->type;
    c.algorithm = r.algorithm;
    c.queue = r.spec->queue;
    c.ring_size = r.spec->ring_size;
    c.bytes = r.spec->data_size;
    c.sender = r.spec->sender;
    c.receiver = r.spec->receiver;
    c.queued = r.queued;
    c.started = r.started;
    c.ended = r.ended;
    phases_[r.npu].push_back(c);
  }

  void OnQueueLength(int npu, int queue, Time t, int length) override {
    if (!keep_queues_) return;
    std::vector<QueueSample>& v = queues_[npu];
    // Several changes of a queue at one instant (other queues' changes between them): keep the
    // last.
    for (size_t i = v.size(); i-- > 0 && v[i].t == t;) {
      if (v[i].queue == queue) {
        v[i].length = length;
        return;
      }
    }
    v.push_back(QueueSample{t, queue, length});
  }

  // NPU r ran *npu_trace[r].
  void Finish(const std::vector<const et::Trace*>& npu_trace, RunResult& result) {
    for (size_t r = 0; r < phases_.size(); ++r) {
      const et::Trace& t = *npu_trace[r];
      for (ChunkPhaseRecord& c : phases_[r]) c.node_id = t.id(static_cast<uint32_t>(c.node_id));
    }
    result.phases = std::move(phases_);
    result.queues = std::move(queues_);
  }

 private:
  const bool keep_phases_, keep_queues_;
  const std::vector<bool> phases_of_;
  std::vector<std::vector<ChunkPhaseRecord>> phases_;
  std::vector<std::vector<QueueSample>> queues_;
};

}  // namespace

namespace {

// The sizes of the groups `trace`'s METADATA nodes define (pg -> ranks), for the cost estimate:
// what the executor defines when the nodes run. A node the executor would refuse is left to it.
std::map<int, int> MetadataGroupSizes(const et::Trace& trace, int ranks) {
  std::map<int, int> sizes;
  for (uint32_t i = 0; i < trace.size(); ++i) {
    if (trace.type(i) != et::NodeType::kMetadata) continue;
    const std::optional<std::string_view> values = trace.metadata_inputs(i);
    if (!values) continue;
    StatusOr<std::vector<et::ProcessGroupSpec>> groups = et::ParseProcessGroups(*values, ranks);
    if (!groups.ok()) continue;
    for (const et::ProcessGroupSpec& g : *groups) {
      sizes.try_emplace(g.pg, static_cast<int>(g.ranks.size()));
    }
  }
  return sizes;
}

// What every executor shares: the system configuration's workload knobs and the run's tuner.
WorkloadParams MakeWorkloadParams(const RunOptions& o, const Machine& m, CollectiveTuner* tuner,
                                  Placement* placement) {
  WorkloadParams wp;
  wp.roofline_enabled = m.system.roofline_enabled;
  wp.roofline = m.roofline;
  wp.replay_only = m.system.replay_only;
  wp.compute_scale = o.compute_scale;
  wp.collective_launch_latency = Time::FromNsDouble(m.system.collective_launch_latency_ns);
  wp.protocol_efficiency = m.system.protocol_efficiency;
  wp.track_local_mem = m.system.track_local_mem;
  wp.comm_slots = m.system.communication_slots;
  wp.tuner = tuner;
  wp.placement = placement;
  wp.keep_activities = o.record;
  if (m.system.trace_enabled) wp.trace_nodes = o.node_trace;
  return wp;
}

// --dp-groups that no file defines, or that no node of the trace names: the copies then ran
// independently there, which the flag did not ask for.
std::vector<std::string> DataParallelWarnings(
    const Placement& placement, const std::vector<std::unique_ptr<et::Trace>>& traces) {
  std::vector<std::string> out;
  const std::vector<int> undefined = placement.UndefinedDataParallelGroups();
  for (int g : undefined) {
    out.push_back("--dp-groups names communicator group " + std::to_string(g) +
                  ", which neither --comm-group-configuration nor a METADATA node of the trace "
                  "defines; no collective ran in it");
  }
  std::set<int> named;
  if (!placement.data_parallel().groups.empty()) {
    for (const std::unique_ptr<et::Trace>& t : traces) {
      if (!t) continue;
      for (uint32_t i = 0; i < t->size(); ++i) {
        const std::optional<std::string_view> pg = t->pg_name(i);
        if (!pg) continue;
        const StatusOr<int> g = ParseGroup(*pg);
        if (g.ok()) named.insert(*g);
      }
    }
  }
  for (int g : placement.data_parallel().groups) {
    if (named.count(g) != 0 ||
        std::find(undefined.begin(), undefined.end(), g) != undefined.end()) {
      continue;
    }
    out.push_back("--dp-groups names communicator group " + std::to_string(g) +
                  ", which no node of the trace names (pg_name); no collective ran in it, so the "
                  "copies ran independently there");
  }
  return out;
}

// The executors: one per NPU, or with a symmetry one per representative.
std::vector<std::unique_ptr<NpuExecutor>> MakeExecutors(
    const RunOptions& o, const Machine& m, const TraceSet& set, const std::vector<int>& npus,
    const WorkloadParams& wp, SystemLayer& system_layer, RemoteMemory* memory) {
  std::vector<std::unique_ptr<NpuExecutor>> executors;
  executors.reserve(npus.size());
  // One copy of each rank's slot classes, however many NPUs run that rank.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> slot_classes(set.traces.size());
  for (int r : npus) {
    WorkloadParams npu_wp = wp;
    npu_wp.compute_scale = o.compute_scale * m.npu_scales[r];
    if (!set.npu_file[r].empty()) npu_wp.file = &set.npu_file[r];
    const int t = set.trace_index[r];
    std::shared_ptr<const std::vector<uint8_t>>& classes = slot_classes[t];
    if (classes == nullptr) classes = NpuExecutor::SlotClassesOf(*set.traces[t]);
    executors.push_back(
        std::make_unique<NpuExecutor>(r, *set.traces[t], system_layer, memory, npu_wp, classes));
  }
  return executors;
}

void SetProgress(const RunOptions& o, Simulation& sim,
                 const std::vector<std::unique_ptr<NpuExecutor>>& executors) {
  if (!o.progress) return;
  uint64_t total = 0;
  for (const auto& e : executors) total += e->total_nodes();
  sim.SetTicker(
      [&sim, &executors, &o, total] {
        Progress p;
        p.now = sim.now();
        p.events = sim.events_processed();
        p.nodes_total = total;
        for (const auto& e : executors) p.nodes_done += e->stats().nodes_done;
        o.progress(p);
      },
      uint64_t{1} << 22);
}

// Every NPU's statistics and breakdown, from its executor or, with a symmetry, from its
// representative's; the step time; the jobs' finishes.
void CollectStats(const std::vector<std::unique_ptr<NpuExecutor>>& executors,
                  const NpuSymmetry* symmetry, int n, RunResult& result) {
  std::vector<const NpuExecutor*> of(static_cast<size_t>(n), nullptr);
  for (const auto& e : executors) of[e->npu()] = e.get();
  for (int npu = 0; npu < n; ++npu) {
    const NpuExecutor* e = of[symmetry ? symmetry->Rep(npu) : npu];
    result.npus.push_back(e->stats());
    if (e->memory_tracker())
      result.npus.back().peak_local_memory = e->memory_tracker()->PeakBytes();
    result.breakdown.push_back(e->breakdown());
    result.end = std::max(result.end, e->stats().finish);
  }
  for (JobResult& job : result.jobs) {
    for (int npu : job.npus) {
      const Time finish = result.npus[npu].finish;
      if (job.slowest_npu < 0 || finish > job.finish) {
        job.finish = finish;
        job.slowest_npu = npu;
      }
    }
  }
}

// The NCCL tuner's choices; with a symmetry, each as often as the full run asks for it: once
// for every distinct image of its group (the copies of a tensor-parallel group; a data-parallel
// group that spans them all once).
std::vector<NcclTunedCollective> TunedChoices(const NcclTuner& tuner, const SystemLayer& layer,
                                              const NpuSymmetry* symmetry) {
  if (symmetry == nullptr) return tuner.tuned();
  std::vector<NcclTunedCollective> out;
  for (const NcclTunedCollective& c : tuner.tuned()) {
    int images = 1;
    if (const std::vector<int>* members = c.group != 0 ? layer.GroupMembers(c.group) : nullptr) {
      images = symmetry->ImagesOf(*members);
    }
    for (int k = 0; k < images; ++k) {
      out.push_back(c);
      out.back().shared = out.back().shared || k > 0;
    }
  }
  return out;
}

// The run's cost, from its inputs (runner/estimate.h), before anything grows with it: the
// NPUs simulated (`npus`; with a symmetry, one per orbit).
RunCost EstimateSimulatedRun(const RunOptions& o, const Machine& m, const TraceSet& set,
                             const std::vector<int>& npus, const SystemLayer& system_layer) {
  const int n = m.num_npus();
  CostInputs in;
  in.topology = &m.topology;
  in.net = &m.net_params;
  in.params = &m.params;
  in.backend = o.backend;
  in.replay_only = m.system.replay_only;
  in.comm_slots = m.system.communication_slots;
  for (int r : npus) in.npu_trace.push_back(set.npu_trace[r]);
  in.system_config = o.system_config;
  for (const auto& t : set.traces) in.loaded_bytes += t->MemoryBytes();
  const Placement* placed = set.placement.get();
  // Groups a comm-group file defined are known; those a trace's METADATA nodes define when
  // they run are read from the NPU's trace (once per distinct trace).
  std::map<const et::Trace*, std::map<int, int>> metadata_groups;
  in.group_size = [&](int npu, std::string_view pg) {
    const StatusOr<int> g = ParseGroup(pg);
    if (!g.ok()) return 0;
    const std::optional<int> id = placed ? placed->Lookup(*g, npu) : std::optional(*g);
    const std::vector<int>* members = id && *id != 0 ? system_layer.GroupMembers(*id) : nullptr;
    if (members != nullptr) return static_cast<int>(members->size());
    const et::Trace* trace = set.npu_trace[npu];
    auto [it, added] = metadata_groups.try_emplace(trace);
    if (added) it->second = MetadataGroupSizes(*trace, placed ? placed->RanksOf(npu) : n);
    const auto size = it->second.find(*g);
    if (size == it->second.end()) return 0;
    const bool spans_copies = placed != nullptr && !placed->jobs() && placed->IsDataParallel(*g);
    return size->second * (spans_copies ? placed->copies() : 1);
  };
  return EstimateRunCost(in);
}

// ASTRA-sim's local-memory file per NPU: <local-mem-trace-filename>.<npu>.json.
Status WriteLocalMemTraces(const RunOptions& o, const Machine& m,
                           const std::vector<std::unique_ptr<NpuExecutor>>& executors) {
  for (const auto& e : executors) {
    const std::string path =
        m.system.local_mem_trace_filename + "." + std::to_string(e->npu()) + ".json";
    Status written = e->memory_tracker()->WriteChromeTrace(path);
    if (!written.ok()) return written.WithContext(o.system_config);
  }
  return Status::Ok();
}

// One simulation of the machine and traces, with `symmetry` (its representatives only) or
// without (null). `*broken_dim` gets the generator a phase broke (the run then ended early).
Status Simulate(const RunOptions& o, const Machine& m, TraceSet& set, const NpuSymmetry* symmetry,
                RunResult& result, int* broken_dim) {
  const int n = m.num_npus();
  Simulation sim;
  std::unique_ptr<Network> net = MakeNetwork(o.backend, sim, m.topology, m.net_params);
  if (symmetry != nullptr && !net->UseSymmetry(*symmetry)) symmetry = nullptr;
  result.network_model = DescribeNetworkModel(o.backend, m.topology, m.net_params);
  SystemLayer system_layer(sim, *net, m.params);
  system_layer.SetSymmetry(symmetry);
  if (set.placement != nullptr) set.placement->ForgetGroups();  // an earlier attempt's
  {
    Status defined = DefineGroups(o, set, system_layer, &result.warnings);
    if (!defined.ok()) return defined;
    Status custom = ConfigureCustomCollectives(m.system, system_layer);
    if (!custom.ok()) return custom;
  }
  StatusOr<std::unique_ptr<NcclTuner>> made = MakeRunTuner(o, m, system_layer, *net);
  if (!made.ok()) return made.status();
  std::unique_ptr<NcclTuner> tuner = std::move(made).value();
  if (!tuner) {
    for (std::string& w : ImplementationListWarnings(o, m)) result.warnings.push_back(std::move(w));
  }
  // The executors' NPUs: every NPU, or with a symmetry its representatives.
  std::vector<int> npus;
  for (int r = 0; r < n; ++r) {
    if (symmetry == nullptr || symmetry->IsRep(r)) npus.push_back(r);
  }
  result.estimate = EstimateSimulatedRun(o, m, set, npus, system_layer);
  if (o.estimate_only) return Status::Ok();
  if (Status within = CheckRunBudget(*result.estimate, o.budget); !within.ok()) return within;
  RemoteMemory memory(sim, m.memory, n);
  // Only when it keeps something: the system layer makes a record for every phase and queue
  // change it reports (a sweep keeps neither).
  std::unique_ptr<PhaseRecorder> recorder;
  if (o.record && (o.record_chunk_phases || o.record_queue_lengths)) {
    recorder = std::make_unique<PhaseRecorder>(n, o.record_chunk_phases, o.record_queue_lengths,
                                               result.timeline_npus);
    system_layer.set_observer(recorder.get());
  }
  Placement* placement = set.placement.get();
  if (placement != nullptr) {
    system_layer.set_group_namer([placement](int id) { return placement->GroupName(id); });
  }
  if (symmetry != nullptr) {
    result.shortcut = std::to_string(n) + " NPUs simulated as " + std::to_string(npus.size()) +
                      " (one per orbit of a symmetry: " + symmetry->Describe() +
                      "; --exact simulates every NPU)";
  }
  const std::vector<std::unique_ptr<NpuExecutor>> executors = MakeExecutors(
      o, m, set, npus, MakeWorkloadParams(o, m, tuner.get(), placement), system_layer, &memory);
  SetProgress(o, sim, executors);
  if (o.record) net->RecordQueueDepths();
  for (auto& e : executors) e->Start();
  sim.Run();
  result.events = sim.events_processed();
  *broken_dim = system_layer.broken_symmetry_dim();
  if (*broken_dim >= 0) return Status::Error(system_layer.broken_symmetry_reason());

  for (auto& e : executors) {
    if (!e->error().ok()) return e->error();
  }
  if (!net->error().ok()) return net->error();
  {
    Status finished = CheckFinished(sim, *net, system_layer, executors);
    if (!finished.ok()) return finished;
  }
  if (m.system.track_local_mem && o.job_alone < 0) {
    result.local_mem_tracked = true;
    Status written = WriteLocalMemTraces(o, m, executors);
    if (!written.ok()) return written;
  }
  CollectStats(executors, symmetry, n, result);
  for (std::string& w : net->Warnings(result.end)) result.warnings.push_back(std::move(w));
  if (!o.link_stats.empty()) {
    Status written = WriteLinkStats(o.link_stats, net->Links(), result.end);
    if (!written.ok()) return written;
  }
  if (tuner) result.nccl_choices = TunedChoices(*tuner, system_layer, symmetry);
  if (placement != nullptr) {
    for (std::string& w : DataParallelWarnings(*placement, set.traces)) {
      result.warnings.push_back(std::move(w));
    }
  }
  result.links = net->Links();  // cheap: one entry per link (the summary shows the busiest)
  if (o.record) {
    if (recorder) recorder->Finish(set.npu_trace, result);
    result.port_queues = net->QueueDepths();
    CollectRecords(executors, set.npu_trace, placement, system_layer, result);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<RunResult> RunSimulation(const RunOptions& o) {
  RunResult result;
  StatusOr<Machine> machine = LoadMachine(o);
  if (!machine.ok()) return machine.status();
  const Machine& m = *machine;
  result.timeline_npus = m.timeline_npus;
  StatusOr<TraceSet> loaded = LoadTraceSet(o, m.num_npus());
  if (!loaded.ok()) return loaded.status();
  TraceSet& set = *loaded;
  result.warnings = std::move(set.warnings);
  const Placement* placement = set.placement.get();
  if (placement) result.placement = placement->Describe();
  const bool jobs = placement && placement->jobs();
  if (placement && !jobs) {
    result.copy_ranks = placement->ranks();
    if (placement->interleave() != placement->ranks()) {
      result.copy_interleave = placement->interleave();
    }
  }
  for (int j = 0; jobs && j < placement->copies(); ++j) {
    JobResult job;
    job.name = placement->JobName(j);
    job.npus = placement->CopyNpus(j);
    result.jobs.push_back(std::move(job));
  }
  // The symmetry shortcut (runner/symmetry.h), unless --exact; a run that breaks a generator
  // runs again without it, and one that fails under a symmetry runs again in full, so that
  // what it says names every NPU as the full run would.
  std::string why_not;
  std::optional<NpuSymmetry> symmetry;
  if (!o.exact) symmetry = ChooseSymmetry(o, m, set, &why_not);
  std::vector<std::string> notes;
  for (;;) {
    RunResult attempt = result;
    int broken = -1;
    Status s = Simulate(o, m, set, symmetry ? &*symmetry : nullptr, attempt, &broken);
    if (symmetry && !s.ok()) {
      if (broken >= 0) {
        notes.push_back("the symmetry of dimension " + std::to_string(broken) +
                        " does not hold: " + s.message());
        symmetry->RemoveGenerator(broken);
        if (symmetry->trivial()) symmetry.reset();
      } else {
        symmetry.reset();
      }
      continue;
    }
    if (!s.ok()) return s;
    attempt.shortcut_notes = std::move(notes);
    if (attempt.shortcut.empty() && !why_not.empty()) {
      attempt.shortcut_notes.push_back("every NPU simulated: " + why_not);
    }
    return attempt;
  }
}

Status AddJobsAlone(const RunOptions& o, RunResult* result) {
  for (size_t j = 0; j < result->jobs.size(); ++j) {
    RunOptions alone = o;
    alone.job_alone = static_cast<int>(j);
    alone.record = false;
    alone.link_stats.clear();
    alone.progress = nullptr;
    StatusOr<RunResult> r = RunSimulation(alone);
    if (!r.ok()) {
      return r.status().WithContext("--jobs-alone: job '" + result->jobs[j].name + "' alone");
    }
    result->jobs[j].alone = r->jobs.at(0).finish;
  }
  return Status::Ok();
}

Status WriteLinkStats(const std::string& path, std::vector<LinkStats> links, Time end) {
  std::stable_sort(links.begin(), links.end(), [](const LinkStats& a, const LinkStats& b) {
    return a.busy != b.busy ? a.busy > b.busy : a.name < b.name;
  });
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::Error("--link-stats " + path + ": cannot create the file");
  // Backends with output queues (packet) add port columns after the common ones.
  bool ports = false;
  for (const LinkStats& l : links) ports = ports || l.port.has_value();
  std::fprintf(f, "rank,link,bytes,busy_ns,utilisation%s\n",
               ports ? ",max_queue_bytes,mean_queue_bytes,pause_ns,drops" : "");
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkStats& l = links[i];
    const double util = end.ps() > 0 ? static_cast<double>(l.busy.ps()) / end.ps() : 0.0;
    std::fprintf(f, "%zu,%s,%llu,%.3f,%.6f", i + 1, l.name.c_str(),
                 static_cast<unsigned long long>(l.bytes), l.busy.Ns(), util);
    if (ports) {
      const LinkStats::Port p = l.port.value_or(LinkStats::Port());
      std::fprintf(f, ",%llu,%.3f,%.3f,%llu", static_cast<unsigned long long>(p.max_queue_bytes),
                   p.mean_queue_bytes, p.paused.Ns(), static_cast<unsigned long long>(p.drops));
    }
    std::fprintf(f, "\n");
  }
  if (std::fclose(f) != 0) return Status::Error("--link-stats " + path + ": write failed");
  return Status::Ok();
}

}  // namespace orrery
