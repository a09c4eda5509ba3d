// Where each rank of a trace runs. Two layouts:
// - Copies (`--replicate-trace`): an N-rank trace on a machine of K·N NPUs as K copies of the
//   traced job: the data-parallel scale-out of a job traced on a few GPUs, or K jobs sharing one
//   machine.
// - Jobs (`--jobs`): different traces on chosen NPUs of one machine, sharing its network; NPUs
//   of no job are idle (runner/jobs_config.h reads the file).
//
//   StatusOr<DataParallelGroups> dp = ParseDataParallelGroups("world,2");
//   Placement rep(/*ranks=*/8, /*copies=*/8, *dp);
//   rep.Rank(13) == 5; rep.Copy(13) == 1; rep.Npu(1, 5) == 13;
//   StatusOr<int> id = rep.Define(system, /*pg=*/2, {0, 2, 4, 6}, /*npu=*/13);
//
// NPU r runs rank r mod N of copy r / N. A send or receive stays inside its copy: rank p of the
// trace is NPU copy·N + p. So does a collective of a group that is not data-parallel (tensor- or
// pipeline-parallel groups): each copy gets its own instance of the group. A data-parallel group
// spans its ranks in every copy, {c·N + m : m in the group, c in 0..K-1}: the gradient
// all-reduce of a job traced with DP degree d runs with DP degree K·d. The world group (the
// collectives without a pg_name) is data-parallel unless the list leaves "world" out; then each
// copy's world is its own N NPUs, and `none` makes the copies K independent jobs. Jobs are
// copies of different traces, each on its own NPUs, with no data-parallel group.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "system/collective_engine.h"

namespace orrery {

// Which of a trace's communicator groups span every copy (`--dp-groups`).
struct DataParallelGroups {
  bool world = true;     // the collectives without a pg_name (or pg_name "0")
  std::set<int> groups;  // pg ids
};

// "world" (the default), "none", or a comma list of pg ids, with "world" among them for the
// world group: "world,2,3". An empty string is the default.
StatusOr<DataParallelGroups> ParseDataParallelGroups(const std::string& text);
// As the flag would be written: "world,2,3", "none".
std::string FormatDataParallelGroups(const DataParallelGroups& dp);
// What --dp-groups takes, for messages: "'world', 'none', or a comma list of ...".
std::string DataParallelGroupsSyntax();

// One job of a --jobs run: its name and the NPU each of its ranks runs on.
struct JobPlacement {
  std::string name;
  std::vector<int> npus;  // rank r runs on npus[r]
};

class Placement {
 public:
  // --replicate-trace: `copies` copies of a trace of `ranks` ranks; copy c on NPUs c·N .. c·N+N-1.
  // With an `interleave` I dividing N (a trace manifest's, et_feeder/manifest.h), copy c's rank r
  // runs on NPU (r / I)·I·copies + c·I + r mod I instead (0 = N: the contiguous copies above).
  Placement(int ranks, int copies, DataParallelGroups dp, int interleave = 0);
  // The copies come from a trace manifest (its path, for messages and Describe).
  void set_manifest(std::string path) { manifest_ = std::move(path); }
  const std::string& manifest() const { return manifest_; }
  // Copies: the ranks of a copy that sit together (the constructor's interleave; ranks() when
  // the copies are contiguous). 0 with jobs.
  int interleave() const { return interleave_; }
  // --jobs: job j (copy j) runs its ranks on its NPUs; NPUs of no job are idle; no group spans
  // jobs (each job's world is its own NPUs). The NPU lists must be disjoint and in
  // [0, num_npus) (CheckJobs says so first).
  Placement(std::vector<JobPlacement> jobs, int num_npus);

  bool jobs() const { return !job_names_.empty(); }
  // --replicate-trace: the trace's ranks. With jobs, use RanksOf.
  int ranks() const { return copies() == 0 ? 0 : RanksOfCopy(0); }
  int copies() const { return static_cast<int>(copy_npus_.size()); }
  int num_npus() const { return static_cast<int>(rank_of_npu_.size()); }
  // The ranks of NPU `npu`'s copy (0 for an idle NPU).
  int RanksOf(int npu) const { return Idle(npu) ? 0 : RanksOfCopy(Copy(npu)); }
  int RanksOfCopy(int copy) const { return static_cast<int>(copy_npus_[copy].size()); }
  // Copy `copy`'s NPUs, rank r on the r-th.
  const std::vector<int>& CopyNpus(int copy) const { return copy_npus_[copy]; }
  bool Idle(int npu) const { return copy_of_npu_[npu] < 0; }
  int Rank(int npu) const { return rank_of_npu_[npu]; }
  int Copy(int npu) const { return copy_of_npu_[npu]; }
  int Npu(int copy, int rank) const { return copy_npus_[copy][rank]; }
  // Which loaded trace NPU `npu` runs: its rank for copies of one trace, job j's rank r is
  // TraceBase(j) + r with jobs; -1 for an idle NPU. num_traces() traces in all.
  int TraceIndex(int npu) const { return Idle(npu) ? -1 : trace_base_[Copy(npu)] + Rank(npu); }
  int num_traces() const { return num_traces_; }
  // With jobs: job `copy`'s name.
  const std::string& JobName(int copy) const { return job_names_[copy]; }
  bool IsDataParallel(int pg) const { return pg == 0 ? dp_.world : dp_.groups.count(pg) > 0; }
  const DataParallelGroups& data_parallel() const { return dp_; }
  // For messages: why a rank must be one of its copy's: "--replicate-trace keeps sends and
  // receives inside a copy" / "--jobs keeps sends and receives inside a job".
  std::string Scope() const;
  // "copy 1, rank 5" / "job 'b', rank 5" for NPU names in messages.
  std::string NameOf(int npu) const;

  // Forgets every group defined so far, for another simulation of the same placement.
  void ForgetGroups() {
    ids_.clear();
    next_id_ = 1;
  }
  // The system-layer group (0 = every NPU) that trace group `pg` (0 = the trace's world) is for
  // NPU `npu`, or nullopt when no comm-group file or METADATA node has defined it yet. A
  // per-copy world is defined on first use.
  std::optional<int> Find(SystemLayer& system, int pg, int npu);
  // As Find, without defining anything: for reading a finished run.
  std::optional<int> Lookup(int pg, int npu) const;
  // Defines trace group `pg` (> 0) of `members` (trace ranks) for NPU `npu`'s copy, or for
  // every copy at once when it is data-parallel, unless it is defined already; returns its
  // system-layer id. Ids are given out in definition order, so a run stays deterministic.
  StatusOr<int> Define(SystemLayer& system, int pg, const std::vector<int>& members, int npu);
  // The NPU that rank `rank` of the trace is in NPU `npu`'s copy (a negative rank, meaning
  // "none", stays as it is): a send's destination, a receive's source.
  int PeerNpu(int npu, int64_t rank) const;
  // Where the root of a rooted collective (trace rank `root`, -1 = the group's first member) of
  // trace group `pg` runs for NPU `npu`: in copy 0 for a data-parallel group (every copy names
  // the same root), else in the NPU's own copy.
  int RootNpu(int pg, int root, int npu) const;

  // System-layer group `id` in the user's words: "communicator group 7 of job 'a'", "job 'a''s
  // NPUs" (its world), "data-parallel group 3 (every copy)", "copy 1's NPUs".
  std::string GroupName(int id) const;
  // The pg ids of --dp-groups that no comm-group file or METADATA node defined (for a warning).
  std::vector<int> UndefinedDataParallelGroups() const;
  // One line for the summary: "trace of 8 ranks run as 8 copies on 64 NPUs; data-parallel
  // groups: world 2", or "2 jobs on 16 NPUs: 'a' on NPUs 0-7, 'b' on NPUs 8-11; 4 idle".
  std::string Describe() const;

 private:
  StatusOr<int> Add(SystemLayer& system, int pg, int copy, std::vector<int> members);

  DataParallelGroups dp_;
  std::vector<std::string> job_names_;       // --jobs: copy -> job name; empty for copies
  std::vector<std::vector<int>> copy_npus_;  // copy -> its NPUs by rank
  std::vector<int> trace_base_;              // copy -> index of its rank 0's trace
  std::vector<int> copy_of_npu_;             // NPU -> copy, -1 idle
  std::vector<int> rank_of_npu_;             // NPU -> rank, -1 idle
  int num_traces_ = 0;
  // (pg, copy) -> system-layer group id; copy -1 for a data-parallel group.
  std::map<std::pair<int, int>, int> ids_;
  int next_id_ = 1;
  int interleave_ = 0;
  std::string manifest_;  // the trace manifest the copies come from; "" for --replicate-trace
};

// "0-7,16-23": an NPU list, sorted, written as ranges (as --npu-compute-scale reads them).
std::string FormatNpuRanges(std::vector<int> npus);

}  // namespace orrery
