// RunSweep's stages: the output prefix, the table's columns, the rows kept from an earlier run
// (--resume, shards), every point prepared (sweep/point.h) and the sweep's cost checked, the
// points run side by side with each row written as it finishes, then the table in point order.
#include "sweep/sweep.h"

#include <omp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <set>

#include "report/breakdown.h"
#include "runner/estimate.h"
#include "runner/jobs_config.h"
#include "runner/run.h"
#include "sweep/files.h"
#include "sweep/point.h"
#include "sweep/table.h"

namespace orrery {

using sweep_internal::BaseFileOf;
using sweep_internal::BaseFingerprint;
using sweep_internal::CsvLine;
using sweep_internal::DirOf;
using sweep_internal::FileText;
using sweep_internal::GeneratedWorkloads;
using sweep_internal::Join;
using sweep_internal::kMetrics;
using sweep_internal::MakeDirs;
using sweep_internal::Prepared;
using sweep_internal::PreparePoint;
using sweep_internal::ReadTable;
using sweep_internal::Table;
using sweep_internal::WriteBaseFile;
using sweep_internal::WriteOutputs;

namespace {

// Whole parameter `name` of point `p` as a scalar: the point's value, else the base's ("").
std::string WholeValue(const SweepSpec& spec, const SweepPoint& p, const std::string& name) {
  for (const auto& [n, v] : p.params) {
    if (n == name) return YAML::Load(v).Scalar();
  }
  auto it = spec.base.find(name);
  return it == spec.base.end() ? "" : it->second;
}

// The per-job columns of a sweep whose points name jobs files: every job name of every point's
// file, in order of first appearance (point order, then the file's order), and whether any point
// runs its jobs alone too. Taken from every point, not one shard's, so shards share a header.
struct JobColumns {
  std::vector<std::string> names;
  bool alone = false;

  std::vector<std::string> Header() const {
    std::vector<std::string> h;
    for (const std::string& n : names) {
      h.push_back("job." + n + ".end_ns");
      if (alone) {
        h.push_back("job." + n + ".alone_ns");
        h.push_back("job." + n + ".sharing_percent");
      }
    }
    return h;
  }
};

StatusOr<JobColumns> JobColumnsOf(const SweepSpec& spec) {
  JobColumns c;
  std::set<std::string> read;
  for (const SweepPoint& p : spec.points) {
    const std::string file = WholeValue(spec, p, "jobs");
    if (file.empty()) continue;
    if (WholeValue(spec, p, "jobs-alone") == "true") c.alone = true;
    if (!read.insert(file).second) continue;
    StatusOr<std::vector<JobSpec>> jobs = LoadJobsFile(Join(spec.dir, file));
    if (!jobs.ok()) {
      return jobs.status().WithContext(spec.path + ": point " + std::to_string(p.index) +
                                       " names jobs file '" + file + "'");
    }
    for (const JobSpec& j : *jobs) {
      if (std::find(c.names.begin(), c.names.end(), j.name) == c.names.end()) {
        c.names.push_back(j.name);
      }
    }
  }
  return c;
}

// The parameter columns of point `p`'s row: its value of each of the spec's parameters, in
// column order, blank for those it does not set.
std::vector<std::string> ParamCells(const SweepSpec& spec, const SweepPoint& p) {
  std::vector<std::string> cells(spec.param_names.size());
  for (const auto& [name, value] : p.params) {
    cells[std::find(spec.param_names.begin(), spec.param_names.end(), name) -
          spec.param_names.begin()] = value;
  }
  return cells;
}

// The first point's estimate, times the points, against the sweep's budget: `jobs` points run
// side by side (their memory adds up), the wall time is the points' over the jobs. Ok when the
// first point cannot be estimated (its row will say why).
Status CheckSweepBudget(const Prepared& first, size_t points, int jobs, const SweepOptions& o,
                        SweepSummary* summary) {
  if (!first.error.empty()) return Status::Ok();
  RunOptions run = first.run;
  run.estimate_only = true;
  StatusOr<RunResult> r = RunSimulation(run);
  if (!r.ok() || !r->estimate) return Status::Ok();
  const RunCost& point = *r->estimate;
  const uint64_t side_by_side = std::min<uint64_t>(points, static_cast<uint64_t>(jobs));
  RunCost all = point;
  all.memory_bytes = point.memory_bytes > UINT64_MAX / side_by_side
                         ? UINT64_MAX
                         : point.memory_bytes * side_by_side;
  all.wall_seconds = point.wall_seconds * static_cast<double>(points) / side_by_side;
  summary->estimate_seconds = all.wall_seconds;
  summary->estimate =
      "estimate: " + std::to_string(points) + " points, " + std::to_string(side_by_side) +
      " at once: about " + HumanBytes(all.memory_bytes) + " of memory and " +
      HumanSeconds(all.wall_seconds) + " of wall time; the first point:\n" + DescribeRunCost(point);
  Status within = CheckRunBudget(all, o.budget);
  if (within.ok()) return within;
  return Status::Error("this sweep of " + std::to_string(points) + " points (" +
                       std::to_string(side_by_side) + " at once, --jobs) would take about " +
                       HumanSeconds(all.wall_seconds) + " and " + HumanBytes(all.memory_bytes) +
                       ", from its first point's estimate (" + HumanSeconds(point.wall_seconds) +
                       ", " + HumanBytes(point.memory_bytes) + "): " + within.message());
}

// The output prefix: --out, else the spec's 'output', else the spec's name beside it
// (".results"); a shard's own unless --out names it. Its directory is made when missing (as
// mkdir -p), whatever the workload: generated collectives and overridden configs made it on the
// way, a plain trace's points did not and every row failed to be written.
StatusOr<std::string> OutputPrefix(const SweepSpec& spec, const SweepOptions& o) {
  std::string out = !o.out.empty() ? o.out : spec.output;
  if (out.empty()) {
    std::string stem =
        spec.path.substr(spec.path.rfind('/') == std::string::npos ? 0 : spec.path.rfind('/') + 1);
    stem = stem.substr(0, stem.find('.'));
    out = Join(spec.dir, stem + ".results");
  }
  if (o.shards > 1 && o.out.empty()) {
    out += ".shard-" + std::to_string(o.shard) + "-of-" + std::to_string(o.shards);
  }
  if (const std::string dir = DirOf(out); !dir.empty() && dir != ".") {
    if (Status made = MakeDirs(dir); !made.ok()) {
      return Status::Error("the sweep's output " + out + " (" +
                           (o.out.empty() ? "the spec's 'output'" : std::string("--out")) +
                           "): " + made.message());
    }
  }
  return out;
}

// The columns: point, status, the parameters, the metrics, the per-job ones, error, warnings.
std::vector<std::string> Header(const SweepSpec& spec, const JobColumns& jobs) {
  std::vector<std::string> header = {"point", "status"};
  for (const std::string& p : spec.param_names) header.push_back(p);
  for (const std::string& m : kMetrics) header.push_back(m);
  for (const std::string& c : jobs.Header()) header.push_back(c);
  header.push_back("error");
  header.push_back("warnings");
  return header;
}

// With --resume, the rows already in the CSV (*previous): an error when its columns are another
// sweep's; none when they ran on another base.
Status ReadPrevious(const std::vector<std::string>& header, const std::string& fingerprint,
                    SweepSummary* summary, Table* previous) {
  Status s = ReadTable(summary->csv, previous, false);
  if (!s.ok()) return s;
  if (!previous->header.empty() && previous->header != header) {
    return Status::Error(summary->csv +
                         ": its columns differ from this spec's; it belongs to "
                         "another sweep (use another --out, or drop --resume)");
  }
  // Rows run on another base (an edited base, or a config file it names changed) are not
  // this spec's: every point runs again. Without PREFIX.base the rows are kept.
  if (!previous->rows.empty()) {
    const std::optional<std::string> before = FileText(summary->base);
    summary->base_unknown = !before;
    if (before && *before != fingerprint) {
      *previous = Table();  // and the CSV is written afresh
      summary->base_changed = true;
    }
  }
  return Status::Ok();
}

// The points this shard runs; the rows kept from `previous` go into *table.
std::vector<const SweepPoint*> PointsToRun(const SweepSpec& spec, const SweepOptions& o,
                                           const Table& previous, Table* table,
                                           SweepSummary* summary) {
  std::vector<const SweepPoint*> todo;
  for (const SweepPoint& p : spec.points) {
    // An earlier row is this point's only when its parameter columns are the point's, blanks
    // included: point i of an edited spec may set fewer parameters than the row's did.
    auto it = previous.rows.find(p.index);
    const std::vector<std::string> cells = ParamCells(spec, p);
    const bool same =
        it != previous.rows.end() && std::equal(cells.begin(), cells.end(), it->second.begin() + 2);
    if (p.index % o.shards != o.shard) {
      // Another shard's point: the file is rewritten whole, so its row (still this spec's) stays
      // as it was, for that shard's own --resume or for `sweep merge` to take.
      if (same) {
        table->rows[p.index] = it->second;
        ++summary->other_shards;
      }
      continue;
    }
    ++summary->points;
    if (same && it->second[1] == "ok") {  // finished cleanly: keep it
      table->rows[p.index] = it->second;
      ++summary->skipped;
      continue;
    }
    todo.push_back(&p);
  }
  return todo;
}

// The cells after a finished point's parameters: its metrics, its jobs', a blank error and its
// warnings.
std::vector<std::string> ResultCells(const RunResult& r, const JobColumns& job_columns) {
  std::vector<std::string> row;
  // With jobs files, the means are over the NPUs that run a job, as a single run's summary.
  const std::vector<NpuBreakdown> working = WorkingNpuBreakdowns(r);
  const NpuBreakdown mean = MeanBreakdown(working);
  double overlap = 0;
  for (const NpuBreakdown& b : working) overlap += b.overlap_percent();
  const int n = std::max(1, static_cast<int>(working.size()));
  double alg = 0, bus = 0;
  const std::vector<CollectiveStat> colls = CollectiveStats(r);
  for (const CollectiveStat& c : colls) {
    alg += c.alg_bw_gbps;
    bus += c.bus_bw_gbps;
  }
  char buf[64];
  auto num = [&buf](double v) {
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  row.push_back(std::to_string(r.end.WholeNs()));
  row.push_back(std::to_string(mean.compute.WholeNs()));
  row.push_back(std::to_string(mean.communication.WholeNs()));
  row.push_back(std::to_string(mean.exposed.WholeNs()));
  row.push_back(num(overlap / n));
  row.push_back(colls.empty() ? "" : num(alg / colls.size()));
  row.push_back(colls.empty() ? "" : num(bus / colls.size()));
  const CriticalPathTotals path = CriticalPathTotalsOf(r);
  row.push_back(std::to_string(path.compute.WholeNs()));
  row.push_back(std::to_string(path.communication.WholeNs()));
  row.push_back(std::to_string(r.events));
  for (const std::string& name : job_columns.names) {
    auto job = std::find_if(r.jobs.begin(), r.jobs.end(),
                            [&](const JobResult& j) { return j.name == name; });
    const bool ran = job != r.jobs.end();
    row.push_back(ran ? std::to_string(job->finish.WholeNs()) : "");
    if (!job_columns.alone) continue;
    const bool alone = ran && job->alone.has_value();
    row.push_back(alone ? std::to_string(job->alone->WholeNs()) : "");
    row.push_back(alone ? num(job->SharingPercent()) : "");
  }
  row.push_back("");
  std::string warnings;  // what a single run prints as warnings, one after the other
  for (const std::string& w : r.warnings) warnings += (warnings.empty() ? "" : " | ") + w;
  std::replace(warnings.begin(), warnings.end(), '\n', ' ');
  row.push_back(warnings);
  return row;
}

// Point `p`'s row: its index, status and parameters, then its results or its error.
std::vector<std::string> RunPoint(const SweepSpec& spec, const SweepPoint& p,
                                  const Prepared& prepared, const JobColumns& job_columns) {
  std::vector<std::string> row = {std::to_string(p.index), "ok"};
  const std::vector<std::string> params = ParamCells(spec, p);
  row.insert(row.end(), params.begin(), params.end());
  StatusOr<RunResult> r = Status::Error(prepared.error);
  // No exception may leave the loop's body (it would end the program): a point that runs out
  // of memory is an error row, and the others still run.
  try {
    if (prepared.error.empty()) r = RunSimulation(prepared.run);
    if (r.ok() && prepared.jobs_alone) {
      Status alone = AddJobsAlone(prepared.run, &*r);
      if (!alone.ok()) r = alone;
    }
  } catch (const std::bad_alloc&) {
    r = Status::Error(kOutOfMemory);
  }
  if (r.ok()) {
    const std::vector<std::string> cells = ResultCells(*r, job_columns);
    row.insert(row.end(), cells.begin(), cells.end());
    return row;
  }
  row[1] = "error";
  const size_t blank = kMetrics.size() + job_columns.Header().size();
  for (size_t k = 0; k < blank; ++k) row.push_back("");
  std::string msg = r.status().message();
  std::replace(msg.begin(), msg.end(), '\n', ' ');
  row.push_back(msg);
  row.push_back("");
  return row;
}

// The CSV the rows go to as points finish (so an interruption keeps them), its header first
// when it is `fresh`.
StatusOr<std::FILE*> OpenRowStream(const std::string& csv, bool fresh,
                                   const std::vector<std::string>& header) {
  std::FILE* stream = std::fopen(csv.c_str(), fresh ? "w" : "a");
  if (stream == nullptr) return Status::Error(csv + ": cannot write: " + std::strerror(errno));
  if (fresh) {
    const std::string h = CsvLine(header);
    std::fwrite(h.data(), 1, h.size(), stream);
    std::fflush(stream);
  }
  return stream;
}

// Runs `todo` (prepared alike) on `jobs` threads, each row into *table and `stream` as it
// finishes.
void RunPoints(const SweepSpec& spec, const SweepOptions& o,
               const std::vector<const SweepPoint*>& todo, const std::vector<Prepared>& prepared,
               const JobColumns& job_columns, int jobs, std::FILE* stream, Table* table,
               SweepSummary* summary) {
  int done = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(jobs)
  for (size_t i = 0; i < todo.size(); ++i) {
    if (o.interrupted != nullptr && *o.interrupted) continue;
    const std::vector<std::string> row = RunPoint(spec, *todo[i], prepared[i], job_columns);
    const std::string line = CsvLine(row);
#pragma omp critical(sweep_output)
    {
      table->rows[todo[i]->index] = row;
      std::fwrite(line.data(), 1, line.size(), stream);
      std::fflush(stream);
      ++done;
      ++summary->ran;
      if (row[1] != "ok") ++summary->failed;
      if (o.progress) {
        std::fprintf(stderr, "\r  sweep: %d of %zu points done, %d failed ", done, todo.size(),
                     summary->failed);
        std::fflush(stderr);
      }
    }
  }
}

}  // namespace

StatusOr<SweepSummary> RunSweep(const SweepSpec& spec, const SweepOptions& o) {
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards) {
    return Status::Error("shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards) +
                         " is impossible; expected I/N with 0 <= I < N");
  }
  const StatusOr<std::string> out = OutputPrefix(spec, o);
  if (!out.ok()) return out.status();
  const StatusOr<JobColumns> job_columns = JobColumnsOf(spec);
  if (!job_columns.ok()) return job_columns.status();
  Table table;
  table.header = Header(spec, *job_columns);

  SweepSummary summary;
  summary.csv = *out + ".csv";
  summary.json = *out + ".json";
  summary.base = BaseFileOf(summary.csv);
  const std::string fingerprint = BaseFingerprint(spec);
  Table previous;
  if (o.resume) {
    if (Status s = ReadPrevious(table.header, fingerprint, &summary, &previous); !s.ok()) return s;
  }
  const std::vector<const SweepPoint*> todo = PointsToRun(spec, o, previous, &table, &summary);

  // Every point's files first, one at a time (generated workloads are shared). The sweep's cost
  // before any point runs: the first point's estimate times the points (runner/estimate.h);
  // every point's run checks its own share of the budget too.
  std::vector<Prepared> prepared;
  GeneratedWorkloads generated;
  const int jobs = o.jobs > 0 ? o.jobs : omp_get_num_procs();
  if (!todo.empty()) {
    prepared.push_back(PreparePoint(spec, *todo[0], *out, &generated));
    Status within = CheckSweepBudget(prepared[0], todo.size(), jobs, o, &summary);
    if (o.dry_run) {
      if (!within.ok()) summary.estimate += "past the budget: " + within.message() + "\n";
      return summary;
    }
    if (!within.ok()) return within;
  }
  for (size_t i = 1; i < todo.size(); ++i) {
    prepared.push_back(PreparePoint(spec, *todo[i], *out, &generated));
  }
  for (Prepared& pr : prepared) {
    pr.run.budget = o.budget;
    // Points run side by side share the memory.
    const uint64_t memory = o.budget.max_memory > 0 ? o.budget.max_memory : DefaultMemoryBudget();
    pr.run.budget.max_memory = std::max<uint64_t>(memory / static_cast<uint64_t>(jobs), 1);
  }

  // What these rows run on, for a later --resume to compare.
  if (Status s = WriteBaseFile(summary.base, fingerprint); !s.ok()) return s;
  if (!todo.empty()) {
    // The file is rewritten in point order at the end.
    StatusOr<std::FILE*> stream = OpenRowStream(summary.csv, previous.header.empty(), table.header);
    if (!stream.ok()) return stream.status();
    RunPoints(spec, o, todo, prepared, *job_columns, jobs, *stream, &table, &summary);
    std::fclose(*stream);
    if (o.progress) std::fprintf(stderr, "\n");
  }
  summary.interrupted = o.interrupted != nullptr && *o.interrupted;
  if (Status s = WriteOutputs(table, *out); !s.ok()) return s;
  return summary;
}

}  // namespace orrery
