// Running an N-rank trace on a machine of K·N NPUs as K copies of the traced job
// (`--replicate-trace`): the data-parallel scale-out of a job traced on a few GPUs, or K jobs
// sharing one machine.
//
//   StatusOr<DataParallelGroups> dp = ParseDataParallelGroups("world,2");
//   Replication rep(/*ranks=*/8, /*copies=*/8, *dp);
//   rep.Rank(13) == 5; rep.Copy(13) == 1; rep.Npu(1, 5) == 13;
//   StatusOr<int> id = rep.Define(system, /*pg=*/2, {0, 2, 4, 6}, /*npu=*/13);
//
// NPU r runs rank r mod N of copy r / N. A send or receive stays inside its copy: rank p of the
// trace is NPU copy·N + p. So does a collective of a group that is not data-parallel (tensor- or
// pipeline-parallel groups): each copy gets its own instance of the group. A data-parallel group
// spans its ranks in every copy, {c·N + m : m in the group, c in 0..K-1}: the gradient
// all-reduce of a job traced with DP degree d runs with DP degree K·d. The world group (the
// collectives without a pg_name) is data-parallel unless the list leaves "world" out; then each
// copy's world is its own N NPUs, and `none` makes the copies K independent jobs.
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

class Replication {
 public:
  Replication(int ranks, int copies, DataParallelGroups dp);

  int ranks() const { return ranks_; }
  int copies() const { return copies_; }
  int num_npus() const { return ranks_ * copies_; }
  int Rank(int npu) const { return npu % ranks_; }
  int Copy(int npu) const { return npu / ranks_; }
  int Npu(int copy, int rank) const { return copy * ranks_ + rank; }
  bool IsDataParallel(int pg) const { return pg == 0 ? dp_.world : dp_.groups.count(pg) > 0; }
  const DataParallelGroups& data_parallel() const { return dp_; }

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

  // The pg ids of --dp-groups that no comm-group file or METADATA node defined (for a warning).
  std::vector<int> UndefinedDataParallelGroups() const;
  // One line for the summary: "trace of 8 ranks run as 8 copies on 64 NPUs; data-parallel
  // groups: world 2".
  std::string Describe() const;

 private:
  StatusOr<int> Add(SystemLayer& system, int pg, int copy, std::vector<int> members);

  int ranks_;
  int copies_;
  DataParallelGroups dp_;
  // (pg, copy) -> system-layer group id; copy -1 for a data-parallel group.
  std::map<std::pair<int, int>, int> ids_;
  int next_id_ = 1;
};

}  // namespace orrery
