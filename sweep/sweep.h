// Design-space sweeps: many independent simulations from one spec file.
//
//   StatusOr<SweepSpec> spec = LoadSweepSpec("configs/sweeps/torus_vs_dgx.yaml");
//   SweepOptions opt;  opt.jobs = 2;  opt.out = "results";   // results.csv, results.json
//   StatusOr<SweepSummary> s = RunSweep(*spec, opt);
//
// A spec names a base (system, network, memory configs, workload, backend) and what to vary: a
// full `grid` (cartesian product, first parameter varying slowest) or an explicit list of
// `points`. A parameter is `backend`, `system`/`network`/`memory`/`workload` (a whole file or
// trace prefix), `system.<key>`, `network.<key>`, `memory.<key>` (one key of that config), or
// `workload.collective` / `workload.size` (a whole number of bytes, 1 .. 2^53, in digits) for a
// generated single-collective workload, or `jobs` (a jobs file, runner/jobs_config.h) and
// `jobs-alone`, which add columns per job. Every point is an independent simulation; points run
// in parallel; each row of the output depends only on its point, so the files are identical
// whatever the number of jobs. See docs/sweeps.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"
#include "runner/estimate.h"

namespace orrery {

struct SweepPoint {
  int index = 0;
  std::vector<std::pair<std::string, std::string>> params;  // name -> YAML flow text, in order
  std::string Key() const;                                  // params as one string (resume)
};

struct SweepSpec {
  std::string path;                         // the spec file
  std::string dir;                          // its directory: relative paths are relative to it
  std::map<std::string, std::string> base;  // system, network, memory, workload, backend
  // A generated workload: one collective of `size` bytes per NPU (when base has no workload).
  std::string generate_collective;  // all_reduce | all_gather | reduce_scatter | all_to_all
  uint64_t generate_size = 0;
  std::vector<std::string> param_names;
  std::vector<SweepPoint> points;
  std::string output;  // default output prefix (spec key `output`), relative to dir
};

StatusOr<SweepSpec> LoadSweepSpec(const std::string& path);
// A spec's top-level keys and its base's keys, as declared (docs/sweeps.md lists them).
std::vector<KeyDoc> SweepSpecKeys();
std::vector<KeyDoc> SweepBaseKeys();

struct SweepOptions {
  int jobs = 0;     // 0 = all cores
  std::string out;  // output prefix; empty = the spec's
  // Keep the rows already in <out>.csv whose parameters are all the point's (blanks included) and
  // that finished ok; run the others. With shards, the rows of other shards' points that are
  // still this spec's stay in the file too.
  bool resume = false;
  int shard = 0;  // run points with index % shards == shard
  int shards = 1;
  bool progress = false;  // a progress line on stderr
  // Set by a signal handler (on whichever thread the signal lands) while the points' threads
  // read it: a lock-free atomic, as a volatile int is not between threads. Start no new points.
  const std::atomic<int>* interrupted = nullptr;
  // The sweep's budget (runner/estimate.h): its first point's estimate times the points must fit
  // (memory of the points run at once, wall time over the jobs), and each point's run must fit
  // its share. With dry_run, RunSweep stops after the estimate (SweepSummary::estimate).
  RunBudget budget;
  bool dry_run = false;
};

struct SweepSummary {
  int points = 0;   // in this shard
  int skipped = 0;  // already done (resume)
  // Rows of other shards' points kept from the output resumed (its rows whose parameters are
  // still those of the spec's point): a shard resuming a whole sweep's file leaves them there.
  int other_shards = 0;
  // With --resume: the rows in the output were run on another base (PREFIX.base differs from
  // this spec's base and its files), so none was kept.
  bool base_changed = false;
  // With --resume: the output has rows but no PREFIX.base (written before 2026-11-27, or merged
  // from shards without theirs), so they were kept unchecked.
  bool base_unknown = false;
  int ran = 0;
  int failed = 0;
  bool interrupted = false;
  std::string csv, json;        // files written
  std::string estimate;         // the sweep's estimated cost, as --dry-run prints it
  double estimate_seconds = 0;  // its wall time
  std::string base;             // PREFIX.base: what the rows ran on (--resume compares it)
};

StatusOr<SweepSummary> RunSweep(const SweepSpec& spec, const SweepOptions& options);

// Joins shard outputs (CSV) into <out>.csv and <out>.json, sorted by point; the same point twice
// with different rows is an error.
Status MergeSweepOutputs(const std::vector<std::string>& csv_files, const std::string& out);

// `orrery sweep ...` and `orrery sweep merge ...`; argv[0] is "sweep".
int SweepMain(int argc, char** argv);
// The flags of `orrery sweep` as docs/cli.md lists them (sweep/cli.cc declares them).
std::vector<KeyDoc> SweepFlagDocs();
// The flags of `orrery sweep merge`.
std::vector<KeyDoc> SweepMergeFlagDocs();

}  // namespace orrery
