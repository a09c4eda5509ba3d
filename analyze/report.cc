#include "analyze/report.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/json.h"

namespace orrery {
namespace analyze {

std::string UsText(int64_t ns) {
  char buf[48];
  const int64_t a = ns < 0 ? -ns : ns;
  std::snprintf(buf, sizeof buf, "%s%" PRId64 ".%03" PRId64, ns < 0 ? "-" : "", a / 1000, a % 1000);
  return buf;
}

namespace {

std::string Num(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string Field(const char* name, const std::string& value) {
  return std::string("\"") + name + "\": " + value;
}

std::string IdleJson(const IdleCauses& c) {
  return Field("host_wait_us", UsText(c.host_wait_ns)) + ", " +
         Field("kernel_wait_us", UsText(c.kernel_wait_ns)) + ", " +
         Field("other_us", UsText(c.other_ns));
}

std::string LaunchJson(const LaunchStats& l) {
  if (!l.available) return "null";
  return "{" + Field("launches", std::to_string(l.launches)) + ", " +
         Field("delay_mean_us", Num(l.delay_mean_ns / 1000.0)) + ", " +
         Field("delay_p50_us", UsText(l.delay_p50_ns)) + ", " +
         Field("delay_p95_us", UsText(l.delay_p95_ns)) + ", " +
         Field("delay_max_us", UsText(l.delay_max_ns)) + ", " +
         Field("delay_outliers", std::to_string(l.delay_outliers)) + ", " +
         Field("runtime_outliers", std::to_string(l.runtime_outliers)) + ", " +
         Field("short_kernels", std::to_string(l.short_kernels)) + ", " +
         Field("short_kernels_us", UsText(l.short_kernel_ns)) + "}";
}

std::string RankJson(const RankReport& r) {
  std::string s = "    {" + Field("rank", std::to_string(r.rank)) + ", " +
                  Field("source", JsonString(r.source)) + ", " +
                  Field("simulated", r.simulated ? "true" : "false") + ",\n     " +
                  Field("span_us", UsText(r.span_ns)) + ", " + Field("busy_us", UsText(r.busy_ns)) +
                  ", " + Field("idle_us", UsText(r.idle_ns)) + ", " +
                  Field("compute_us", UsText(r.compute_ns)) + ", " +
                  Field("communication_us", UsText(r.communication_ns)) + ", " +
                  Field("memory_us", UsText(r.memory_ns)) + ", " +
                  Field("comm_overlap_pct", Num(r.comm_overlap_pct)) + ",\n     " +
                  Field("first_us", UsText(r.first_ns)) + ", " +
                  Field("overlap_us", UsText(r.overlap_ns)) + ",\n     ";
  s += "\"temporal_breakdown\": {" + Field("compute_us", UsText(r.compute_ns)) + ", " +
       Field("exposed_communication_us", UsText(r.exposed_communication_ns)) + ", " +
       Field("memory_only_us", UsText(r.memory_only_ns)) + ", " +
       Field("idle_us", UsText(r.idle_ns)) + "},\n     ";
  s += "\"kernels\": {";
  for (int k = 0; k < 3; ++k) {
    s += std::string(k ? ", " : "") + "\"" + CategoryName(static_cast<Category>(k)) + "\": {" +
         Field("count", std::to_string(r.totals[k].count)) + ", " +
         Field("sum_us", UsText(r.totals[k].sum_ns)) + "}";
  }
  s += "},\n     \"idle_by_cause\": {" + IdleJson(r.idle_causes) + ", \"streams\": [";
  for (size_t i = 0; i < r.stream_idle.size(); ++i) {
    s += std::string(i ? ", " : "") + "{" +
         Field("stream", std::to_string(r.stream_idle[i].stream)) + ", " +
         IdleJson(r.stream_idle[i].causes) + "}";
  }
  s += "]},\n     \"launch\": " + LaunchJson(r.launch) + ",\n     \"top_kernels\": [";
  for (size_t i = 0; i < r.top_kernels.size(); ++i) {
    const KernelStat& k = r.top_kernels[i];
    s += std::string(i ? ",\n       " : "\n       ") + "{" + Field("name", JsonString(k.name)) +
         ", " + Field("category", std::string("\"") + CategoryName(k.category) + "\"") + ", " +
         Field("count", std::to_string(k.count)) + ", " + Field("total_us", UsText(k.total_ns)) +
         ", " + Field("mean_us", UsText(k.count ? k.total_ns / k.count : 0)) + ", " +
         Field("min_us", UsText(k.min_ns)) + ", " + Field("max_us", UsText(k.max_ns)) + "}";
  }
  s += "],\n     \"critical_path\": ";
  const CriticalPathSummary& p = r.critical_path;
  if (p.source.empty()) {
    s += "null";
  } else {
    s += "{" + Field("source", JsonString(p.source)) + ", " +
         Field("total_us", UsText(p.total_ns)) + ", " +
         Field("segments", std::to_string(p.segments)) + ", \"by_kind_us\": {";
    bool first = true;
    for (const auto& [kind, ns] : p.by_kind_ns) {
      s += std::string(first ? "" : ", ") + JsonString(kind) + ": " + UsText(ns);
      first = false;
    }
    s += "}}";
  }
  return s + "}";
}

std::string SpreadJson(const SpreadStat& s) {
  return "{" + Field("min_us", UsText(s.min_ns)) + ", " +
         Field("min_rank", std::to_string(s.min_rank)) + ", " + Field("max_us", UsText(s.max_ns)) +
         ", " + Field("max_rank", std::to_string(s.max_rank)) + ", " +
         Field("mean_us", Num(s.mean_ns / 1000.0)) + ", " +
         Field("median_us", UsText(s.median_ns)) + ", " +
         Field("max_over_mean", Num(s.mean_ns > 0 ? s.max_ns / s.mean_ns : 0)) + "}";
}

}  // namespace

std::string AnalysisJson(const JobReport& job, const AnalyzeOptions& o) {
  std::string s = "{\n  \"units\": {\"time\": \"us\"},\n  \"tool\": \"orrery analyze\",\n";
  s += "  \"options\": {" + Field("kernel_wait_us", UsText(o.kernel_wait_ns)) + ", " +
       Field("launch_delay_cutoff_us", UsText(o.launch_delay_cutoff_ns)) + ", " +
       Field("runtime_cutoff_us", UsText(o.runtime_cutoff_ns)) + ", " +
       Field("top_kernels", std::to_string(o.top_kernels)) + ", " +
       Field("straggler_tolerance", Num(o.straggler_tolerance)) + "},\n";
  s += "  \"ranks\": [\n";
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    s += RankJson(job.ranks[i]) + (i + 1 < job.ranks.size() ? ",\n" : "\n");
  }
  s += "  ],\n  \"imbalance\": {\"busy\": " + SpreadJson(job.busy) +
       ",\n                \"compute\": " + SpreadJson(job.compute) +
       ",\n                \"communication\": " + SpreadJson(job.communication) + "},\n";
  s += "  \"stragglers\": [";
  for (size_t i = 0; i < job.stragglers.size(); ++i) {
    s += std::string(i ? ", " : "") + "{" + Field("rank", std::to_string(job.stragglers[i].rank)) +
         ", " + Field("reason", JsonString(job.stragglers[i].reason)) + "}";
  }
  s += "],\n  \"collectives\": {" +
       Field("matched_by_position", std::to_string(job.matched_collectives)) +
       ", \"last_to_start\": {";
  bool first = true;
  for (const auto& [rank, n] : job.last_to_start) {
    s += std::string(first ? "" : ", ") + "\"" + std::to_string(rank) + "\": " + std::to_string(n);
    first = false;
  }
  return s + "}}\n}\n";
}

Status WriteAnalysisJson(const JobReport& job, const AnalyzeOptions& o, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return Status::Error(path + ": cannot write: " + std::strerror(errno));
  f << AnalysisJson(job, o);
  f.close();
  if (!f) return Status::Error(path + ": write failed: " + std::strerror(errno));
  return Status::Ok();
}

namespace {

std::string Ms(int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}

}  // namespace

std::string AnalysisSummary(const JobReport& job) {
  std::string s;
  char line[400];
  std::snprintf(line, sizeof line, "%-6s %12s %12s %12s %12s %12s %12s %9s\n", "rank", "span ms",
                "busy ms", "idle ms", "compute ms", "comm ms", "memory ms", "overlap%");
  s += line;
  for (const RankReport& r : job.ranks) {
    std::snprintf(line, sizeof line, "%-6d %12s %12s %12s %12s %12s %12s %9.2f\n", r.rank,
                  Ms(r.span_ns).c_str(), Ms(r.busy_ns).c_str(), Ms(r.idle_ns).c_str(),
                  Ms(r.compute_ns).c_str(), Ms(r.communication_ns).c_str(), Ms(r.memory_ns).c_str(),
                  r.comm_overlap_pct);
    s += line;
  }
  for (const RankReport& r : job.ranks) {
    std::snprintf(line, sizeof line,
                  "rank %d: idle by cause: host wait %s ms, kernel wait %s ms, other %s ms\n",
                  r.rank, Ms(r.idle_causes.host_wait_ns).c_str(),
                  Ms(r.idle_causes.kernel_wait_ns).c_str(), Ms(r.idle_causes.other_ns).c_str());
    s += line;
    if (r.launch.available && r.launch.launches > 0) {
      std::snprintf(line, sizeof line,
                    "rank %d: %lld launches, launch delay mean %.1f us, p95 %s us, max %s us; "
                    "%lld delays over the cutoff, %lld runtime calls over it; %lld ops shorter "
                    "than their launch\n",
                    r.rank, static_cast<long long>(r.launch.launches),
                    r.launch.delay_mean_ns / 1000.0, UsText(r.launch.delay_p95_ns).c_str(),
                    UsText(r.launch.delay_max_ns).c_str(),
                    static_cast<long long>(r.launch.delay_outliers),
                    static_cast<long long>(r.launch.runtime_outliers),
                    static_cast<long long>(r.launch.short_kernels));
      s += line;
    }
    if (!r.critical_path.source.empty() && r.critical_path.total_ns > 0) {
      std::string kinds;
      for (const auto& [kind, ns] : r.critical_path.by_kind_ns) {
        char k[96];
        std::snprintf(
            k, sizeof k, "%s%s %.1f%%", kinds.empty() ? "" : ", ", kind.c_str(),
            100.0 * static_cast<double>(ns) / static_cast<double>(r.critical_path.total_ns));
        kinds += k;
      }
      s += "rank " + std::to_string(r.rank) + ": critical path (" + r.critical_path.source + ", " +
           Ms(r.critical_path.total_ns) + " ms): " + kinds + "\n";
    }
    if (!r.top_kernels.empty()) {
      const KernelStat& k = r.top_kernels[0];
      std::string name = k.name.size() > 70 ? k.name.substr(0, 67) + "..." : k.name;
      s += "rank " + std::to_string(r.rank) + ": top kernel " + name + " (" +
           CategoryName(k.category) + ", " + std::to_string(k.count) + "x, " + Ms(k.total_ns) +
           " ms)\n";
    }
  }
  if (job.ranks.size() > 1) {
    std::snprintf(line, sizeof line,
                  "imbalance: busy %s..%s ms (max/mean %.3f, rank %d), compute %s..%s ms (rank "
                  "%d)\n",
                  Ms(job.busy.min_ns).c_str(), Ms(job.busy.max_ns).c_str(),
                  job.busy.mean_ns > 0 ? job.busy.max_ns / job.busy.mean_ns : 0.0,
                  job.busy.max_rank, Ms(job.compute.min_ns).c_str(), Ms(job.compute.max_ns).c_str(),
                  job.compute.max_rank);
    s += line;
    for (const Straggler& st : job.stragglers) {
      s += "straggler candidate: rank " + std::to_string(st.rank) + " (" + st.reason + ")\n";
    }
  }
  return s;
}

}  // namespace analyze
}  // namespace orrery
