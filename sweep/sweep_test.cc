#include "sweep/sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "et_feeder/writer.h"
#include "runner/run.h"

namespace orrery {
namespace {

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line, sep)) out.push_back(line);
  return out;
}

std::vector<std::string> Lines(const std::string& text) { return Split(text, '\n'); }

// The fields of a CSV line, a quoted field's commas and doubled quotes kept as text.
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (line[i] == '"') {
      quoted = !quoted;
    } else if (line[i] == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += line[i];
    }
  }
  return out;
}

// Column `name` of CSV row `line` under header line `header` ("" when absent).
std::string Column(const std::string& header, const std::string& line, const std::string& name) {
  const std::vector<std::string> names = CsvFields(header), row = CsvFields(line);
  for (size_t i = 0; i < names.size() && i < row.size(); ++i) {
    if (names[i] == name) return row[i];
  }
  return "";
}

// A 2 x 3 grid on a 4-NPU ring: bandwidth {50, 100} GB/s x all-reduce size {1, 2, 4} MiB.
std::string WriteSpec(const std::string& name, const std::string& extra_grid = "") {
  const std::string dir = Tmp(name);
  std::ofstream(dir + ".system.json") << R"({
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
    "collective-optimization": "localBWAware", "local-mem-bw": 1600 })";
  std::ofstream(dir + ".net.yml")
      << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  const std::string spec = dir + ".sweep.yaml";
  std::ofstream(spec) << "base:\n  system: " << name << ".system.json\n  network: " << name
                      << ".net.yml\n  workload: {collective: all_reduce, size: 1048576}\n"
                      << "  backend: analytical-unaware\n"
                      << "grid:\n  network.bandwidth: [[50.0], [100.0]]\n"
                      << "  workload.size: [1048576, 2097152, 4194304]\n"
                      << extra_grid;
  return spec;
}

SweepSummary RunPoints(const SweepSpec& spec, const std::string& out, int jobs, bool resume = false,
                       int shard = 0, int shards = 1) {
  SweepOptions o;
  o.jobs = jobs;
  o.out = out;
  o.resume = resume;
  o.shard = shard;
  o.shards = shards;
  StatusOr<SweepSummary> s = RunSweep(spec, o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : SweepSummary();
}

// Runs the shipped study `spec_file`, which has `points` points, on 2 threads: its CSV's lines
// (none if it does not load or has another number of points; every point must succeed).
std::vector<std::string> RunStudy(const std::string& spec_file, size_t points) {
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_file);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  if (!spec.ok()) return {};
  EXPECT_EQ(spec->points.size(), points) << spec_file;
  if (spec->points.size() != points) return {};
  const std::string out = Tmp(spec_file.substr(spec_file.rfind('/') + 1) + ".out");
  EXPECT_EQ(RunPoints(*spec, out, 2).failed, 0) << Slurp(out + ".csv");
  return Lines(Slurp(out + ".csv"));
}

TEST(Sweep, GridPointsEqualSeparateRuns) {
  StatusOr<SweepSpec> spec = LoadSweepSpec(WriteSpec("grid"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(spec->points.size(), 6u);
  EXPECT_EQ(spec->points[1].Key(), "network.bandwidth=[50.0];workload.size=2097152;");
  const SweepSummary s = RunPoints(*spec, Tmp("grid.out"), 2);
  EXPECT_EQ(s.ran, 6);
  EXPECT_EQ(s.failed, 0);
  const std::vector<std::string> lines = Lines(Slurp(Tmp("grid.out.csv")));
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0].rfind("point,status,network.bandwidth,workload.size,end_ns,", 0), 0u);
  // Each point against its own run: same network at that bandwidth, same workload size.
  int i = 0;
  for (const char* bw : {"50.0", "100.0"}) {
    for (const char* size : {"1048576", "2097152", "4194304"}) {
      const std::string dir = Tmp(std::string("single_") + bw + "_" + size);
      std::ofstream(dir + ".net.yml") << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ "
                                      << bw << " ]\nlatency: [ 500.0 ]\n";
      RunOptions o;
      o.workload = Tmp("grid.out.work/all_reduce_") + size + "_4/all_reduce";
      o.system_config = Tmp("grid.system.json");
      o.network_config = dir + ".net.yml";
      o.backend = Backend::kAnalyticalUnaware;
      StatusOr<RunResult> r = RunSimulation(o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      const std::string want = std::to_string(i) + ",ok,[" + bw + "]," + size + "," +
                               std::to_string(r->end.WholeNs()) + ",";
      EXPECT_EQ(lines[1 + i].rfind(want, 0), 0u) << lines[1 + i] << " vs " << want;
      // One collective and nothing else: the critical path is all communication.
      EXPECT_EQ(Column(lines[0], lines[1 + i], "critical_path_compute_ns"), "0") << lines[1 + i];
      EXPECT_EQ(Column(lines[0], lines[1 + i], "critical_path_communication_ns"),
                std::to_string(r->end.WholeNs()))
          << lines[1 + i];
      ++i;
    }
  }
  // Doubling the bandwidth shortens every size.
  EXPECT_NE(Slurp(Tmp("grid.out.json")).find("\"end_ns\": "), std::string::npos);
}

// The mean NPU's columns of a point whose NPUs add up past the end of simulated time (int64
// picoseconds): four NPUs of about 4.7e18 ps each (8e15 bytes, under the 2^53 a collective may
// have, at 2.5 GiB/s). Each mean equals the step time (every NPU
// communicates the whole step), not the saturated sum divided by four.
TEST(Sweep, MeanColumnsDoNotSaturate) {
  const std::string spec_path = WriteSpec("long");
  std::string text = Slurp(spec_path);
  text.replace(text.find("grid:"), std::string::npos,
               "points:\n  - {workload.size: 8000000000000000, network.bandwidth: [2.5]}\n");
  std::ofstream(spec_path) << text;
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const std::string out = Tmp("long.out");
  RunPoints(*spec, out, 1);
  const std::vector<std::string> lines = Lines(Slurp(out + ".csv"));
  ASSERT_GE(lines.size(), 2u);
  const std::string end = Column(lines[0], lines[1], "end_ns");
  ASSERT_GT(end.size(), 15u) << lines[1];  // past 4.6e15 ns: four of them overflow int64 ps
  EXPECT_EQ(Column(lines[0], lines[1], "communication_ns"), end) << lines[1];
  EXPECT_EQ(Column(lines[0], lines[1], "exposed_communication_ns"), end) << lines[1];
}

// A point that cannot run says why in its own words: a collective the generator does not write,
// a base file that does not exist (not yaml-cpp's "bad file"). A size past what a collective may
// have is refused when the spec loads (WorkloadSizesAreCheckedWhenTheSpecLoads).
TEST(Sweep, PointErrorsNameTheSpecsValues) {
  const std::string spec_path = WriteSpec("point_errors");
  std::string text = Slurp(spec_path);
  text.replace(text.find("grid:"), std::string::npos,
               "points:\n  - {workload.collective: broadcast}\n"
               "  - {system.endpoint-delay: 1}\n");
  text.replace(text.find("system: point_errors.system.json"),
               std::string("system: point_errors.system.json").size(), "system: nope.json");
  std::ofstream(spec_path) << text;
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const std::string out = Tmp("point_errors.out");
  SweepOptions o;
  o.jobs = 1;
  o.out = out;
  ASSERT_TRUE(RunSweep(*spec, o).ok());
  const std::vector<std::string> lines = Lines(Slurp(out + ".csv"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(Column(lines[0], lines[1], "error")
                .find("workload collective 'broadcast'; expected all_reduce, all_gather, "
                      "reduce_scatter or all_to_all"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(Column(lines[0], lines[2], "error")
                .find("nope.json: no such file (the spec's system: "
                      "nope.json)"),
            std::string::npos)
      << lines[2];
}

// A quoted number set in a file by a point stays quoted in the point's copy, so the file's
// checks refuse it as they would in the file itself (the quotes had been dropped and "20" ran as
// 20); a quoted string stays a string.
TEST(Sweep, AQuotedNumberAPointSetsIsRefusedAsInTheFile) {
  const std::string spec_path = WriteSpec("quoted");
  std::string text = Slurp(spec_path);
  text.replace(text.find("grid:"), std::string::npos,
               "grid:\n  system.endpoint-delay: [\"20\", 20, \"0x14\"]\n"
               "  system.scheduling-policy: [\"FIFO\"]\n  workload.collective: [\"all_reduce\"]\n");
  std::ofstream(spec_path) << text;
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const SweepSummary s = RunPoints(*spec, Tmp("quoted.out"), 1);
  EXPECT_EQ(s.failed, 2);  // "20" and "0x14" (a number to strtod, as the file's reader takes it)
  const std::vector<std::string> lines = Lines(Slurp(Tmp("quoted.out.csv")));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(Column(lines[0], lines[3], "error").find("key 'endpoint-delay' is '0x14'"),
            std::string::npos)
      << lines[3];
  EXPECT_NE(
      Column(lines[0], lines[1], "error")
          .find(
              "key 'endpoint-delay' is '20'; expected a number in [0, 1000000000000] (ns), written "
              "without quotes"),
      std::string::npos)
      << lines[1];
  EXPECT_EQ(Column(lines[0], lines[2], "status"), "ok") << lines[2];
  // A quoted string is written as any string: the columns carry no quotes.
  EXPECT_EQ(Column(lines[0], lines[2], "system.scheduling-policy"), "FIFO") << lines[2];
  EXPECT_EQ(Column(lines[0], lines[2], "workload.collective"), "all_reduce") << lines[2];
  EXPECT_EQ(Column(lines[0], lines[1], "system.endpoint-delay"), "\"20\"") << lines[1];
}

// A base file that a point overrides is read whole: a second YAML document in it is the
// point's error (it had been dropped from the point's copy without a word).
TEST(Sweep, ABaseFileWithASecondDocumentIsThePointsError) {
  const std::string spec_path = WriteSpec("base_two_docs");
  std::string text = Slurp(spec_path);
  text.replace(text.find("grid:"), std::string::npos, "points:\n  - {system.endpoint-delay: 1}\n");
  std::ofstream(spec_path) << text;
  std::ofstream(Tmp("base_two_docs.system.json"), std::ios::app) << "\n---\nendpoint-delay: 5\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const std::string out = Tmp("base_two_docs.out");
  SweepOptions o;
  o.jobs = 1;
  o.out = out;
  ASSERT_TRUE(RunSweep(*spec, o).ok());
  const std::vector<std::string> lines = Lines(Slurp(out + ".csv"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(Column(lines[0], lines[1], "error").find("a second YAML document"), std::string::npos)
      << lines[1];
}

TEST(Sweep, OneAndTwoJobsGiveTheSameBytes) {
  StatusOr<SweepSpec> spec = LoadSweepSpec(WriteSpec("jobs"));
  ASSERT_TRUE(spec.ok());
  RunPoints(*spec, Tmp("jobs1"), 1);
  RunPoints(*spec, Tmp("jobs2"), 2);
  EXPECT_EQ(Slurp(Tmp("jobs1.csv")), Slurp(Tmp("jobs2.csv")));
  EXPECT_EQ(Slurp(Tmp("jobs1.json")), Slurp(Tmp("jobs2.json")));
  EXPECT_FALSE(Slurp(Tmp("jobs1.csv")).empty());
}

TEST(Sweep, TwoShardsMergedEqualTheWholeSweep) {
  StatusOr<SweepSpec> spec = LoadSweepSpec(WriteSpec("shards"));
  ASSERT_TRUE(spec.ok());
  RunPoints(*spec, Tmp("whole"), 2);
  EXPECT_EQ(RunPoints(*spec, Tmp("part0"), 1, false, 0, 2).ran, 3);
  EXPECT_EQ(RunPoints(*spec, Tmp("part1"), 1, false, 1, 2).ran, 3);
  ASSERT_TRUE(MergeSweepOutputs({Tmp("part1.csv"), Tmp("part0.csv")}, Tmp("merged")).ok());
  EXPECT_EQ(Slurp(Tmp("merged.csv")), Slurp(Tmp("whole.csv")));
  EXPECT_EQ(Slurp(Tmp("merged.json")), Slurp(Tmp("whole.json")));
}

TEST(Sweep, ResumeRunsOnlyWhatIsMissing) {
  StatusOr<SweepSpec> spec = LoadSweepSpec(WriteSpec("resume"));
  ASSERT_TRUE(spec.ok());
  RunPoints(*spec, Tmp("full"), 2);
  // An interrupted sweep: the header, points 0 and 3 done, and a row cut short mid-write.
  const std::vector<std::string> lines = Lines(Slurp(Tmp("full.csv")));
  std::ofstream(Tmp("cut.csv")) << lines[0] << "\n"
                                << lines[1] << "\n"
                                << lines[4] << "\n"
                                << lines[2].substr(0, 9);
  const SweepSummary s = RunPoints(*spec, Tmp("cut"), 2, /*resume=*/true);
  EXPECT_EQ(s.skipped, 2);
  EXPECT_EQ(s.ran, 4);
  EXPECT_EQ(Slurp(Tmp("cut.csv")), Slurp(Tmp("full.csv")));
  // Nothing left: a second resume runs nothing.
  EXPECT_EQ(RunPoints(*spec, Tmp("cut"), 2, true).ran, 0);
}

// Rows run on another base are not reused: an edit to a file the base names (the system file's
// endpoint-delay) or to the base itself runs every point again, as a fresh sweep would (the
// rows had been kept, their parameters being the points'). An unchanged base keeps them all.
TEST(Sweep, ResumeRunsEveryPointAgainWhenTheBaseChanged) {
  const std::string path = WriteSpec("rebase");
  StatusOr<SweepSpec> spec = LoadSweepSpec(path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  RunPoints(*spec, Tmp("rebase.out"), 2);
  SweepSummary s = RunPoints(*spec, Tmp("rebase.out"), 2, /*resume=*/true);
  EXPECT_FALSE(s.base_changed);
  EXPECT_EQ(s.skipped, 6);
  EXPECT_EQ(s.ran, 0);
  const std::string system = Tmp("rebase") + ".system.json";
  std::string text = Slurp(system);
  text.replace(text.find("\"endpoint-delay\": 10"), 20, "\"endpoint-delay\": 90");
  std::ofstream(system) << text;
  s = RunPoints(*spec, Tmp("rebase.out"), 2, /*resume=*/true);
  EXPECT_TRUE(s.base_changed);
  EXPECT_EQ(s.skipped, 0);
  EXPECT_EQ(s.ran, 6);
  RunPoints(*spec, Tmp("rebase.fresh"), 2);
  EXPECT_EQ(Slurp(Tmp("rebase.out.csv")), Slurp(Tmp("rebase.fresh.csv")));
  EXPECT_EQ(Slurp(Tmp("rebase.out.json")), Slurp(Tmp("rebase.fresh.json")));
  // The base itself: another backend.
  std::string spec_text = Slurp(path);
  spec_text.replace(spec_text.find("analytical-unaware"), 18, "analytical-aware");
  std::ofstream(path) << spec_text;
  StatusOr<SweepSpec> aware = LoadSweepSpec(path);
  ASSERT_TRUE(aware.ok()) << aware.status().message();
  s = RunPoints(*aware, Tmp("rebase.out"), 2, /*resume=*/true);
  EXPECT_TRUE(s.base_changed);
  EXPECT_EQ(s.ran, 6);
}

// The files the points name are part of the base too: a grid over network files, one of which
// is edited, runs every point again; shards merged carry their common PREFIX.base, and shards
// run on different files are not merged.
TEST(Sweep, ResumeSeesFilesThePointsNameAndMergeKeepsTheBase) {
  const std::string dir = Tmp("filebase");
  WriteSpec("filebase");  // the system file
  std::ofstream(dir + ".a.yml")
      << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  std::ofstream(dir + ".b.yml")
      << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 25.0 ]\nlatency: [ 500.0 ]\n";
  const std::string path = dir + ".files.yaml";
  std::ofstream(path) << "base:\n  system: filebase.system.json\n"
                      << "  workload: {collective: all_reduce, size: 1048576}\n"
                      << "grid:\n  network: [filebase.a.yml, filebase.b.yml]\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  RunPoints(*spec, Tmp("filebase.out"), 1);
  std::ofstream(dir + ".b.yml")
      << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 10.0 ]\nlatency: [ 500.0 ]\n";
  SweepSummary s = RunPoints(*spec, Tmp("filebase.out"), 1, /*resume=*/true);
  EXPECT_TRUE(s.base_changed);
  EXPECT_EQ(s.ran, 2);
  RunPoints(*spec, Tmp("filebase.fresh"), 1);
  EXPECT_EQ(Slurp(Tmp("filebase.out.csv")), Slurp(Tmp("filebase.fresh.csv")));

  // Shards, then merge: the merged output has their base, and resuming it keeps every row.
  RunPoints(*spec, Tmp("filebase.s0"), 1, false, 0, 2);
  RunPoints(*spec, Tmp("filebase.s1"), 1, false, 1, 2);
  ASSERT_TRUE(
      MergeSweepOutputs({Tmp("filebase.s0.csv"), Tmp("filebase.s1.csv")}, Tmp("filebase.merged"))
          .ok());
  EXPECT_EQ(Slurp(Tmp("filebase.merged.base")), Slurp(Tmp("filebase.s0.base")));
  s = RunPoints(*spec, Tmp("filebase.merged"), 1, /*resume=*/true);
  EXPECT_FALSE(s.base_changed);
  EXPECT_EQ(s.skipped, 2);
  // A shard run after an edit: not merged with one run before it.
  std::ofstream(dir + ".a.yml")
      << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 40.0 ]\nlatency: [ 500.0 ]\n";
  RunPoints(*spec, Tmp("filebase.s1"), 1, false, 1, 2);
  const Status merged =
      MergeSweepOutputs({Tmp("filebase.s0.csv"), Tmp("filebase.s1.csv")}, Tmp("filebase.m2"));
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.message().find("the shards ran on different base files"), std::string::npos)
      << merged.message();
}

// A trace rewritten under the same prefix is a changed base: --resume runs every point again,
// whether the base names the prefix or a jobs file a point names does (its rows had been kept).
TEST(Sweep, ResumeSeesATraceRewrittenUnderItsName) {
  const std::string name = "retrace";
  const std::string prefix = Tmp(name);
  WriteSpec(name);  // the system and network files: a ring of 4 NPUs
  auto write_trace = [&](uint64_t bytes) {
    const std::vector<std::vector<ChakraProtoMsg::Node>> ranks(
        4, {et::MakeCollNode(1, "grad", ChakraProtoMsg::ALL_REDUCE, bytes)});
    ASSERT_TRUE(et::WriteRankFiles(prefix + ".trace", ranks).ok());
  };
  write_trace(1 << 20);
  std::ofstream(prefix + ".jobs.yaml") << "jobs:\n  - {name: a, workload: " << name << ".trace}\n";
  const std::string direct = prefix + ".direct.yaml", jobs = prefix + ".viajobs.yaml";
  std::ofstream(direct) << "base:\n  system: " << name << ".system.json\n  network: " << name
                        << ".net.yml\n  workload: " << name << ".trace\n"
                        << "grid:\n  network.bandwidth: [[50.0], [100.0]]\n";
  std::ofstream(jobs) << "base:\n  system: " << name << ".system.json\n  network: " << name
                      << ".net.yml\n"
                      << "points:\n  - {jobs: " << name << ".jobs.yaml}\n";
  for (const std::string& path : {direct, jobs}) {
    StatusOr<SweepSpec> spec = LoadSweepSpec(path);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    const std::string out = path + ".out";
    write_trace(1 << 20);
    RunPoints(*spec, out, 1);
    EXPECT_FALSE(RunPoints(*spec, out, 1, /*resume=*/true).base_changed) << path;
    write_trace(8 << 20);  // the same rank files, rewritten with another size
    const SweepSummary s = RunPoints(*spec, out, 1, /*resume=*/true);
    EXPECT_TRUE(s.base_changed) << path;
    EXPECT_EQ(s.skipped, 0) << path;
    RunPoints(*spec, path + ".fresh", 1);
    EXPECT_EQ(Slurp(out + ".csv"), Slurp(path + ".fresh.csv")) << path;
  }
}

// A custom collective's ETs, which the system file names, are part of the base: rewriting them
// runs every point again.
TEST(Sweep, ResumeSeesACustomCollectivesEts) {
  const std::string name = "recustom";
  const std::string prefix = Tmp(name);
  WriteSpec(name);  // the network file: a ring of 4 NPUs
  auto write_algorithm = [&](uint64_t bytes) {
    std::vector<std::vector<ChakraProtoMsg::Node>> ranks(4);
    for (int r = 0; r < 4; ++r) {
      ranks[r] = {et::MakeSendNode(1, (r + 1) % 4, bytes, 0),
                  et::MakeRecvNode(2, (r + 3) % 4, bytes, 0)};
    }
    ASSERT_TRUE(et::WriteRankFiles(prefix + ".algo", ranks).ok());
  };
  write_algorithm(4096);
  std::ofstream(prefix + ".custom.json")
      << R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1, "all-reduce-implementation-custom": ")"
      << prefix << R"(.algo", "collective-optimization": "baseline", "local-mem-bw": 1600})";
  const std::string path = prefix + ".spec.yaml";
  std::ofstream(path) << "base:\n  system: " << name << ".custom.json\n  network: " << name
                      << ".net.yml\n  workload: {collective: all_reduce, size: 1048576}\n"
                      << "grid:\n  network.bandwidth: [[50.0], [100.0]]\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  RunPoints(*spec, Tmp("recustom.out"), 1);
  EXPECT_FALSE(RunPoints(*spec, Tmp("recustom.out"), 1, /*resume=*/true).base_changed);
  write_algorithm(8192);
  EXPECT_TRUE(RunPoints(*spec, Tmp("recustom.out"), 1, /*resume=*/true).base_changed);
}

// A row is reused only when all its parameter columns are the point's: point 0 of an edited spec
// that no longer sets network.bandwidth (so runs at the base's 50 GB/s) is run again, not taken
// from the row that ran it at 10 GB/s.
TEST(Sweep, ResumeReusesARowOnlyForThePointsWholeParameterSet) {
  const std::string path = WriteSpec("stale");
  std::string text = Slurp(path);
  text.replace(text.find("grid:"), std::string::npos,
               "points:\n  - {workload.size: 1048576, network.bandwidth: [10.0]}\n"
               "  - {workload.size: 2097152, network.bandwidth: [10.0]}\n");
  std::ofstream(path) << text;
  StatusOr<SweepSpec> before = LoadSweepSpec(path);
  ASSERT_TRUE(before.ok()) << before.status().message();
  RunPoints(*before, Tmp("stale.out"), 1);
  text.replace(text.find("  - {workload.size: 1048576, network.bandwidth: [10.0]}"),
               std::string("  - {workload.size: 1048576, network.bandwidth: [10.0]}").size(),
               "  - {workload.size: 1048576}");
  std::ofstream(path) << text;
  StatusOr<SweepSpec> after = LoadSweepSpec(path);
  ASSERT_TRUE(after.ok()) << after.status().message();
  ASSERT_EQ(after->param_names, before->param_names);  // same columns: the file is resumable
  const SweepSummary s = RunPoints(*after, Tmp("stale.out"), 1, /*resume=*/true);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.ran, 1);
  RunPoints(*after, Tmp("stale.fresh"), 1);
  const std::vector<std::string> lines = Lines(Slurp(Tmp("stale.out.csv")));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].rfind("0,ok,1048576,,", 0), 0u) << lines[1];
  EXPECT_EQ(Slurp(Tmp("stale.out.csv")), Slurp(Tmp("stale.fresh.csv")));
  EXPECT_EQ(Slurp(Tmp("stale.out.json")), Slurp(Tmp("stale.fresh.json")));
}

// A shard resuming a file that holds other shards' rows (a whole sweep's output) runs only its
// own missing points and leaves the others' rows in the file; a row whose parameters are no
// longer its point's is dropped, for its own shard to run again.
TEST(Sweep, AShardResumingAWholeSweepsFileKeepsTheOtherShardsRows) {
  StatusOr<SweepSpec> spec = LoadSweepSpec(WriteSpec("shard_resume"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  RunPoints(*spec, Tmp("shard_resume.whole"), 2);
  const std::string whole = Slurp(Tmp("shard_resume.whole.csv"));
  const std::vector<std::string> lines = Lines(whole);
  ASSERT_EQ(lines.size(), 7u);

  // Everything done: shard 0 of 2 keeps its 3 rows and shard 1's 3, and the file as it was.
  std::ofstream(Tmp("shard_resume.csv")) << whole;
  SweepSummary s = RunPoints(*spec, Tmp("shard_resume"), 1, true, 0, 2);
  EXPECT_EQ(s.points, 3);
  EXPECT_EQ(s.skipped, 3);
  EXPECT_EQ(s.ran, 0);
  EXPECT_EQ(s.other_shards, 3);
  EXPECT_EQ(Slurp(Tmp("shard_resume.csv")), whole);
  EXPECT_EQ(Slurp(Tmp("shard_resume.json")), Slurp(Tmp("shard_resume.whole.json")));

  // Point 2 (shard 0) and point 1 (shard 1) missing, point 3 (shard 1) with another bandwidth:
  // shard 0 runs point 2, keeps points 1 and 5 of shard 1 and drops the stale point 3.
  std::string stale = lines[4];
  stale.replace(stale.find("[100.0]"), 7, "[75.0]");
  std::ofstream(Tmp("shard_resume.csv")) << lines[0] << "\n"
                                         << lines[1] << "\n"
                                         << stale << "\n"
                                         << lines[5] << "\n"
                                         << lines[6] << "\n";
  s = RunPoints(*spec, Tmp("shard_resume"), 1, true, 0, 2);
  EXPECT_EQ(s.skipped, 2);
  EXPECT_EQ(s.ran, 1);
  EXPECT_EQ(s.other_shards, 1);
  EXPECT_EQ(Slurp(Tmp("shard_resume.csv")), lines[0] + "\n" + lines[1] + "\n" + lines[3] + "\n" +
                                                lines[5] + "\n" + lines[6] + "\n");
  // Shard 1 then runs its points 1 and 3: the whole sweep.
  s = RunPoints(*spec, Tmp("shard_resume"), 1, true, 1, 2);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.ran, 2);
  EXPECT_EQ(s.other_shards, 3);
  EXPECT_EQ(Slurp(Tmp("shard_resume.csv")), whole);
}

// workload.size, in the base or as a parameter, is a number of bytes a collective may have,
// written as an integer: anything else is named at its line when the spec loads (it was a
// "yaml-cpp: bad conversion" naming nothing when the point ran).
TEST(Sweep, WorkloadSizesAreCheckedWhenTheSpecLoads) {
  const std::string path = Tmp("sizes.sweep.yaml");
  const std::string expected =
      "; expected a whole number of bytes from 1 to 9007199254740992 (2^53), written in digits";
  std::ofstream(path) << "base: {system: a.json, network: b.yml, workload: {collective: "
                         "all_reduce, size: 1024}}\ngrid:\n  workload.size:\n"
                      << "    - 1e6\n    - -1\n    - 1.5\n    - true\n    - 1048576.0\n"
                      << "    - 18446744073709551616\n    - 9007199254740993\n    - 0\n"
                      << "    - \"1024\"\n    - 010\n    - [1]\n    - ~\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  const std::string m = spec.status().message();
  int line = 4;
  for (const char* bad : {"'1e6'", "'-1'", "'1.5'", "'true'", "'1048576.0'",
                          "'18446744073709551616'", "'9007199254740993'", "'0'"}) {
    EXPECT_NE(m.find(path + ":" + std::to_string(line++) + ": grid value of 'workload.size' is " +
                     bad + expected + "\n"),
              std::string::npos)
        << bad << "\n"
        << m;
  }
  EXPECT_NE(
      m.find(path + ":12: grid value of 'workload.size' is '1024'" + expected + " without quotes"),
      std::string::npos)
      << m;
  EXPECT_NE(m.find(path + ":13: grid value of 'workload.size' is '010'" + expected),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(path + ":14: grid value of 'workload.size' is [1]" + expected),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(path + ":15: grid value of 'workload.size' is empty" + expected),
            std::string::npos)
      << m;

  // Points are checked as the grid is, and the base's size as well.
  std::ofstream(path) << "base: {system: a.json, network: b.yml, workload: {collective: "
                         "all_reduce, size: \"1024\"}}\npoints:\n  - {workload.size: 1e6}\n";
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find(path + ":1: base workload size is '1024'" + expected +
                                         " without quotes"),
            std::string::npos)
      << spec.status().message();
  EXPECT_NE(
      spec.status().message().find(path + ":3: point value of 'workload.size' is '1e6'" + expected),
      std::string::npos)
      << spec.status().message();

  // Digits and 0x hex, from 1 byte to 2^53, load.
  std::ofstream(path) << "base: {system: a.json, network: b.yml, workload: {collective: "
                         "all_reduce, size: 0x100000}}\n"
                      << "grid: {workload.size: [1, 0x100000, 9007199254740992]}\n";
  spec = LoadSweepSpec(path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->generate_size, 1048576u);
  ASSERT_EQ(spec->points.size(), 3u);
  EXPECT_EQ(spec->points[2].Key(), "workload.size=9007199254740992;");
}

// --shard takes I/N as ints: 0/4294967297 is refused, not wrapped to 0/1.
TEST(Sweep, ShardsPastAnIntAreRefused) {
  const std::string spec = WriteSpec("shard_flag");
  for (const char* shard : {"0/4294967297", "4294967296/4294967297", "-1/2", "0/ 2", "1/1"}) {
    std::vector<std::string> args = {
        "sweep", spec, std::string("--shard=") + shard, "--out", Tmp("shard_flag.out"), "--quiet"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStderr();
    const int rc = SweepMain(static_cast<int>(argv.size()), argv.data());
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, 1) << shard;
    EXPECT_EQ(err, std::string("error: sweep: --shard is '") + shard +
                       "'; expected I/N, whole numbers with 0 <= I < N <= 2147483647\n");
  }
  EXPECT_NE(access(Tmp("shard_flag.out.csv").c_str(), F_OK), 0);  // nothing ran
}

TEST(Sweep, AFailingPointIsRecordedAndTheOthersRun) {
  StatusOr<SweepSpec> spec =
      LoadSweepSpec(WriteSpec("fail", "  network.latency: [[500.0], [-1.0]]\n"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(spec->points.size(), 12u);
  const SweepSummary s = RunPoints(*spec, Tmp("fail.out"), 2);
  EXPECT_EQ(s.ran, 12);
  EXPECT_EQ(s.failed, 6);
  const std::string csv = Slurp(Tmp("fail.out.csv"));
  EXPECT_NE(csv.find(",error,"), std::string::npos);
  EXPECT_NE(csv.find("latency"), std::string::npos) << csv;
}

// The shipped study loads: 6 networks x 2 collectives x 4 sizes, and its files exist.
TEST(Sweep, ExampleStudySpecLoads) {
  StatusOr<SweepSpec> spec = LoadSweepSpec("configs/sweeps/torus_vs_dgx.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->points.size(), 48u);
  EXPECT_EQ(spec->points[47].Key(),
            "network=torus_vs_dgx/dgx_1024.yml;workload.collective=all_to_all;"
            "workload.size=1073741824;");
  for (const char* f : {"torus_64", "torus_256", "torus_1024", "dgx_64", "dgx_256", "dgx_1024"}) {
    EXPECT_TRUE(std::ifstream(std::string("configs/sweeps/torus_vs_dgx/") + f + ".yml").good())
        << f;
  }
}

// The 64-NPU machine comparison runs end to end through the system layer on whole-machine
// networks (torus, DGX fat-tree); the NVSwitch machine wins the 1 GiB all-reduce.
TEST(Sweep, MachineComparisonRuns) {
  const std::vector<std::string> lines = RunStudy("configs/sweeps/machines_64.yaml", 4);
  ASSERT_EQ(lines.size(), 5u);
  auto end_ns = [](const std::string& line) {  // the column after network and collective
    std::stringstream ss(line);
    std::string field;
    for (int i = 0; i < 5; ++i) std::getline(ss, field, ',');
    return std::stoll(field);
  };
  EXPECT_LT(end_ns(lines[3]), end_ns(lines[1])) << lines[1] << "\n" << lines[3];
}

// Varying a system key of a machine profile: the point's copy of system.yaml lives in the
// sweep's output, so its relative 'nccl-model' (nccl.yaml beside the profile) is made absolute
// and NCCL's model still applies. A point that sets nccl-model itself names it relative to the
// spec.
TEST(Sweep, VaryingAProfileKeepsItsNcclModel) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  const std::string machine = std::string(cwd) + "/configs/machines/hgx-h100/";
  std::ofstream(Tmp("my_nccl.yaml")) << Slurp(machine + "nccl.yaml");
  const std::string spec_path = Tmp("profile.sweep.yaml");
  std::ofstream(spec_path) << "base:\n  system: " << machine
                           << "system.yaml\n  network: " << machine << "network.yaml\n"
                           << "  workload: {collective: all_reduce, size: 1048576}\n"
                           << "points:\n  - {system.endpoint-delay: 10}\n"
                           << "  - {system.endpoint-delay: 20}\n"
                           << "  - {system.endpoint-delay: 10, system.nccl-model: my_nccl.yaml}\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const SweepSummary s = RunPoints(*spec, Tmp("profile"), 1);
  EXPECT_EQ(s.failed, 0) << Slurp(Tmp("profile.csv"));
  const std::vector<std::string> lines = Lines(Slurp(Tmp("profile.csv")));
  ASSERT_EQ(lines.size(), 4u);
  auto end_ns = [&](const std::string& line) {
    const std::string v = Column(lines[0], line, "end_ns");
    return v.empty() ? -1LL : std::stoll(v);
  };
  // Point 0 is the profile as shipped: the same as a plain run of its files (NVLS's time).
  RunOptions o;
  o.system_config = machine + "system.yaml";
  o.network_config = machine + "network.yaml";
  o.workload = Tmp("profile.plain");
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks(
      8, {et::MakeCollNode(0, "all_reduce", ChakraProtoMsg::ALL_REDUCE, 1048576)});
  ASSERT_TRUE(et::WriteRankFiles(o.workload, ranks).ok());
  StatusOr<RunResult> plain = RunSimulation(o);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_FALSE(plain->nccl_choices.empty());
  EXPECT_EQ(end_ns(lines[1]), plain->end.WholeNs()) << lines[1];
  EXPECT_GT(end_ns(lines[2]), end_ns(lines[1])) << lines[2];
  EXPECT_EQ(end_ns(lines[3]), end_ns(lines[1])) << lines[3];
}

TEST(Sweep, VariesNcclAlgorithm) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  const std::string machine = std::string(cwd) + "/configs/machines/hgx-h100/";
  const std::string spec_path = Tmp("algo.sweep.yaml");
  std::ofstream(spec_path) << "base:\n  system: " << machine
                           << "system.yaml\n  network: " << machine << "network.yaml\n"
                           << "  workload: {collective: all_reduce, size: 67108864}\n"
                           << "grid:\n  nccl-algorithm: [auto, ring, nvls, rign]\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const SweepSummary s = RunPoints(*spec, Tmp("algo"), 1);
  EXPECT_EQ(s.failed, 1) << Slurp(Tmp("algo.csv"));
  const std::vector<std::string> lines = Lines(Slurp(Tmp("algo.csv")));
  ASSERT_EQ(lines.size(), 5u);
  auto column = [&](const std::string& line, const std::string& name) {
    return Column(lines[0], line, name);
  };
  // Each point is a plain run with the same --nccl-algorithm ("auto" = none given).
  RunOptions o;
  o.system_config = machine + "system.yaml";
  o.network_config = machine + "network.yaml";
  o.workload = Tmp("algo.plain");
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks(
      8, {et::MakeCollNode(0, "all_reduce", ChakraProtoMsg::ALL_REDUCE, 67108864)});
  ASSERT_TRUE(et::WriteRankFiles(o.workload, ranks).ok());
  const char* algorithms[] = {"", "ring", "nvls"};
  for (int i = 0; i < 3; ++i) {
    o.nccl_algorithm = algorithms[i];
    StatusOr<RunResult> plain = RunSimulation(o);
    ASSERT_TRUE(plain.ok()) << plain.status().message();
    EXPECT_EQ(column(lines[1 + i], "status"), "ok") << lines[1 + i];
    EXPECT_EQ(column(lines[1 + i], "end_ns"), std::to_string(plain->end.WholeNs())) << lines[1 + i];
  }
  // On this NVSwitch machine NCCL's choice for 64 MiB is NVLS, faster than ring.
  EXPECT_EQ(column(lines[1], "end_ns"), column(lines[3], "end_ns"));
  EXPECT_GT(std::stoll(column(lines[2], "end_ns")), std::stoll(column(lines[3], "end_ns")));
  // A misspelt algorithm fails its point, naming what is valid.
  EXPECT_NE(lines[4].find("rign"), std::string::npos) << lines[4];
  EXPECT_NE(lines[4].find("ring"), std::string::npos) << lines[4];
}

// A trace of 2 ranks swept over machines of 4 and 8 NPUs as copies (replicate-trace), with the
// world all-reduce data-parallel or each copy's own (dp-groups): each point equals the plain
// replicated run, and the data-parallel all-reduce slows as the copies grow.
TEST(Sweep, ReplicatesATraceOverNpuCounts) {
  const std::string name = "copies";
  const std::string prefix = Tmp(name);
  WriteSpec(name);  // the system and network files
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks(
      2, {et::MakeCompNode(1, "fwd", 5),
          et::MakeCollNode(2, "grad", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1})});
  ASSERT_TRUE(et::WriteRankFiles(prefix + ".trace", ranks).ok());
  const std::string spec_path = prefix + ".rep.yaml";
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  workload: " << name << ".trace\n"
                           << "  replicate-trace: true\n"
                           << "grid:\n  network.npus_count: [[4], [8]]\n"
                           << "  dp-groups: [world, none]\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const SweepSummary s = RunPoints(*spec, Tmp("copies.out"), 2);
  EXPECT_EQ(s.failed, 0) << Slurp(Tmp("copies.out.csv"));
  const std::vector<std::string> lines = Lines(Slurp(Tmp("copies.out.csv")));
  ASSERT_EQ(lines.size(), 5u);
  std::vector<long long> end(4);
  for (int i = 0; i < 4; ++i) {
    RunOptions o;
    o.system_config = prefix + ".system.json";
    o.network_config = Tmp("copies.npus.yml");
    std::ofstream(o.network_config) << "topology: [ Ring ]\nnpus_count: [ " << (i < 2 ? 4 : 8)
                                    << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
    o.workload = prefix + ".trace";
    o.replicate_trace = true;
    o.dp_groups = i % 2 == 0 ? "world" : "none";
    StatusOr<RunResult> plain = RunSimulation(o);
    ASSERT_TRUE(plain.ok()) << plain.status().message();
    EXPECT_EQ(Column(lines[0], lines[1 + i], "status"), "ok") << lines[1 + i];
    EXPECT_EQ(Column(lines[0], lines[1 + i], "end_ns"), std::to_string(plain->end.WholeNs()))
        << lines[1 + i];
    end[i] = plain->end.WholeNs();
  }
  // World all-reduce over 8 NPUs is slower than over 4; independent copies of 2 are the same
  // job whatever their number (a ring of 8 carries each copy's pair on its own links).
  EXPECT_GT(end[2], end[0]);
  EXPECT_LT(end[1], end[0]);

  // A data-parallel group nothing defines is the run's warning, kept in the point's row.
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  workload: " << name << ".trace\n"
                           << "  replicate-trace: true\n"
                           << "grid:\n  dp-groups: [world, 'world,33']\n";
  spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  RunPoints(*spec, Tmp("copies.warn"), 1);
  const std::vector<std::string> warned = Lines(Slurp(Tmp("copies.warn.csv")));
  ASSERT_EQ(warned.size(), 3u);
  EXPECT_EQ(Column(warned[0], warned[1], "warnings"), "");
  EXPECT_NE(warned[2].find("--dp-groups names communicator group 33"), std::string::npos)
      << warned[2];
  EXPECT_NE(Slurp(Tmp("copies.warn.json")).find("\"warnings\": \"--dp-groups names"),
            std::string::npos);

  // Bad values are named with their line when the spec loads, not point by point.
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  workload: " << name << ".trace\n"
                           << "  replicate-trace: yes please\n"
                           << "grid:\n  network.npus_count: [[4]]\n  dp-groups: [world, '', "
                              "'none,2']\n";
  spec = LoadSweepSpec(spec_path);
  ASSERT_FALSE(spec.ok());
  const std::string m = spec.status().message();
  // The base's keys and these values are checked by the base's schema, in its words.
  EXPECT_NE(
      m.find(spec_path + ":5: key 'replicate-trace' is 'yes please'; expected one of true, false"),
      std::string::npos)
      << m;
  EXPECT_NE(m.find(":8: grid value of 'dp-groups' is ''; expected 'world', 'none'"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(":8: grid value of 'dp-groups' is 'none,2'; expected 'world', 'none', or a "
                   "comma list"),
            std::string::npos)
      << m;
  // The parser's words say which item is wrong.
  EXPECT_NE(m.find("(--dp-groups: item 1 of 'none,2' is 'none', which stands alone"),
            std::string::npos)
      << m;

  // A generated collective is written for every NPU: copies of it are refused, point by point.
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  workload: {collective: all_reduce, size: 1048576}\n"
                           << "grid:\n  replicate-trace: [false, true]\n";
  spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const SweepSummary generated = RunPoints(*spec, Tmp("copies.gen"), 1);
  EXPECT_EQ(generated.failed, 1);
  EXPECT_NE(Slurp(Tmp("copies.gen.csv"))
                .find("replicate-trace is true, but the workload is a generated collective"),
            std::string::npos)
      << Slurp(Tmp("copies.gen.csv"));
}

// Points that name jobs files (several traces sharing the machine, --jobs): one column per job
// of any point's file, in first-appearance order, with its step time, its step time alone
// (jobs-alone) and what sharing costs it, each equal to the single run's; blank where the
// point's file has no such job or does not run it alone.
TEST(Sweep, JobsFilesGiveEachJobsStepTimeAndSharingCost) {
  const std::string name = "jobs";
  const std::string prefix = Tmp(name);
  WriteSpec(name);  // the system and network files: a ring of 4 NPUs
  const std::vector<std::vector<ChakraProtoMsg::Node>> small(
      2, {et::MakeCompNode(1, "fwd", 5),
          et::MakeCollNode(2, "grad", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1})});
  const std::vector<std::vector<ChakraProtoMsg::Node>> big(
      2, {et::MakeCollNode(1, "sync", ChakraProtoMsg::ALL_REDUCE, 8 << 20)});
  ASSERT_TRUE(et::WriteRankFiles(prefix + ".small", small).ok());
  ASSERT_TRUE(et::WriteRankFiles(prefix + ".big", big).ok());
  // Side by side, each pair on its own links; crossed, each pair's ring runs over the other's
  // NPUs; alone, only one job under another name.
  std::ofstream(prefix + ".apart.yaml")
      << "jobs:\n  - {name: a, workload: " << name
      << ".small, npus: 0-1}\n  - {name: b, workload: " << name << ".big, npus: 2-3}\n";
  std::ofstream(prefix + ".crossed.yaml")
      << "jobs:\n  - {name: a, workload: " << name
      << ".small, npus: '0,2'}\n  - {name: b, workload: " << name << ".big, npus: '1,3'}\n";
  std::ofstream(prefix + ".solo.yaml") << "jobs:\n  - {name: c, workload: " << name << ".small}\n";
  const std::string spec_path = prefix + ".jobs.yaml";
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  backend: analytical-aware\n  jobs-alone: true\n"
                           << "points:\n  - {jobs: " << name << ".apart.yaml}\n"
                           << "  - {jobs: " << name << ".crossed.yaml}\n"
                           << "  - {jobs: " << name << ".solo.yaml, jobs-alone: false}\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const SweepSummary s = RunPoints(*spec, Tmp("jobs.out"), 2);
  const std::string csv = Slurp(Tmp("jobs.out.csv"));
  EXPECT_EQ(s.failed, 0) << csv;
  const std::vector<std::string> lines = Lines(csv);
  ASSERT_EQ(lines.size(), 4u) << csv;
  EXPECT_NE(lines[0].find(",events,job.a.end_ns,job.a.alone_ns,job.a.sharing_percent,"
                          "job.b.end_ns,job.b.alone_ns,job.b.sharing_percent,job.c.end_ns,"
                          "job.c.alone_ns,job.c.sharing_percent,error,"),
            std::string::npos)
      << lines[0];
  double sharing[2][2] = {};
  for (int i = 0; i < 3; ++i) {
    const std::string& row = lines[1 + i];
    EXPECT_EQ(Column(lines[0], row, "status"), "ok") << row;
    RunOptions o;
    o.system_config = prefix + ".system.json";
    o.network_config = prefix + ".net.yml";
    o.backend = Backend::kAnalyticalAware;
    o.jobs = prefix + (i == 0 ? ".apart.yaml" : i == 1 ? ".crossed.yaml" : ".solo.yaml");
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Column(lines[0], row, "end_ns"), std::to_string(r->end.WholeNs())) << row;
    if (i == 2) {
      ASSERT_EQ(r->jobs.size(), 1u);
      EXPECT_EQ(Column(lines[0], row, "job.c.end_ns"), std::to_string(r->jobs[0].finish.WholeNs()));
      // The mean NPU is over the job's two NPUs (both run the same compute), not the idle two.
      ASSERT_GT(r->breakdown[0].compute, Time::Zero());
      EXPECT_EQ(Column(lines[0], row, "compute_ns"),
                std::to_string(r->breakdown[0].compute.WholeNs()))
          << row;
      for (const char* blank :
           {"job.a.end_ns", "job.b.sharing_percent", "job.c.alone_ns", "job.c.sharing_percent"}) {
        EXPECT_EQ(Column(lines[0], row, blank), "") << blank << ": " << row;
      }
      continue;
    }
    ASSERT_TRUE(AddJobsAlone(o, &*r).ok());
    ASSERT_EQ(r->jobs.size(), 2u);
    for (int j = 0; j < 2; ++j) {
      const std::string col = std::string("job.") + (j == 0 ? "a" : "b") + ".";
      EXPECT_EQ(Column(lines[0], row, col + "end_ns"), std::to_string(r->jobs[j].finish.WholeNs()))
          << row;
      EXPECT_EQ(Column(lines[0], row, col + "alone_ns"),
                std::to_string(r->jobs[j].alone->WholeNs()))
          << row;
      sharing[i][j] = std::stod(Column(lines[0], row, col + "sharing_percent"));
      EXPECT_NEAR(sharing[i][j], r->jobs[j].SharingPercent(), 1e-4) << row;
    }
    EXPECT_EQ(Column(lines[0], row, "job.c.end_ns"), "") << row;
  }
  // Apart, neither job slows the other; crossed, the small job waits on the big one's links.
  EXPECT_EQ(sharing[0][0], 0);
  EXPECT_EQ(sharing[0][1], 0);
  EXPECT_GT(sharing[1][0], 0);
  // Every shard takes its job columns from every point's file, so the shards merge: shard 1
  // holds only the crossed point, yet its header names job c too.
  RunPoints(*spec, Tmp("jobs.part0"), 1, false, 0, 2);
  RunPoints(*spec, Tmp("jobs.part1"), 1, false, 1, 2);
  ASSERT_TRUE(
      MergeSweepOutputs({Tmp("jobs.part0.csv"), Tmp("jobs.part1.csv")}, Tmp("jobs.merged")).ok());
  EXPECT_EQ(Slurp(Tmp("jobs.merged.csv")), csv);
  // The JSON gives the job columns as numbers, and blanks as empty strings.
  const std::string json = Slurp(Tmp("jobs.out.json"));
  EXPECT_NE(json.find("\"job.a.sharing_percent\": 0,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"job.a.end_ns\": \"\""), std::string::npos) << json;

  // Jobs with a workload, a generated collective or copies of a trace, or jobs-alone without
  // jobs, fail their point, saying what to give instead.
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  jobs: " << name << ".apart.yaml\n"
                           << "points:\n  - {workload: " << name << ".small}\n"
                           << "  - {workload.size: 1048576}\n"
                           << "  - {jobs-alone: true}\n"
                           << "  - {replicate-trace: true}\n";
  spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(RunPoints(*spec, Tmp("jobs.both"), 1).failed, 3);
  const std::vector<std::string> both = Lines(Slurp(Tmp("jobs.both.csv")));
  ASSERT_EQ(both.size(), 5u);
  EXPECT_NE(both[4].find("--replicate-trace does not apply with --jobs"), std::string::npos)
      << both[4];
  EXPECT_NE(both[1].find("jobs " + name + ".apart.yaml and workload " + name +
                         ".small were both given; expected one"),
            std::string::npos)
      << both[1];
  EXPECT_NE(both[2].find("and a generated workload were both given"), std::string::npos) << both[2];
  EXPECT_EQ(Column(both[0], both[3], "status"), "ok") << both[3];
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  workload: " << name << ".small\n"
                           << "grid:\n  jobs-alone: [true]\n";
  spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(RunPoints(*spec, Tmp("jobs.nojobs"), 1).failed, 1);
  EXPECT_NE(Slurp(Tmp("jobs.nojobs.csv"))
                .find("jobs-alone is true, but no jobs file is given (base or point 'jobs')"),
            std::string::npos)
      << Slurp(Tmp("jobs.nojobs.csv"));

  // A bad jobs-alone value is named when the spec loads; a jobs file that cannot be read stops
  // the sweep before any point runs (its jobs would be columns), naming the point and the file.
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n  jobs-alone: maybe\n"
                           << "grid:\n  jobs: [" << name << ".apart.yaml, " << name
                           << ".missing.yaml]\n";
  spec = LoadSweepSpec(spec_path);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(
      spec.status().message().find(spec_path + ":4: key 'jobs-alone' is 'maybe'; expected one of "
                                               "true, false"),
      std::string::npos)
      << spec.status().message();
  std::ofstream(spec_path) << "base:\n  system: " << name << ".system.json\n  network: " << name
                           << ".net.yml\n"
                           << "grid:\n  jobs: [" << name << ".apart.yaml, " << name
                           << ".missing.yaml]\n";
  spec = LoadSweepSpec(spec_path);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  SweepOptions o;
  o.out = Tmp("jobs.missing");
  StatusOr<SweepSummary> missing = RunSweep(*spec, o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(spec_path + ": point 1 names jobs file '" + name +
                                            ".missing.yaml': " + prefix +
                                            ".missing.yaml: cannot open the file"),
            std::string::npos)
      << missing.status().message();
}

// The shipped study of two jobs sharing a 4 x 4 torus: placed on blocks of rows, neither job
// slows the other on any backend or bandwidth; interleaved, training slows, and less so as the
// links get faster.
TEST(Sweep, JobsSharingStudyRuns) {
  const std::vector<std::string> lines = RunStudy("configs/sweeps/jobs_sharing.yaml", 12);
  ASSERT_EQ(lines.size(), 13u);
  for (int backend = 0; backend < 2; ++backend) {
    double previous = 1e9;
    for (int bw = 0; bw < 3; ++bw) {
      const std::string& blocks = lines[1 + backend * 6 + bw];
      const std::string& interleaved = lines[1 + backend * 6 + 3 + bw];
      ASSERT_NE(blocks.find("blocks.yaml"), std::string::npos) << blocks;
      ASSERT_NE(interleaved.find("interleaved.yaml"), std::string::npos) << interleaved;
      for (const char* job : {"train", "sync"}) {
        EXPECT_EQ(Column(lines[0], blocks, std::string("job.") + job + ".sharing_percent"), "0")
            << blocks;
      }
      const double train = std::stod(Column(lines[0], interleaved, "job.train.sharing_percent"));
      EXPECT_GT(train, 0) << interleaved;
      EXPECT_LT(train, previous) << interleaved;
      previous = train;
    }
  }
}

// The shipped study of one degraded link in the 64-GPU DGX-style machine: at full speed the three
// links give the healthy machine's step; each one's slowdown grows as it gets slower; and at a
// quarter of its bandwidth a GPU's NIC costs more than its NVLink, which costs more than one of
// the leaf's four spine links (ECMP spreads the flows that cross it).
TEST(Sweep, SlowLinkStudyRuns) {
  const std::vector<std::string> lines = RunStudy("configs/sweeps/slow_link.yaml", 12);
  ASSERT_EQ(lines.size(), 13u);
  auto end_ns = [&](int link, int scale) {
    const std::string& line = lines[1 + link * 4 + scale];
    return std::stoll(Column(lines[0], line, "end_ns"));
  };
  const long long healthy = end_ns(0, 0);
  for (int link = 0; link < 3; ++link) {
    EXPECT_EQ(end_ns(link, 0), healthy) << lines[1 + link * 4];
    for (int scale = 1; scale < 4; ++scale) {
      EXPECT_GT(end_ns(link, scale), end_ns(link, scale - 1)) << lines[1 + link * 4 + scale];
    }
  }
  EXPECT_NE(lines[1].find("npu0<->leaf0"), std::string::npos) << lines[1];
  EXPECT_NE(lines[9].find("npu0<->nvs0"), std::string::npos) << lines[9];
  EXPECT_GT(end_ns(0, 3), end_ns(2, 3));  // the NIC over the NVLink
  EXPECT_GT(end_ns(2, 3), end_ns(1, 3));  // the NVLink over a spine link
}

TEST(Sweep, BadSpecsAreNamed) {
  const std::string path = Tmp("bad.sweep.yaml");
  std::ofstream(path) << "base:\n  sytem: a.json\ngird:\n  x: [1]\n";
  StatusOr<SweepSpec> spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  std::string m = spec.status().message();
  EXPECT_NE(m.find(path + ":3: unknown key 'gird' (did you mean 'grid'?)"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":2: unknown key 'sytem' (did you mean 'system'?)"), std::string::npos)
      << m;
  EXPECT_NE(m.find("nothing to vary"), std::string::npos) << m;

  // A key given twice would be read once, silently.
  std::ofstream(path) << "base: {system: a.json, network: b.yml}\ngrid:\n  workload.size: [1]\n"
                      << "  workload.size: [2]\n";
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find(path + ":4: key 'workload.size' appears more than once"),
            std::string::npos)
      << spec.status().message();

  std::ofstream(path) << "base: {system: a.json, network: b.yml}\ngrid:\n  network.bandwidth: []\n"
                      << "  colour: [red]\n";
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("parameter 'colour' is not one of"), std::string::npos);
  EXPECT_NE(spec.status().message().find("'network.bandwidth' needs a non-empty list"),
            std::string::npos);

  // A key the config kind does not have is named at its line before any point runs (it would
  // fail every point, each naming a generated copy of the file).
  std::ofstream(path) << "base: {system: a.json, network: b.yml}\ngrid:\n  network.bandwdth: "
                      << "[[50]]\n  system.nosuchkey: [1]\n  memory.memory-type: "
                      << "[NO_MEMORY_EXPANSION]\n  system.preferred-dataset-splits: [4]\n";
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  m = spec.status().message();
  EXPECT_NE(m.find(path + ":3: parameter 'network.bandwdth': 'bandwdth' is not a network config "
                          "key (did you mean 'bandwidth'?); configs/README.md lists them"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(path + ":4: parameter 'system.nosuchkey': 'nosuchkey' is not a system config "
                          "key"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("memory-type"), std::string::npos) << m;  // real keys pass
  EXPECT_EQ(m.find("preferred-dataset-splits"), std::string::npos) << m;
  std::ofstream(path) << "base: {system: a.json, network: b.yml}\npoints:\n"
                      << "  - {memory.memroy-type: NO_MEMORY_EXPANSION}\n";
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find(
                ":3: parameter 'memory.memroy-type': 'memroy-type' is not a memory config key "
                "(did you mean 'memory-type'?)"),
            std::string::npos)
      << spec.status().message();

  // A second YAML document (or text after the end marker '...') would be dropped unread: it is
  // named at its first line.
  for (const auto& [second, line] : std::vector<std::pair<std::string, int>>{
           {"---\nname: more\n", 4}, {"...\n---\nname: more\n", 5}, {"...\nname: more\n", 4}}) {
    std::ofstream(path) << "base: {system: a.json, network: b.yml}\ngrid: {network.bandwidth: "
                           "[[1]]}\n"
                        << second;
    spec = LoadSweepSpec(path);
    ASSERT_FALSE(spec.ok()) << second;
    // The shared loader's words, as for every other YAML file (ParseYamlDocument).
    EXPECT_EQ(spec.status().message(),
              path + ":" + std::to_string(line) +
                  ": a second YAML document (a map) starts here; expected one document per file "
                  "(a second one, after '---' or after the first one's closing bracket, would "
                  "not be read)")
        << second;
  }

  // YAML merge keys are named as such, at the top, in base and in the grid.
  std::ofstream(path) << "<<: {output: x}\nbase: {system: a.json, network: b.yml, <<: {x: 1}}\n"
                         "grid: {network.bandwidth: [[1]], <<: {y: [1]}}\n";
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  for (int line : {1, 2, 3}) {
    EXPECT_NE(spec.status().message().find(path + ":" + std::to_string(line) +
                                           ": '<<' is a YAML merge key, which is not supported"),
              std::string::npos)
        << line << ": " << spec.status().message();
  }

  // An empty document after the first holds nothing: a trailing '---' is accepted.
  for (const char* empty : {"---\n", "...\n---\n# done\n"}) {
    std::ofstream(path) << "base: {system: a.json, network: b.yml}\ngrid: {network.bandwidth: "
                           "[[1]]}\n"
                        << empty;
    spec = LoadSweepSpec(path);
    const std::string error = spec.ok() ? "" : spec.status().message();
    EXPECT_EQ(error.find("second YAML document"), std::string::npos) << empty << error;
  }

  // Keys that are lists (YAML allows them) are refused (the base) or shown as written (grid).
  std::ofstream(path) << "base: {system: a.json, network: b.yml, ? [x] : 1}\ngrid: {? [y] : [1]}\n";
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find(":1: a key is a list; expected a key name"),
            std::string::npos)
      << spec.status().message();
  EXPECT_NE(spec.status().message().find(":2: parameter '[y]' is not one of"), std::string::npos);

  // 16^5 points: refused before the product is built.
  std::ofstream big(path);
  big << "base: {system: a.json, network: b.yml}\ngrid:\n";
  for (const char* p : {"bandwidth", "latency", "lanes", "link-bandwidth", "link-latency"}) {
    big << "  network." << p << ": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]\n";
  }
  big.close();
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("the grid has 1048576 points; at most 1000000"),
            std::string::npos)
      << spec.status().message();

  // A spec with 30 unknown keys: 20 are named, the rest counted in one line.
  std::ofstream many(path);
  many << "base: {system: a.json, network: b.yml}\ngrid: {network.bandwidth: [1]}\n";
  for (int i = 0; i < 30; ++i) many << "typo" << i << ": 1\n";
  many.close();
  spec = LoadSweepSpec(path);
  ASSERT_FALSE(spec.ok());
  const std::string capped = spec.status().message();
  EXPECT_NE(capped.find("unknown key 'typo19'"), std::string::npos) << capped;
  EXPECT_EQ(capped.find("unknown key 'typo20'"), std::string::npos) << capped;
  EXPECT_NE(capped.find("... and 10 more problems in " + path), std::string::npos) << capped;
}

// An output whose folder is missing is made (as mkdir -p), for every kind of workload: a
// generated collective, a trace, a trace with a config override, a jobs file. (A trace's points
// had made nothing, and their rows could not be written.)
TEST(Sweep, AMissingOutputFolderIsMadeForEveryWorkloadKind) {
  const std::string dir = Tmp("outkinds");
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  std::ofstream(dir + "/system.json") << R"({
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
    "collective-optimization": "localBWAware", "local-mem-bw": 1600 })";
  std::ofstream(dir + "/net.yml")
      << "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  ASSERT_TRUE(
      et::WriteRankFiles(dir + "/t", {{et::MakeCompNode(1, "c", 3)}, {et::MakeCompNode(1, "c", 3)}})
          .ok());
  std::ofstream(dir + "/jobs.yml") << "jobs:\n  - workload: " << dir << "/t\n";
  const std::pair<const char*, const char*> kinds[] = {
      {"generated",
       "  workload: {collective: all_reduce, size: 4096}\ngrid: {backend: "
       "[analytical-aware]}\n"},
      {"trace", "  workload: t\ngrid: {backend: [analytical-aware]}\n"},
      {"override", "  workload: t\ngrid: {network.bandwidth: [[50.0]]}\n"},
      {"jobs", "  jobs: jobs.yml\ngrid: {backend: [analytical-aware]}\n"},
  };
  for (const auto& [kind, rest] : kinds) {
    const std::string spec = dir + "/" + kind + ".sweep.yaml";
    std::ofstream(spec) << "base:\n  system: system.json\n  network: net.yml\n"
                        << rest << "output: missing_" << kind << "/deeper/out\n";
    StatusOr<SweepSpec> loaded = LoadSweepSpec(spec);
    ASSERT_TRUE(loaded.ok()) << kind << ": " << loaded.status().message();
    StatusOr<SweepSummary> s = RunSweep(*loaded, SweepOptions{});
    ASSERT_TRUE(s.ok()) << kind << ": " << s.status().message();
    EXPECT_EQ(s->failed, 0) << kind;
    EXPECT_EQ(s->csv, dir + "/missing_" + kind + "/deeper/out.csv");
    const std::vector<std::string> lines = Lines(Slurp(s->csv));
    ASSERT_EQ(lines.size(), 2u) << kind;
    EXPECT_EQ(Column(lines[0], lines[1], "status"), "ok") << kind;
  }
  // Where the folder cannot be made (a file in the way), the sweep stops before any point runs.
  std::ofstream(dir + "/afile") << "x";
  const std::string spec = dir + "/blocked.sweep.yaml";
  std::ofstream(spec) << "base:\n  system: system.json\n  network: net.yml\n  workload: t\n"
                      << "grid: {backend: [analytical-aware]}\noutput: afile/out\n";
  StatusOr<SweepSpec> loaded = LoadSweepSpec(spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  StatusOr<SweepSummary> blocked = RunSweep(*loaded, SweepOptions{});
  ASSERT_FALSE(blocked.ok());
  const std::string& m = blocked.status().message();
  EXPECT_NE(m.find("the sweep's output " + dir + "/afile/out (the spec's 'output'): "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("outkinds/afile/: cannot create directory: a file is in the way"),
            std::string::npos)
      << m;
}

// A grid of 100,000 points is refused before any point runs, from its first point's estimate
// times the points; --dry-run (dry_run) gives the estimate instead, and runs nothing.
TEST(Sweep, AGridPastTheBudgetIsRefusedBeforeAnyPointRuns) {
  const std::string spec = WriteSpec("huge_grid");
  std::string sizes, bandwidths;
  for (int i = 0; i < 1000; ++i) sizes += (i ? ", " : "") + std::to_string(1048576 + i);
  for (int i = 0; i < 100; ++i) bandwidths += (i ? ", [" : "[") + std::to_string(10 + i) + ".0]";
  std::string text = Slurp(spec);
  text = text.substr(0, text.find("grid:")) + "grid:\n  network.bandwidth: [" + bandwidths +
         "]\n  workload.size: [" + sizes + "]\n";
  std::ofstream(spec) << text;
  // Points of 4096 chunks: about 0.1 s each, so 100,000 of them take hours.
  const std::string system = Tmp("huge_grid.system.json");
  std::string sys = Slurp(system);
  sys.replace(sys.find("\"preferred-dataset-splits\": 4"), 29,
              "\"preferred-dataset-splits\": 4096");
  std::ofstream(system) << sys;
  StatusOr<SweepSpec> loaded = LoadSweepSpec(spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_EQ(loaded->points.size(), 100000u);
  SweepOptions o;
  o.jobs = 2;
  o.out = Tmp("huge_grid_out/r");
  StatusOr<SweepSummary> s = RunSweep(*loaded, o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("this sweep of 100000 points (2 at once, --jobs) would "
                                      "take about "),
            std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("Give --force"), std::string::npos) << s.status().message();
  EXPECT_NE(access((o.out + ".csv").c_str(), F_OK), 0);  // no point ran
  o.dry_run = true;
  s = RunSweep(*loaded, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->estimate.find("estimate: 100000 points, 2 at once"), std::string::npos)
      << s->estimate;
  EXPECT_NE(s->estimate.find("past the budget: "), std::string::npos) << s->estimate;
  EXPECT_EQ(s->ran, 0);
}

}  // namespace
}  // namespace orrery
