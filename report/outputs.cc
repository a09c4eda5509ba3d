#include "report/outputs.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json.h"
#include "report/breakdown.h"
#include "report/output_files.h"

namespace orrery {

namespace {

using report_internal::FileWriter;
using report_internal::NeedsRecording;
using report_internal::NpuPlace;
using report_internal::NpuPlaces;
using report_internal::Ns;
using report_internal::PathKind;

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A span's whole ns as its ends print (end_ns - start_ns), so that durations printed beside their
// ends agree with them and the critical path's add up to the step time (the picosecond span
// truncated on its own could be 1 ns off).
std::string NsBetween(Time start, Time end) {
  return std::to_string(end.WholeNs() - start.WholeNs());
}

Status Save(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  f << text;
  f.close();
  if (!f) return Status::Error(path + ": write failed: " + std::strerror(errno));
  return Status::Ok();
}

// What the owner is called in reports: "job" (--jobs) or "copy" (--replicate-trace).
const char* OwnerKind(const RunResult& r) { return r.copy_ranks > 0 ? "copy" : "job"; }

// The owner as a JSON value: the job's name, or the copy's number.
std::string OwnerJson(const RunResult& r, int owner) {
  return r.copy_ranks > 0 ? std::to_string(owner) : JsonString(r.jobs[owner].name);
}

// The `"job": .., "rank": ..` (or `"copy": ..`) members of NPU `npu`'s JSON entry (null for an
// idle NPU), after a comma; "" without jobs or copies.
std::string PlaceJson(const RunResult& r, const std::vector<NpuPlace>& of, int npu) {
  if (of.empty()) return "";
  const NpuPlace& p = of[npu];
  const std::string owner = std::string(", \"") + OwnerKind(r) + "\": ";
  if (p.owner < 0) return owner + "null, \"rank\": null";
  return owner + OwnerJson(r, p.owner) + ", \"rank\": " + std::to_string(p.rank);
}

// The `job,rank` (or `copy,rank`) fields of NPU `npu`'s CSV row (empty for an idle NPU), after a
// comma; "" without jobs or copies.
std::string PlaceCsv(const RunResult& r, const std::vector<NpuPlace>& of, int npu) {
  if (of.empty()) return "";
  const NpuPlace& p = of[npu];
  if (p.owner < 0) return ",,";
  const std::string owner =
      r.copy_ranks > 0 ? std::to_string(p.owner) : CsvField(r.jobs[p.owner].name);
  return "," + owner + "," + std::to_string(p.rank);
}

}  // namespace

Status WriteReportJson(const RunResult& r, const std::string& path) {
  if (Status s = NeedsRecording(r); !s.ok()) return s;
  FileWriter out(path);
  if (!out.opened()) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  out += "{\n  \"units\": {\"time\": \"ns\", \"bandwidth\": \"GB/s (1e9 B/s)\"},\n";
  out += "  \"network_model\": " + JsonString(r.network_model) + ",\n";
  // Copies of a trace: how they were laid out (jobs have their own section below).
  if (!r.placement.empty() && r.jobs.empty()) {
    out += "  \"replication\": " + JsonString(r.placement) + ",\n";
  }
  if (!r.jobs.empty()) {
    out += "  \"jobs\": [\n";
    for (size_t i = 0; i < r.jobs.size(); ++i) {
      const JobResult& j = r.jobs[i];
      std::string npus;
      for (size_t k = 0; k < j.npus.size(); ++k)
        npus += (k ? ", " : "") + std::to_string(j.npus[k]);
      out += "    {\"name\": " + JsonString(j.name) + ", \"npus\": [" + npus +
             "], \"step_time_ns\": " + Ns(j.finish) +
             ", \"slowest_npu\": " + std::to_string(j.slowest_npu) +
             (j.alone ? ", \"alone_step_time_ns\": " + Ns(*j.alone) : std::string()) + "}" +
             (i + 1 < r.jobs.size() ? ",\n" : "\n");
    }
    out += "  ],\n";
  }
  out += "  \"num_npus\": " + std::to_string(r.num_npus()) + ",\n";
  out += "  \"step_time_ns\": " + Ns(r.end) + ",\n  \"npus\": [\n";
  // With --jobs or --replicate-trace, each entry names its job or copy, and its rank.
  const std::vector<NpuPlace> place_of = NpuPlaces(r);
  for (int i = 0; i < r.num_npus(); ++i) {
    const NpuBreakdown& b = r.breakdown[i];
    out += "    {\"npu\": " + std::to_string(i) + PlaceJson(r, place_of, i) +
           ", \"total\": " + Ns(b.total) + ", \"compute\": " + Ns(b.compute) +
           ", \"cpu\": " + Ns(b.cpu) + ", \"communication\": " + Ns(b.communication) +
           ", \"exposed_communication\": " + Ns(b.exposed) +
           ", \"overlapped_communication\": " + Ns(b.overlapped) + ", \"memory\": " + Ns(b.memory) +
           ", \"idle\": " + Ns(b.idle) + ", \"overlap_percent\": " + Num(b.overlap_percent()) +
           ", \"astra_sim_exposed_communication\": " + Ns(r.npus[i].exposed_communication()) + "}" +
           (i + 1 < r.num_npus() ? ",\n" : "\n");
  }
  out += "  ],\n  \"collectives\": [\n";
  const std::vector<CollectiveStat> colls = CollectiveStats(r);
  for (size_t i = 0; i < colls.size(); ++i) {
    const CollectiveStat& c = colls[i];
    out += "    {\"npu\": " + std::to_string(c.npu) + PlaceJson(r, place_of, c.npu) +
           ", \"node_id\": " + std::to_string(c.node_id) + ", \"name\": " + JsonString(c.name) +
           ", \"type\": \"" + et::CollectiveTypeName(c.type) +
           "\", \"group\": " + JsonString(c.group.empty() ? "all" : c.group) +
           ", \"group_size\": " + std::to_string(c.group_size) +
           ", \"bytes\": " + std::to_string(c.bytes) + ", \"start\": " + Ns(c.start) +
           ", \"end\": " + Ns(c.end) + ", \"duration\": " + NsBetween(c.start, c.end) +
           ", \"alg_bw\": " + Num(c.alg_bw_gbps) + ", \"bus_bw\": " + Num(c.bus_bw_gbps) + "}" +
           (i + 1 < colls.size() ? ",\n" : "\n");
  }
  out += "  ],\n  \"links\": [\n";
  for (size_t i = 0; i < r.links.size(); ++i) {
    const LinkStats& l = r.links[i];
    const double util = r.end.ps() > 0 ? static_cast<double>(l.busy.ps()) / r.end.ps() : 0;
    out += "    {\"link\": " + JsonString(l.name) + ", \"bytes\": " + std::to_string(l.bytes) +
           ", \"busy\": " + Ns(l.busy) + ", \"utilisation\": " + Num(util) +
           (l.port ? ", \"max_queue_bytes\": " + std::to_string(l.port->max_queue_bytes) +
                         ", \"mean_queue_bytes\": " + Num(l.port->mean_queue_bytes) +
                         ", \"pause\": " + Ns(l.port->paused) +
                         ", \"drops\": " + std::to_string(l.port->drops)
                   : std::string()) +
           "}" + (i + 1 < r.links.size() ? ",\n" : "\n");
  }
  out += "  ],\n  \"queues\": [";
  const char* separator = "\n";
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    for (const QueueStat& q : QueueStats(r, npu)) {
      out += separator;
      separator = ",\n";
      out += "    {\"npu\": " + std::to_string(q.npu) + ", \"queue\": " + std::to_string(q.queue) +
             ", \"max_length\": " + std::to_string(q.max_length) +
             ", \"mean_length\": " + Num(q.mean_length) + ", \"samples\": [";
      for (size_t k = 0; k < q.samples.size(); ++k) {
        out += (k ? ", [" : "[") + Ns(q.samples[k].first) + ", " +
               std::to_string(q.samples[k].second) + "]";
      }
      out += "]}";
    }
  }
  out += "\n";
  const CriticalPathTotals cp = CriticalPathTotalsOf(r);
  out += "  ],\n  \"critical_path\": {\"total\": " + Ns(cp.total) +
         ", \"compute\": " + Ns(cp.compute) + ", \"cpu\": " + Ns(cp.cpu) +
         ", \"communication\": " + Ns(cp.communication) + ", \"memory\": " + Ns(cp.memory) +
         ", \"nodes\": " + std::to_string(cp.nodes) + ", \"npus\": [";
  for (size_t i = 0; i < cp.npus.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(cp.npus[i]);
  }
  out += "], \"slot_waits\": " + std::to_string(cp.slot_waits) + ", \"segments\": [\n";
  for (size_t i = 0; i < r.critical_path.size(); ++i) {
    const CriticalPathStep& c = r.critical_path[i];
    out += "    {\"npu\": " + std::to_string(c.npu) +
           ", \"node_id\": " + std::to_string(c.node_id) + ", \"name\": " + JsonString(c.name) +
           ", \"kind\": \"" + PathKind(c) + "\", \"start\": " + Ns(c.start) +
           ", \"end\": " + Ns(c.end) + ", \"duration\": " + NsBetween(c.start, c.end) +
           ", \"after\": \"" + PathLinkName(c.link) + "\"" +
           (c.from_npu >= 0 ? ", \"after_npu\": " + std::to_string(c.from_npu) +
                                  ", \"after_node_id\": " + std::to_string(c.from_node_id)
                            : std::string()) +
           "}" + (i + 1 < r.critical_path.size() ? ",\n" : "\n");
  }
  out += "  ]}\n}\n";
  return out.Close();
}

Status WriteReportCsv(const RunResult& r, const std::string& prefix) {
  if (Status s = NeedsRecording(r); !s.ok()) return s;
  // With --jobs or --replicate-trace, the per-NPU files have each NPU's job or copy, and its rank,
  // after its id.
  const std::vector<NpuPlace> place_of = NpuPlaces(r);
  const std::string job_columns = place_of.empty() ? "" : std::string(",") + OwnerKind(r) + ",rank";
  std::string npus = "npu" + job_columns +
                     ",total_ns,compute_ns,cpu_ns,communication_ns,exposed_communication_ns,"
                     "overlapped_communication_ns,memory_ns,idle_ns,overlap_percent\n";
  for (int i = 0; i < r.num_npus(); ++i) {
    const NpuBreakdown& b = r.breakdown[i];
    npus += std::to_string(i) + PlaceCsv(r, place_of, i) + "," + Ns(b.total) + "," + Ns(b.compute) +
            "," + Ns(b.cpu) + "," + Ns(b.communication) + "," + Ns(b.exposed) + "," +
            Ns(b.overlapped) + "," + Ns(b.memory) + "," + Ns(b.idle) + "," +
            Num(b.overlap_percent()) + "\n";
  }
  std::string colls = "npu" + job_columns +
                      ",node_id,name,type,group,group_size,bytes,start_ns,end_ns,duration_ns,"
                      "alg_bw_gbps,bus_bw_gbps\n";
  for (const CollectiveStat& c : CollectiveStats(r)) {
    colls += std::to_string(c.npu) + PlaceCsv(r, place_of, c.npu) + "," +
             std::to_string(c.node_id) + "," + CsvField(c.name) + "," +
             et::CollectiveTypeName(c.type) + "," + CsvField(c.group.empty() ? "all" : c.group) +
             "," + std::to_string(c.group_size) + "," + std::to_string(c.bytes) + "," +
             Ns(c.start) + "," + Ns(c.end) + "," + NsBetween(c.start, c.end) + "," +
             Num(c.alg_bw_gbps) + "," + Num(c.bus_bw_gbps) + "\n";
  }
  // The packet backend's ports add their queue and flow-control columns, as in the JSON report.
  const bool ports = std::any_of(r.links.begin(), r.links.end(),
                                 [](const LinkStats& l) { return l.port.has_value(); });
  std::string links = std::string("link,bytes,busy_ns,utilisation") +
                      (ports ? ",max_queue_bytes,mean_queue_bytes,pause_ns,drops" : "") + "\n";
  for (const LinkStats& l : r.links) {
    const double util = r.end.ps() > 0 ? static_cast<double>(l.busy.ps()) / r.end.ps() : 0;
    links += CsvField(l.name) + "," + std::to_string(l.bytes) + "," + Ns(l.busy) + "," + Num(util);
    if (l.port) {
      links += "," + std::to_string(l.port->max_queue_bytes) + "," + Num(l.port->mean_queue_bytes) +
               "," + Ns(l.port->paused) + "," + std::to_string(l.port->drops);
    } else if (ports) {
      links += ",,,,";
    }
    links += "\n";
  }
  std::string path =
      "npu,node_id,name,kind,start_ns,end_ns,duration_ns,after,after_npu,after_node_id\n";
  for (const CriticalPathStep& c : r.critical_path) {
    path += std::to_string(c.npu) + "," + std::to_string(c.node_id) + "," + CsvField(c.name) + "," +
            PathKind(c) + "," + Ns(c.start) + "," + Ns(c.end) + "," + NsBetween(c.start, c.end) +
            "," + PathLinkName(c.link) + "," +
            (c.from_npu >= 0 ? std::to_string(c.from_npu) + "," + std::to_string(c.from_node_id)
                             : std::string(",")) +
            "\n";
  }
  for (const auto& [suffix, text] : {std::pair<const char*, const std::string*>{".npus.csv", &npus},
                                     {".collectives.csv", &colls},
                                     {".links.csv", &links}}) {
    if (Status s = Save(prefix + suffix, *text); !s.ok()) return s;
  }
  // Every change of every queue's length: written as it is made, NPU by NPU.
  FileWriter queues(prefix + ".queues.csv");
  if (!queues.opened()) {
    return Status::Error(prefix + ".queues.csv: cannot write: " + std::strerror(errno));
  }
  queues += "npu,queue,time_ns,length\n";
  for (int npu = 0; npu < r.num_npus(); ++npu) {
    for (const QueueStat& q : QueueStats(r, npu)) {
      for (const auto& [t, length] : q.samples) {
        queues += std::to_string(q.npu) + "," + std::to_string(q.queue) + "," + Ns(t) + "," +
                  std::to_string(length) + "\n";
      }
    }
  }
  if (Status s = queues.Close(); !s.ok()) return s;
  return Save(prefix + ".critical_path.csv", path);
}

namespace {

// The summary's head: NPUs, step time and the slowest NPU, the network, the workload, each job.
void AppendSummaryHead(const RunResult& r, int slowest, std::string& out) {
  out += "\nsummary: " + std::to_string(r.num_npus()) + " NPUs, step time " + r.end.ToHuman() +
         " (slowest: NPU " + std::to_string(slowest) + ")\n";
  if (!r.network_model.empty()) out += "  network: " + r.network_model + "\n";
  if (!r.placement.empty()) out += "  workload: " + r.placement + "\n";
  for (const JobResult& j : r.jobs) {
    out += "  job '" + j.name + "' (NPU" + (j.npus.size() == 1 ? " " : "s ") +
           FormatNpuRanges(j.npus) + "): step time " + j.finish.ToHuman() +
           (j.slowest_npu >= 0 ? " (slowest: NPU " + std::to_string(j.slowest_npu) + ")" : "");
    if (j.alone) {
      // What sharing the machine costs the job: its step time against its own, alone.
      char pct[48];
      std::snprintf(pct, sizeof pct, "%+.1f%%", j.SharingPercent());
      out += "; alone " + j.alone->ToHuman() + ", " + pct + " from sharing";
    }
    out += "\n";
  }
}

// The breakdown table: the mean (working) NPU's and the slowest NPU's times, in us or ms.
void AppendBreakdownTable(const RunResult& r, int slowest, std::string& out) {
  // With --jobs, the mean is over the NPUs that run a job (idle ones would dilute it).
  const NpuBreakdown mean = MeanBreakdown(WorkingNpuBreakdowns(r));
  bool any_cpu = false, any_memory = false;
  for (const NpuBreakdown& b : r.breakdown) {
    any_cpu = any_cpu || b.cpu.ps() > 0;
    any_memory = any_memory || b.memory.ps() > 0;
  }
  const bool ms = r.end.Ns() >= 1e6;
  auto fmt = [ms](Time t) {
    // Whole ns first, as the step time above and the sys[i] lines.
    const double ns = static_cast<double>(t.WholeNs());
    char buf[32];
    std::snprintf(buf, sizeof buf, "%12.3f", ms ? ns / 1e6 : ns / 1e3);
    return std::string(buf);
  };
  const char* unit = ms ? "ms" : "us";
  const NpuBreakdown s = r.breakdown[slowest];
  char line[200];
  std::snprintf(line, sizeof line, "  %-24s %12s %12s\n", unit,
                r.jobs.empty() ? "mean NPU" : "mean job NPU",
                ("NPU " + std::to_string(slowest)).c_str());
  out += line;
  auto row = [&](const char* name, Time a, Time b) {
    std::snprintf(line, sizeof line, "  %-24s %s %s\n", name, fmt(a).c_str(), fmt(b).c_str());
    out += line;
  };
  row("total", mean.total, s.total);
  row("GPU compute", mean.compute, s.compute);
  if (any_cpu) row("CPU", mean.cpu, s.cpu);
  row("communication", mean.communication, s.communication);
  row("exposed communication", mean.exposed, s.exposed);
  row("overlapped comm.", mean.overlapped, s.overlapped);
  row("idle", mean.idle, s.idle);
  if (any_memory) row("remote memory", mean.memory, s.memory);
}

// What the step waits on, end to end (report: critical_path). A run with a critical path and
// a step time above 0 only.
void AppendCriticalPathLine(const RunResult& r, std::string& out) {
  const CriticalPathTotals cp = CriticalPathTotalsOf(r);
  char line[200];
  out += "  critical path:";
  bool first = true;
  for (const auto& [name, t] : {std::pair<const char*, Time>{"GPU compute", cp.compute},
                                {"CPU", cp.cpu},
                                {"communication", cp.communication},
                                {"remote memory", cp.memory}}) {
    if (t.ps() == 0) continue;
    std::snprintf(line, sizeof line, "%s %s %.1f%%", first ? "" : ",", name,
                  100.0 * static_cast<double>(t.ps()) / r.end.ps());
    out += line;
    first = false;
  }
  std::string npus;
  for (size_t i = 0; i < cp.npus.size() && i < 6; ++i) {
    npus += (i ? ", " : "") + std::to_string(cp.npus[i]);
  }
  if (cp.npus.size() > 6) npus += ", ... (" + std::to_string(cp.npus.size()) + " NPUs)";
  out += " (" + std::to_string(cp.nodes) + " node" + (cp.nodes == 1 ? "" : "s") + " on NPU" +
         (cp.npus.size() == 1 ? " " : "s ") + npus;
  if (cp.slot_waits > 0) {
    out += "; " + std::to_string(cp.slot_waits) + " began when a busy slot freed";
  }
  out += ")\n";
}

// nccl-model: what NCCL's tuner picked for each distinct collective (nccl/nccl_tuner.h).
void AppendNcclChoices(const RunResult& r, std::string& out) {
  out += "  NCCL choices (nccl-model), each collective alone:\n";
  // Distinct collectives alike in type, size, group size, choice and time (each copy's
  // tensor-parallel group under --replicate-trace, say) share one line: "(x1024)".
  char line[200];
  std::vector<std::pair<std::string, int>> lines;
  std::map<std::string, size_t> index;
  for (const NcclTunedCollective& c : r.nccl_choices) {
    std::snprintf(line, sizeof line, "%s %llu B on %d NPUs: %s, %.3f us",
                  CollectiveTypeName(c.type), static_cast<unsigned long long>(c.size), c.group_size,
                  c.choice.c_str(), c.predicted.Ns() / 1e3);
    auto [at, added] = index.emplace(line, lines.size());
    if (added) lines.emplace_back(line, 0);
    ++lines[at->second].second;
  }
  const size_t shown = std::min<size_t>(8, lines.size());
  for (size_t i = 0; i < shown; ++i) {
    out += "    " + lines[i].first;
    if (lines[i].second > 1) out += " (x" + std::to_string(lines[i].second) + ")";
    out += "\n";
  }
  if (lines.size() > shown) {
    out += "    ... and " + std::to_string(lines.size() - shown) + " more\n";
  }
}

// The busiest links (congestion-aware backend): where the network is the bottleneck; with
// output queues (packet), the deepest queues and the time held by flow control. A run with
// links and a step time above 0 only.
void AppendLinkLines(const RunResult& r, std::string& out) {
  char line[200];
  std::vector<const LinkStats*> busiest;
  for (const LinkStats& l : r.links) busiest.push_back(&l);
  const size_t top = std::min<size_t>(3, busiest.size());
  std::partial_sort(busiest.begin(), busiest.begin() + static_cast<std::ptrdiff_t>(top),
                    busiest.end(), [](const LinkStats* a, const LinkStats* b) {
                      if (a->busy.ps() != b->busy.ps()) return a->busy.ps() > b->busy.ps();
                      return a->name < b->name;
                    });
  out += "  busiest links:";
  for (size_t i = 0; i < top; ++i) {
    const LinkStats& l = *busiest[i];
    std::snprintf(line, sizeof line, "%s %s %.1f%% busy (%.3g MB)", i ? "," : "", l.name.c_str(),
                  100.0 * static_cast<double>(l.busy.ps()) / r.end.ps(),
                  static_cast<double>(l.bytes) / 1e6);
    out += line;
  }
  out += "\n";
  std::vector<const LinkStats*> queued;
  for (const LinkStats& l : r.links) {
    if (l.port && l.port->max_queue_bytes > 0) queued.push_back(&l);
  }
  if (queued.empty()) return;
  const size_t qtop = std::min<size_t>(3, queued.size());
  std::partial_sort(queued.begin(), queued.begin() + static_cast<std::ptrdiff_t>(qtop),
                    queued.end(), [](const LinkStats* a, const LinkStats* b) {
                      if (a->port->max_queue_bytes != b->port->max_queue_bytes) {
                        return a->port->max_queue_bytes > b->port->max_queue_bytes;
                      }
                      return a->name < b->name;
                    });
  out += "  deepest queues:";
  for (size_t i = 0; i < qtop; ++i) {
    const LinkStats& l = *queued[i];
    std::snprintf(line, sizeof line, "%s %s max %.3g KB (mean %.3g KB, paused %.1f%%)",
                  i ? "," : "", l.name.c_str(), static_cast<double>(l.port->max_queue_bytes) / 1e3,
                  l.port->mean_queue_bytes / 1e3,
                  100.0 * static_cast<double>(l.port->paused.ps()) / r.end.ps());
    out += line;
  }
  out += "\n";
}

}  // namespace

std::string SummaryTable(const RunResult& r) {
  const int n = r.num_npus();
  if (n == 0) return "";
  int slowest = 0;
  for (int i = 1; i < n; ++i) {
    if (r.npus[slowest].finish < r.npus[i].finish) slowest = i;
  }
  std::string out;
  AppendSummaryHead(r, slowest, out);
  AppendBreakdownTable(r, slowest, out);
  if (!r.critical_path.empty() && r.end.ps() > 0) AppendCriticalPathLine(r, out);
  if (!r.nccl_choices.empty()) AppendNcclChoices(r, out);
  if (!r.links.empty() && r.end.ps() > 0) AppendLinkLines(r, out);
  return out;
}

}  // namespace orrery
