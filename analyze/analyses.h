// Holistic Trace Analysis' analyses on measured and simulated timelines alike (definitions in
// analyze/README.md):
//
//   std::vector<RankTimeline> ranks = ...;              // analyze/timeline.h
//   JobReport job = AnalyzeJob(ranks, AnalyzeOptions{});
//   job.ranks[0].busy_ns, job.ranks[0].idle_causes.host_wait_ns, job.imbalance, ...
//
// Every time is integer nanoseconds over the rank's GPU activity (kernels, memcpys, memsets on
// every stream; a simulated run's compute, communication and memory nodes).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/timeline.h"

namespace orrery {
namespace analyze {

struct AnalyzeOptions {
  // Idle time by cause: a gap shorter than this, not host-bound, is "kernel wait" (HTA's
  // consecutive_kernel_delay, 30 us by default there too).
  int64_t kernel_wait_ns = 30000;
  // CUDA launch statistics: a launch delay (kernel start - runtime call end) longer than this
  // is an outlier (HTA's launch_delay_cutoff, 100 us), and so is a runtime call longer than
  // runtime_cutoff (HTA's, 50 us).
  int64_t launch_delay_cutoff_ns = 100000;
  int64_t runtime_cutoff_ns = 50000;
  int top_kernels = 10;
  // Rank imbalance: a rank whose busy or compute time is more than this fraction above the
  // ranks' median is a straggler candidate.
  double straggler_tolerance = 0.05;
};

struct IdleCauses {
  int64_t host_wait_ns = 0;    // the GPU waited for the host to launch the next op
  int64_t kernel_wait_ns = 0;  // a short gap between back-to-back ops
  int64_t other_ns = 0;        // anything else (waiting on another stream, an event, ...)
};

struct StreamIdle {
  int64_t stream = -1;
  IdleCauses causes;
};

struct KernelStat {
  std::string name;
  Category category = Category::kCompute;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
};

struct CategoryTotals {
  int64_t count = 0;
  int64_t sum_ns = 0;  // durations summed (overlaps counted twice)
};

struct LaunchStats {
  bool available = false;  // measured profiles only
  int64_t launches = 0;    // GPU ops with a known runtime call
  double delay_mean_ns = 0;
  int64_t delay_p50_ns = 0;
  int64_t delay_p95_ns = 0;
  int64_t delay_max_ns = 0;
  int64_t delay_outliers = 0;    // delay > launch_delay_cutoff
  int64_t runtime_outliers = 0;  // runtime call > runtime_cutoff
  int64_t short_kernels = 0;     // GPU op shorter than the call that launched it
  int64_t short_kernel_ns = 0;   // their GPU time
};

struct CriticalPathSummary {
  std::string source;  // "recorded" (the simulator's), "derived" (from the profile) or ""
  int64_t total_ns = 0;
  int64_t segments = 0;
  std::map<std::string, int64_t> by_kind_ns;  // compute, communication, memory, host, idle
};

struct RankReport {
  int rank = 0;
  std::string source;
  bool simulated = false;
  int64_t first_ns = 0;          // first start
  int64_t span_ns = 0;           // first start to last end
  int64_t busy_ns = 0;           // measure of the union of all activity
  int64_t idle_ns = 0;           // span - busy
  int64_t compute_ns = 0;        // union of compute
  int64_t communication_ns = 0;  // union of communication
  int64_t memory_ns = 0;         // union of memory
  int64_t overlap_ns = 0;        // union of communication ∩ union of compute
  double comm_overlap_pct = 0;   // 100 overlap / communication (0 without communication)
  // The span split into disjoint parts (they add up to span_ns): compute; communication not
  // under compute (exposed); memory under neither; idle.
  int64_t exposed_communication_ns = 0;
  int64_t memory_only_ns = 0;
  CategoryTotals totals[3];             // by Category
  IdleCauses idle_causes;               // the rank's idle time (they add up to idle_ns)
  std::vector<StreamIdle> stream_idle;  // each stream's gaps between its own ops
  LaunchStats launch;
  std::vector<KernelStat> top_kernels;
  CriticalPathSummary critical_path;
};

struct SpreadStat {
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0;
  int64_t median_ns = 0;
  int min_rank = 0;
  int max_rank = 0;
};

struct Straggler {
  int rank = 0;
  std::string reason;
};

struct JobReport {
  std::vector<RankReport> ranks;  // by rank
  SpreadStat busy, compute, communication;
  std::vector<Straggler> stragglers;
  // Collectives matched by position (the k-th communication op of every rank, when every rank
  // has the same number): how often each rank started one last.
  int64_t matched_collectives = 0;
  std::map<int, int64_t> last_to_start;
};

RankReport AnalyzeRank(const RankTimeline& t, const AnalyzeOptions& o);
JobReport AnalyzeJob(const std::vector<RankTimeline>& ranks, const AnalyzeOptions& o);

}  // namespace analyze
}  // namespace orrery
