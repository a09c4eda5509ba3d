// `orrery sweep SPEC.yaml [--jobs N] [--out PREFIX] [--resume] [--shard I/N] [--quiet]`
// `orrery sweep merge --out PREFIX SHARD.csv...`
#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "common/flags.h"
#include "config/flag_schema.h"
#include "sweep/sweep.h"

namespace orrery {

namespace {

namespace po = boost::program_options;

std::atomic<int> g_interrupted{0};
static_assert(std::atomic<int>::is_always_lock_free, "g_interrupted is set in a signal handler");

extern "C" void OnInterrupt(int) { g_interrupted = 1; }

int Fail(const std::string& m) {
  std::fprintf(stderr, "error: %s\n", m.c_str());
  return 1;
}

// A count in digits (no sign, no spaces) that fits an int.
bool ParseCount(const std::string& s, int* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v > std::numeric_limits<int>::max()) return false;
  *out = static_cast<int>(v);
  return true;
}

// "I/N" with 0 <= I < N, both ints (a wider N would wrap: 0/4294967297 is not 0/1).
bool ParseShard(const std::string& s, int* shard, int* shards) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos) return false;
  int i = 0, n = 0;
  if (!ParseCount(s.substr(0, slash), &i) || !ParseCount(s.substr(slash + 1), &n)) return false;
  if (n < 1 || i >= n) return false;
  *shard = i;
  *shards = n;
  return true;
}

std::string ShardSyntax() {
  return "I/N, whole numbers with 0 <= I < N <= " + std::to_string(std::numeric_limits<int>::max());
}

// The flags of `orrery sweep merge`.
struct MergeFlags {
  std::string out;
  std::vector<std::string> files;
};

const FlagSchema<MergeFlags>& MergeFlagSchema() {
  static const FlagSchema<MergeFlags>* schema = [] {
    using F = MergeFlags;
    auto* s = new FlagSchema<F>();
    s->String("out", &F::out).Default("required").Help("write PREFIX.csv and PREFIX.json");
    s->Repeated("files", &F::files).Help("shard CSV files (or give them as the arguments)");
    return s;
  }();
  return *schema;
}

int MergeMain(int argc, char** argv) {
  po::options_description desc("orrery sweep merge --out PREFIX SHARD.csv...");
  desc.add_options()("help,h", "print this help");
  MergeFlagSchema().AddTo(&desc);
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc, &pos), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail(std::string("sweep merge: ") + e.what() + " (see orrery sweep merge --help)");
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  MergeFlags f;
  if (const Status flags = MergeFlagSchema().Apply(vm, &f); !flags.ok()) {
    return Fail(flags.WithContext("sweep merge").message());
  }
  const std::string& out = f.out;
  const std::vector<std::string>& files = f.files;
  if (out.empty()) return Fail("sweep merge: --out PREFIX is required");
  const Status s = MergeSweepOutputs(files, out);
  if (!s.ok()) return Fail(s.message());
  std::printf("merged %zu files into %s.csv and %s.json\n", files.size(), out.c_str(), out.c_str());
  return 0;
}

// The flags of `orrery sweep`, one field each; the defaults are the flags'.
struct SweepFlags {
  std::string spec;
  int jobs = 0;
  std::string out;
  bool resume = false;
  std::string shard;
  bool quiet = false;
  bool dry_run = false;
  std::string max_memory;
  bool force = false;
};

const FlagSchema<SweepFlags>& SweepFlagSchema() {
  static const FlagSchema<SweepFlags>* schema = [] {
    using F = SweepFlags;
    auto* s = new FlagSchema<F>();
    s->Integer("jobs", &F::jobs).Min(0).Max(4096).Help("points run at once; 0 = all cores");
    s->String("out", &F::out).Help("output prefix: PREFIX.csv, PREFIX.json (none: the spec's)");
    s->Switch("resume", &F::resume)
        .Help(
            "keep finished points already in PREFIX.csv (a row whose parameters are all the "
            "point's); with --shard, other shards' rows stay in the file");
    s->String("shard", &F::shard)
        .Check([](const std::string& v) {
          int i = 0, n = 0;
          return ParseShard(v, &i, &n) ? "" : ShardSyntax();
        })
        .Help(
            "run slice I of N (points with index % N == I), e.g. 0/4; none: from "
            "SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT when set");
    s->Switch("quiet", &F::quiet).Help("no progress line");
    s->Switch("dry-run", &F::dry_run)
        .Help("print the sweep's estimated cost (its first point's, times the points) and stop");
    s->String("max-memory", &F::max_memory)
        .Unit("bytes")
        .Help(
            "the memory the points run at once may be estimated to need, e.g. 16G (none: the "
            "machine's available memory, at most 4 GiB)");
    s->Switch("force", &F::force).Help("run even when the estimated wall time is over an hour");
    s->String("spec", &F::spec).Help("the sweep spec (YAML); also the first word after sweep");
    return s;
  }();
  return *schema;
}

// The shard SLURM's array variables give (none set: o is left as it is); "" or a problem.
std::string ShardFromSlurm(SweepOptions* o) {
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (id == nullptr || count == nullptr) return "";
  const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
  const char* step = std::getenv("SLURM_ARRAY_TASK_STEP");  // --array=0-15:4
  int task = 0, first = 0, stride = 1;
  const bool ok =
      ParseCount(id, &task) && (min == nullptr || ParseCount(min, &first)) &&
      (step == nullptr || (ParseCount(step, &stride) && stride >= 1)) && task >= first &&
      (task - first) % stride == 0 &&
      ParseShard(std::to_string((task - first) / stride) + "/" + count, &o->shard, &o->shards);
  if (ok) return "";
  return "sweep: SLURM_ARRAY_TASK_ID=" + std::string(id) +
         (min != nullptr ? " (SLURM_ARRAY_TASK_MIN=" + std::string(min) + ")" : "") +
         (step != nullptr ? " (SLURM_ARRAY_TASK_STEP=" + std::string(step) + ")" : "") +
         " and SLURM_ARRAY_TASK_COUNT=" + count +
         " do not give a shard; expected (ID - MIN) / STEP and COUNT as " + ShardSyntax() +
         " (an array of evenly spaced ids, --array=A-B or A-B:S; for a list of ids give --shard "
         "I/N)";
}

// What a finished sweep prints; its exit code.
int ReportSweep(const SweepSummary& r, const SweepOptions& o) {
  std::printf("%d point%s: %d run, %d kept from an earlier run, %d failed; results in %s and %s\n",
              r.points, r.points == 1 ? "" : "s", r.ran, r.skipped, r.failed, r.csv.c_str(),
              r.json.c_str());
  if (r.base_changed) {
    std::printf(
        "  %s differs: the spec's base or a file it or a point names changed since those "
        "rows ran, so every point %sran again%s\n",
        r.base.c_str(), o.shards > 1 ? "of this shard " : "",
        o.shards > 1 ? " (the other shards' rows were dropped: resume them too)" : "");
  }
  if (r.base_unknown) {
    std::printf("  %s has no %s: its rows were kept without checking the files they ran on\n",
                r.csv.c_str(), r.base.c_str());
  }
  if (r.other_shards > 0) {
    std::printf("  %d row%s of other shards' points kept in %s\n", r.other_shards,
                r.other_shards == 1 ? "" : "s", r.csv.c_str());
  }
  if (r.interrupted) {
    std::fprintf(stderr, "interrupted: %d points not run; run again with --resume to finish them\n",
                 r.points - r.ran - r.skipped);
    return 130;
  }
  return r.failed > 0 ? 2 : 0;
}

}  // namespace

std::vector<KeyDoc> SweepFlagDocs() { return SweepFlagSchema().Docs(); }
std::vector<KeyDoc> SweepMergeFlagDocs() { return MergeFlagSchema().Docs(); }

int SweepMain(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "merge") return MergeMain(argc - 1, argv + 1);
  po::options_description desc(
      "orrery sweep SPEC.yaml: run every point of a design-space study (see docs/sweeps.md)");
  desc.add_options()("help,h", "print this help");
  SweepFlagSchema().AddTo(&desc);
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  try {
    po::store(ParseFlags(argc, argv, desc, &pos), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail(std::string("sweep: ") + e.what() + " (see orrery sweep --help)");
  }
  if (vm.count("help")) {
    std::printf(
        "usage: orrery sweep SPEC.yaml [options]\n       orrery sweep merge --out "
        "PREFIX SHARD.csv...\n\n");
    std::cout << desc << "\n";
    return 0;
  }
  SweepFlags f;
  const Status flags = SweepFlagSchema().Apply(vm, &f);
  if (!flags.ok()) return Fail(flags.WithContext("sweep").message());
  if (f.spec.empty()) return Fail("sweep: give the spec file: orrery sweep SPEC.yaml");
  SweepOptions o;
  o.dry_run = f.dry_run;
  o.budget.force = f.force;
  if (vm.count("max-memory")) {
    const Status set = SetMaxMemory(f.max_memory, "sweep: ", &o.budget);
    if (!set.ok()) return Fail(set.message());
  }
  o.jobs = f.jobs;
  o.out = f.out;
  o.resume = f.resume;
  if (!f.shard.empty()) {
    ParseShard(f.shard, &o.shard, &o.shards);
  } else if (const std::string bad = ShardFromSlurm(&o); !bad.empty()) {
    return Fail(bad);
  }
  StatusOr<SweepSpec> spec = LoadSweepSpec(f.spec);
  if (!spec.ok()) return Fail(spec.status().message());
  o.progress = !f.quiet;
  o.interrupted = &g_interrupted;
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  // Not silent about its size: the estimate first (RunSweep stops there when it is past the
  // budget), on stderr, with the points' progress.
  if (!f.dry_run && !f.quiet) {
    SweepOptions estimate = o;
    estimate.dry_run = true;
    estimate.progress = false;
    StatusOr<SweepSummary> e = RunSweep(*spec, estimate);
    // Only for a sweep of a minute or more (the first line says how long): small sweeps print
    // as they did.
    if (e.ok() && !e->estimate.empty() && e->estimate_seconds >= 60) {
      std::fprintf(stderr, "%s", e->estimate.substr(0, e->estimate.find('\n') + 1).c_str());
    }
  }
  StatusOr<SweepSummary> r = RunSweep(*spec, o);
  if (!r.ok()) return Fail(r.status().message());
  if (f.dry_run) {
    std::fputs(r->estimate.c_str(), stdout);
    return 0;
  }
  return ReportSweep(*r, o);
}

}  // namespace orrery
