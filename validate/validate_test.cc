#include "validate/validate.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "et_feeder/writer.h"
#include "runner/run.h"

namespace orrery {
namespace {

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// A profile: `dims` switches/rings as YAML lists, Ring_4chunks-like system.
std::string WriteProfile(const std::string& name, const std::string& network, int dims) {
  const std::string dir = Tmp(name);
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/system.yaml")
      << "scheduling-policy: LIFO\nendpoint-delay: 10\nactive-chunks-per-dimension: 1\n"
         "preferred-dataset-splits: 4\nall-reduce-implementation: ["
      << (dims == 1 ? "ring" : "ring, ring")
      << "]\ncollective-optimization: localBWAware\nlocal-mem-bw: 1600\n";
  std::ofstream(dir + "/network.yaml") << network;
  return dir;
}

// Writes `rows` (a CSV with its header) to `csv_name` and validates it on `machine`.
StatusOr<ValidationReport> ValidateCsv(const std::string& machine, const std::string& csv_name,
                                       const std::string& rows, int gpus = 0) {
  ValidateOptions o;
  o.measurements = Tmp(csv_name);
  std::ofstream(o.measurements) << rows;
  o.machine = machine;
  o.gpus = gpus;
  return Validate(o);
}

// One switch of 8 NPUs at 400 GiB/s, 900 ns a hop.
constexpr char kSwitch8[] =
    "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]\nlatency: [ 900.0 ]\n";

// An all-reduce log's header: the collective, then 8 Rank lines of one process.
void WriteAllReduceHeader(std::ostream& f) {
  f << "# Collective test starting: all_reduce_perf\n";
  for (int i = 0; i < 8; ++i)
    f << "#  Rank  " << i << " Group  0 Pid 7 on host device " << i << "\n";
}

// Runs `orrery validate` with `args` (argv[0] "validate"), capturing what it prints.
int RunValidateMain(std::vector<std::string> args, std::string* out, std::string* err) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = ValidateMain(static_cast<int>(argv.size()), argv.data());
  *out = ::testing::internal::GetCapturedStdout();
  *err = ::testing::internal::GetCapturedStderr();
  return rc;
}

TEST(Validate, GeomeanOfAbsoluteErrors) {
  EXPECT_NEAR(GeomeanAbs({0.1, -0.4}), 0.2, 1e-12);
  EXPECT_NEAR(GeomeanAbs({0.0, 1.0}), 1e-3, 1e-12);  // a perfect row is floored at 1e-6
  EXPECT_EQ(GeomeanAbs({}), 0);
}

// A log whose times are the simulator's own gives 0% error: the sizes, the collective, the GPU
// count and the profile all reach the simulation as written.
TEST(Validate, ALogOfSimulatedTimesValidatesExactly) {
  const std::string profile = WriteProfile(
      "ring8", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n",
      1);
  // ASTRA-sim's figure for 1 MiB on this ring is 64440 ns; 4 MiB runs here.
  double t4 = 0;
  {
    std::vector<std::vector<ChakraProtoMsg::Node>> ranks(8);
    for (auto& r : ranks) r = {et::MakeCollNode(0, "ar", ChakraProtoMsg::ALL_REDUCE, 4 << 20)};
    ASSERT_TRUE(et::WriteRankFiles(Tmp("ar4m"), ranks).ok());
    RunOptions o;
    o.workload = Tmp("ar4m");
    o.system_config = profile + "/system.yaml";
    o.network_config = profile + "/network.yaml";
    StatusOr<RunResult> r = RunSimulation(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    t4 = r->end.Ns() / 1e3;
  }
  const std::string log = Tmp("sim.log");
  std::ofstream f(log);
  f << "# Collective test starting: all_reduce_perf\n";
  for (int i = 0; i < 8; ++i)
    f << "#  Rank  " << i << " Group  0 Pid 1 on host device " << i << "\n";
  f << "  1048576  262144  float  sum  -1  64.44  16.27  28.48  0  64.44  16.27  28.48  0\n";
  f << "  4194304  1048576 float  sum  -1  " << t4 << "  1  1  0  " << t4 << "  1  1  0\n";
  f.close();
  ValidateOptions o;
  o.measurements = log;
  o.machine = profile;
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_NEAR(r->rows[0].simulated_us, 64.44, 1e-9);
  EXPECT_NEAR(r->rows[0].error, 0, 1e-9);
  EXPECT_NEAR(r->rows[1].error, 0, 1e-6);
  EXPECT_NE(FormatValidation(*r).find("geomean error: 0.0% over 2 sizes\n"), std::string::npos)
      << FormatValidation(*r);
  o.min_size = 2 << 20;  // leaves out the 1 MiB row
  r = Validate(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 1u);
}

// --in-place compares nccl-tests' second group of columns: a log whose in-place times are the
// simulator's own validates exactly with it and not without it. A kept row without an in-place
// time (N/A, a CSV of out-of-place figures) is an error naming the input and the size, not a row
// compared on the wrong time; a row left out by --min-size needs none; a CSV of in-place bus
// bandwidth has them.
TEST(Validate, InPlaceComparesTheSecondGroupOfColumns) {
  const std::string profile = WriteProfile(
      "ring8_in_place",
      "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n", 1);
  const std::string log = Tmp("in_place_all_reduce.log");
  auto write = [&](const std::string& in_1m, const std::string& in_2m) {
    std::ofstream f(log);
    WriteAllReduceHeader(f);
    f << "  1048576  262144  float  sum  -1  100.0  1  1  0  " << in_1m << "  1  1  0\n"
      << "  2097152  524288  float  sum  -1  200.0  1  1  0  " << in_2m << "  1  1  0\n";
  };
  write("N/A", "150.0");
  ValidateOptions o;
  o.measurements = log;
  o.machine = profile;
  StatusOr<ValidationReport> out = Validate(o);  // out of place: 100 and 200 us
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(out->rows[0].measured_us, 100.0);
  EXPECT_DOUBLE_EQ(out->rows[1].measured_us, 200.0);
  EXPECT_TRUE(out->notes.empty());

  o.in_place = true;
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            log +
                ": --in-place, but size 1048576 has no in-place time (N/A, a log of one group "
                "of columns, or a CSV without busbw_GBps_in_place); leave --in-place out to "
                "compare the out-of-place times");
  o.min_size = 2 << 20;  // the row without one is left out
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(r->rows[0].measured_us, 150.0);
  EXPECT_DOUBLE_EQ(r->rows[0].simulated_us, out->rows[1].simulated_us);

  // In-place times equal to the simulated ones: 0% with --in-place, the out-of-place error without.
  char t1[32], t2[32];
  std::snprintf(t1, sizeof t1, "%.6f", out->rows[0].simulated_us);
  std::snprintf(t2, sizeof t2, "%.6f", out->rows[1].simulated_us);
  write(t1, t2);
  o.min_size = 0;
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  for (const ValidationRow& row : r->rows) EXPECT_NEAR(row.error, 0, 1e-6);
  EXPECT_EQ(r->notes, std::vector<std::string>{"in-place times compared (--in-place)"});
  EXPECT_NE(FormatValidation(*r).find("note: in-place times compared (--in-place)\n"),
            std::string::npos);
  o.in_place = false;
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->rows[0].error, out->rows[0].error, 1e-12);

  // CSVs: in-place bus bandwidth has in-place times; a time_us table has none.
  o.in_place = true;
  o.measurements = Tmp("in_place_all_reduce.csv");
  std::ofstream(o.measurements) << "size_bytes,busbw_GBps_in_place\n1048576,10.0\n";
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->rows[0].measured_us, 1048576 / (10.0 / 1.75 * 1e9) * 1e6, 1e-9);
  o.measurements = Tmp("out_of_place_all_reduce.csv");
  std::ofstream(o.measurements) << "size_bytes,time_us\n1048576,100\n2097152,200\n";
  r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(o.measurements +
                                      ": --in-place, but size 1048576 (and 1 more) has no "
                                      "in-place time"),
            std::string::npos)
      << r.status().message();

  // The command line's flag.
  std::vector<std::string> args = {"validate",  "--nccl-tests", log,
                                   "--machine", profile,        "--in-place"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(ValidateMain(static_cast<int>(argv.size()), argv.data()), 0);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("note: in-place times compared (--in-place)\n"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("geomean error: 0.0% over 2 sizes\n"), std::string::npos) << printed;
}

// A CSV of 16 and 32 GPUs on a profile of 2 nodes x 8: the node dimension grows to match.
TEST(Validate, NodeDimensionScalesToTheMeasuredGpuCount) {
  const std::string profile = WriteProfile(
      "nodes",
      "topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 400.0, 50.0 ]\n"
      "latency: [ 900.0, 3000.0 ]\n",
      2);
  StatusOr<ValidationReport> r =
      ValidateCsv(profile, "scale_all_reduce.csv",
                  "nodes,gpus,size_bytes,algbw_GBps_out_of_place\n2,16,33554432,78.57\n"
                  "4,32,33554432,49.23\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->rows[0].gpus, 16);
  EXPECT_EQ(r->rows[1].gpus, 32);
  EXPECT_GT(r->rows[1].simulated_us, r->rows[0].simulated_us);  // more nodes, longer ring

  r = ValidateCsv(profile, "scale_all_reduce.csv", "gpus,size_bytes,time_us\n12,1048576,100\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("measured on 12 GPUs"), std::string::npos);
}

// Every row is a simulation of its own, run side by side (--jobs): the report is the same, row
// for row and in the input's order, whatever the number run at once, NCCL's choices included.
TEST(Validate, RowsRunSideBySideGiveTheSameReport) {
  const std::string profile = WriteProfile(
      "side_by_side",
      "topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 400.0, 50.0 ]\n"
      "latency: [ 900.0, 3000.0 ]\n",
      2);
  std::ofstream(profile + "/nccl.yaml")
      << "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\n"
         "  tree: {latency-us: 5, efficiency: 0.9}\nprotocols:\n"
         "  LL: {latency-us: 5, efficiency: 0.2}\n  Simple: {latency-us: 20, efficiency: 0.8}\n";
  std::string csv = "nodes,gpus,size_bytes,time_us\n";
  for (int nodes : {2, 4}) {
    for (uint64_t size = 4096; size <= (uint64_t{1} << 26); size *= 16) {
      csv += std::to_string(nodes) + "," + std::to_string(8 * nodes) + "," + std::to_string(size) +
             ",100\n";
    }
  }
  ValidateOptions o;
  o.measurements = Tmp("side_by_side_all_reduce.csv");
  std::ofstream(o.measurements) << csv;
  o.machine = profile;
  o.jobs = 1;
  StatusOr<ValidationReport> one = Validate(o);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_EQ(one->rows.size(), 8u);
  std::set<std::string> choices;
  for (const ValidationRow& row : one->rows) choices.insert(row.choice);
  EXPECT_GT(choices.size(), 1u) << FormatValidation(*one);  // the sizes take different choices
  for (int jobs : {3, 0}) {
    o.jobs = jobs;
    StatusOr<ValidationReport> many = Validate(o);
    ASSERT_TRUE(many.ok()) << many.status().message();
    ASSERT_EQ(many->rows.size(), one->rows.size());
    for (size_t i = 0; i < one->rows.size(); ++i) {
      EXPECT_EQ(many->rows[i].gpus, one->rows[i].gpus) << i;
      EXPECT_EQ(many->rows[i].size, one->rows[i].size) << i;
      EXPECT_EQ(many->rows[i].simulated_us, one->rows[i].simulated_us) << i;
      EXPECT_EQ(many->rows[i].choice, one->rows[i].choice) << i;
    }
    EXPECT_EQ(FormatValidation(*many), FormatValidation(*one));
  }
  // Bad counts are named.
  for (const char* bad : {"-1", "x", "2.5", "5000"}) {
    std::string out, err;
    EXPECT_EQ(RunValidateMain({"validate", "--nccl-tests", o.measurements, "--machine", profile,
                               std::string("--jobs=") + bad},
                              &out, &err),
              1)
        << bad;
    EXPECT_EQ(err, std::string("error: validate: --jobs is '") + bad +
                       "'; expected an integer in [0, 4096]\n");
  }
  std::string out, err;
  EXPECT_EQ(RunValidateMain(
                {"validate", "--nccl-tests", o.measurements, "--machine", profile, "--jobs", "2"},
                &out, &err),
            0)
      << err;
  EXPECT_EQ(out, FormatValidation(*one));
}

// ForEachIndex runs every index once, however many at once and in whatever cost order; with a
// progress label it counts them on stderr and clears the line at the end, without one it prints
// nothing.
TEST(Validate, ForEachIndexRunsEveryIndexOnceAndCountsThem) {
  for (int jobs : {1, 3}) {
    std::vector<int> runs(7, 0);
    const std::vector<double> cost = {1, 5, 2, 5, 0, 9, 3};
    ::testing::internal::CaptureStderr();
    ForEachIndex(
        runs.size(), jobs, [&](size_t i) { ++runs[i]; }, &cost);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(runs, std::vector<int>(7, 1)) << jobs;
    ::testing::internal::CaptureStderr();
    ForEachIndex(
        runs.size(), jobs, [&](size_t i) { ++runs[i]; }, nullptr, "sizes");
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(runs, std::vector<int>(7, 2)) << jobs;
    EXPECT_EQ(err.rfind("\r  sizes: 1 of 7", 0), 0u) << err;
    const std::string last = "\r  sizes: 7 of 7";
    EXPECT_NE(err.find(last), std::string::npos) << err;
    const std::string clear = "\r" + std::string(last.size() - 1, ' ') + "\r";
    EXPECT_EQ(err.substr(err.size() - clear.size()), clear) << err;
  }
  // One at a time, the costliest starts first (ties in index order).
  std::vector<size_t> order;
  const std::vector<double> cost = {1, 5, 2, 5};
  ForEachIndex(
      4, 1, [&](size_t i) { order.push_back(i); }, &cost);
  EXPECT_EQ(order, (std::vector<size_t>{1, 3, 2, 0}));
}

// The congestion-unaware backend lets every chunk in flight take a link's full rate: validating
// on it says so (the profiles are calibrated on the congestion-aware backend), and the other
// backends say nothing of the kind.
TEST(Validate, TheCongestionUnawareBackendIsNoted) {
  const std::string profile = WriteProfile("unaware", kSwitch8, 1);
  ValidateOptions o;
  o.measurements = Tmp("unaware_all_reduce.csv");
  std::ofstream(o.measurements) << "size_bytes,time_us\n1048576,100\n";
  o.machine = profile;
  o.gpus = 8;
  for (Backend b : {Backend::kAnalyticalAware, Backend::kAnalyticalUnaware}) {
    o.backend = b;
    StatusOr<ValidationReport> r = Validate(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    bool noted = false;
    for (const std::string& n : r->notes) {
      noted = noted || n.rfind(
                           "--network-backend analytical-unaware: every message moves at its "
                           "link's rate",
                           0) == 0;
    }
    EXPECT_EQ(noted, b == Backend::kAnalyticalUnaware);
  }
}

// A CSV without a gpus column runs on the profile's NPU count, and says so: the table may have
// been measured on fewer GPUs (a one-node table on a two-node profile). Given --gpus, or a gpus
// column, there is nothing to say.
TEST(Validate, ACsvWithoutAGpuCountSaysItRanOnTheProfilesCount) {
  const std::string profile = WriteProfile(
      "count_note",
      "topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 400.0, 50.0 ]\n"
      "latency: [ 900.0, 3000.0 ]\n",
      2);
  StatusOr<ValidationReport> r =
      ValidateCsv(profile, "count_all_reduce.csv", "size_bytes,time_us\n1048576,100\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].gpus, 16);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("count_all_reduce.csv gives no GPU count"), std::string::npos)
      << r->notes[0];
  EXPECT_NE(r->notes[0].find("the profile's 16 NPUs; give --gpus N"), std::string::npos)
      << r->notes[0];
  EXPECT_EQ(FormatValidation(*r).rfind("note: " + r->notes[0] + "\n", 0), 0u);
  const std::string json = Tmp("count_note.json");
  ASSERT_TRUE(WriteValidationJson(*r, json).ok());
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"notes\": [\"" + r->notes[0]), std::string::npos) << text;

  r = ValidateCsv(profile, "count_all_reduce.csv", "size_bytes,time_us\n1048576,100\n", 8);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rows[0].gpus, 8);
  EXPECT_TRUE(r->notes.empty());
  r = ValidateCsv(profile, "count_all_reduce.csv", "gpus,size_bytes,time_us\n16,1048576,100\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->notes.empty());
}

// Several inputs: each validated as it would be alone, printed under "== FILE", then one error
// over all of their rows; --report writes each input's report under "inputs"; the same file
// twice is refused (its rows would count twice in that error).
TEST(Validate, SeveralInputsAreEachValidatedThenSummedUp) {
  const std::string profile = WriteProfile("several", kSwitch8, 1);
  const std::string a = Tmp("several_a_all_reduce.csv"), b = Tmp("several_b_all_reduce.csv");
  std::ofstream(a) << "size_bytes,time_us\n1048576,100\n4194304,120\n";
  std::ofstream(b) << "size_bytes,time_us\n16777216,300\n";
  ValidateOptions o;
  o.measurements = a;
  o.machine = profile;
  StatusOr<std::vector<ValidationReport>> both = ValidateEach(o, {b});
  ASSERT_TRUE(both.ok()) << both.status().message();
  ASSERT_EQ(both->size(), 2u);
  std::vector<double> errors;
  for (size_t i = 0; i < 2; ++i) {
    ValidateOptions one = o;
    one.measurements = i == 0 ? a : b;
    StatusOr<ValidationReport> alone = Validate(one);
    ASSERT_TRUE(alone.ok()) << alone.status().message();
    ASSERT_EQ((*both)[i].rows.size(), i == 0 ? 2u : 1u);
    EXPECT_EQ((*both)[i].input, one.measurements);
    EXPECT_EQ(FormatValidation((*both)[i]), FormatValidation(*alone));
    for (const ValidationRow& row : alone->rows) errors.push_back(row.error);
  }
  const std::string text = FormatValidations(*both);
  EXPECT_EQ(text.rfind("== " + a + "\n", 0), 0u) << text;
  EXPECT_NE(
      text.find(FormatValidation((*both)[0]) + "== " + b + "\n" + FormatValidation((*both)[1])),
      std::string::npos)
      << text;
  char last[96];
  std::snprintf(last, sizeof last, "geomean error: %.1f%% over 3 sizes of 2 inputs\n",
                100 * GeomeanAbs(errors));
  EXPECT_EQ(text.substr(text.size() - std::strlen(last)), last) << text;
  // One input prints as it always did.
  EXPECT_EQ(FormatValidations({(*both)[0]}), FormatValidation((*both)[0]));

  // The JSON report (JSON is YAML: read back with yaml-cpp).
  const std::string json = Tmp("several.json");
  ASSERT_TRUE(WriteValidationsJson(*both, json).ok());
  const YAML::Node root = YAML::LoadFile(json);
  EXPECT_NEAR(root["geomean_abs_error"].as<double>(), GeomeanAbs(errors), 1e-5);
  EXPECT_EQ(root["sizes"].as<int>(), 3);
  ASSERT_EQ(root["inputs"].size(), 2u);
  EXPECT_EQ(root["inputs"][1]["file"].as<std::string>(), b);
  EXPECT_EQ(root["inputs"][1]["collective"].as<std::string>(), "all_reduce");
  ASSERT_EQ(root["inputs"][0]["rows"].size(), 2u);
  EXPECT_EQ(root["inputs"][0]["rows"][1]["size"].as<uint64_t>(), 4194304u);
  EXPECT_NEAR(root["inputs"][0]["rows"][1]["simulated_us"].as<double>(),
              (*both)[0].rows[1].simulated_us, 1e-3);
  // One input's report keeps its own layout.
  ASSERT_TRUE(WriteValidationsJson({(*both)[0]}, json).ok());
  EXPECT_EQ(YAML::LoadFile(json)["rows"].size(), 2u);

  // The command line: --nccl-tests once per input.
  std::string out, err;
  EXPECT_EQ(
      RunValidateMain({"validate", "--nccl-tests", a, "--nccl-tests", b, "--machine", profile},
                      &out, &err),
      0)
      << err;
  EXPECT_EQ(out, text);
  // The same file twice, however spelt, is one error naming both spellings.
  const std::string again = ::testing::TempDir() + "/./several_a_all_reduce.csv";
  EXPECT_EQ(
      RunValidateMain({"validate", "--nccl-tests", a, "--nccl-tests", again, "--machine", profile},
                      &out, &err),
      1);
  EXPECT_EQ(err, "error: --nccl-tests '" + again + "' is the same file as '" + a +
                     "': give each input once\n");
  // A missing second input is named.
  EXPECT_EQ(RunValidateMain({"validate", "--nccl-tests", a, "--nccl-tests",
                             Tmp("several_none_all_reduce.csv"), "--machine", profile},
                            &out, &err),
            1);
  EXPECT_NE(err.find(Tmp("several_none_all_reduce.csv")), std::string::npos) << err;
}

// nccl-tests prints rows of 0 bytes (-b 1 on a type of 4 bytes), but NCCL runs nothing for an
// empty buffer: they are left out of the comparison and of a fit whatever --min-size, and the
// output says how many.
TEST(Validate, RowsOfZeroBytesAreLeftOutAndCounted) {
  const std::string profile = WriteProfile("empty_rows", kSwitch8, 1);
  StatusOr<ValidationReport> r = ValidateCsv(profile, "empty_all_reduce.csv",
                                             "gpus,size_bytes,time_us\n8,0,34\n8,0,35\n"
                                             "8,1048576,100\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].size, 1048576u);
  ASSERT_EQ(r->notes.size(), 2u);  // and the harness floor they give (HarnessFloor)
  EXPECT_NE(r->notes[0].find("empty_all_reduce.csv (8 GPUs): 2 rows of 0 bytes left out: NCCL "
                             "runs nothing for an empty buffer"),
            std::string::npos)
      << r->notes[0];
  r = ValidateCsv(profile, "empty_all_reduce.csv", "gpus,size_bytes,time_us\n8,0,34\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "empty_all_reduce.csv: no rows of 1 byte or more (rows of 0 bytes are left out"),
            std::string::npos)
      << r.status().message();
}

// nccl-tests' own time per iteration: no row can be measured below it, so a simulated time
// below it is compared as it. By default it is the mean of the input's rows of 0 bytes (which time
// the harness alone: NCCL runs nothing for them), in place with --in-place; --harness-floor none
// compares the collective alone; a time given applies to every input. The collective's own time
// stays in the row (collective_us), the row is marked, and the output says why.
TEST(Validate, HarnessFloor) {
  const std::string profile = WriteProfile("floor", kSwitch8, 1);
  const std::string log = Tmp("floor_all_reduce.log");
  {
    std::ofstream f(log);
    WriteAllReduceHeader(f);
    f << "  0  0  float  sum  -1  400.0  0  0  N/A  300.0  0  0  N/A\n"
      << "  0  0  float  sum  -1  600.0  0  0  N/A  300.0  0  0  N/A\n"
      << "  1024  256  float  sum  -1  510.0  0  0  0  320.0  0  0  0\n"
      << "  1073741824  268435456  float  sum  -1  5000.0  1  1  0  5000.0  1  1  0\n";
  }
  ValidateOptions o;
  o.measurements = log;
  o.machine = profile;
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  const ValidationRow& small = r->rows[0];
  const ValidationRow& large = r->rows[1];
  EXPECT_TRUE(small.AtFloor());
  EXPECT_LT(small.collective_us, 500);
  EXPECT_GT(small.collective_us, 0);
  EXPECT_DOUBLE_EQ(small.simulated_us, 500);
  EXPECT_DOUBLE_EQ(small.error, (500.0 - 510.0) / 510.0);
  EXPECT_FALSE(large.AtFloor());
  EXPECT_GT(large.collective_us, 500);
  EXPECT_DOUBLE_EQ(large.simulated_us, large.collective_us);
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_EQ(r->notes[1], log +
                             ": nccl-tests' own time per iteration is 500.00 us (the mean of its "
                             "rows of 0 bytes, which time the harness alone); no row can be "
                             "measured below it, so a simulated time below it is compared as it "
                             "(marked *); --harness-floor none compares the collective alone");
  const std::string printed = FormatValidation(*r);
  EXPECT_NE(printed.find("   1024         510.00         500.00     -2.0%  (profile) *\n"),
            std::string::npos)
      << printed;
  const std::string json = Tmp("floor.json");
  ASSERT_TRUE(WriteValidationJson(*r, json).ok());
  std::ifstream in(json);
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(written.find("\"at_harness_floor\": true"), std::string::npos) << written;
  EXPECT_NE(written.find("\"at_harness_floor\": false"), std::string::npos) << written;

  // In place: the in-place times of the rows of 0 bytes.
  o.in_place = true;
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->rows[0].AtFloor());
  EXPECT_DOUBLE_EQ(r->rows[0].simulated_us, 300);
  EXPECT_DOUBLE_EQ(r->rows[0].measured_us, 320);
  o.in_place = false;

  // None: the collective alone.
  o.harness_floor_us = 0;
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->rows[0].AtFloor());
  EXPECT_DOUBLE_EQ(r->rows[0].simulated_us, r->rows[0].collective_us);
  EXPECT_EQ(r->notes.size(), 1u);

  // A time given: every input, whether it has rows of 0 bytes or not.
  o.harness_floor_us = 450;
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->rows[0].simulated_us, 450);
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_NE(r->notes[1].find("is 450.00 us (--harness-floor)"), std::string::npos) << r->notes[1];

  // The command line.
  std::string out, err;
  EXPECT_EQ(RunValidateMain({"validate", "--nccl-tests", log, "--machine", profile}, &out, &err), 0)
      << err;
  EXPECT_NE(out.find("500.00     -2.0%"), std::string::npos) << out;
  EXPECT_NE(out.find("(profile) *\n"), std::string::npos) << out;
  EXPECT_EQ(RunValidateMain(
                {"validate", "--nccl-tests", log, "--machine", profile, "--harness-floor", "none"},
                &out, &err),
            0)
      << err;
  EXPECT_EQ(out.find(" *\n"), std::string::npos) << out;
  EXPECT_EQ(RunValidateMain(
                {"validate", "--nccl-tests", log, "--machine", profile, "--harness-floor=450"},
                &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("450.00"), std::string::npos) << out;
  for (const char* bad : {"-1", "0", "abc", "nan", "inf", "12us"}) {
    EXPECT_EQ(RunValidateMain({"validate", "--nccl-tests", log, "--machine", profile,
                               std::string("--harness-floor=") + bad},
                              &out, &err),
              1)
        << bad;
    EXPECT_EQ(err, std::string("error: validate: --harness-floor is '") + bad +
                       "'; expected auto, none or a number of microseconds from 0.001 to 1e9, "
                       "e.g. 34\n");
  }
}

// A log of one thread driving 8 GPUs (nccl-tests -g 8) without rows of 0 bytes has a harness
// floor it cannot measure: the output says so, and how to give it; with rows of 0 bytes, or
// with --harness-floor none, it does not.
TEST(Validate, OneThreadDrivingEveryGpuIsNoted) {
  const std::string profile = WriteProfile("g8", kSwitch8, 1);
  const std::string log = Tmp("g8_all_reduce.log");
  auto write = [&](bool empty_rows) {
    std::ofstream f(log);
    f << "# nThread 1 nGpus 8 minBytes 1 maxBytes 1048576 step: 2(factor)\n";
    WriteAllReduceHeader(f);
    if (empty_rows) f << "  0  0  float  sum  -1  34.0  0  0  0  34.0  0  0  0\n";
    f << "  1048576  262144  float  sum  -1  80.0  1  1  0  80.0  1  1  0\n";
  };
  write(false);
  ValidateOptions o;
  o.measurements = log;
  o.machine = profile;
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0].find(log + ": one thread drives 8 GPUs (nccl-tests -g 8, the header's "
                                   "nGpus)"),
            0u)
      << r->notes[0];
  EXPECT_NE(r->notes[0].find("--harness-floor US compares them at it"), std::string::npos);
  o.harness_floor_us = 0;
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->notes.empty());
  o.harness_floor_us = MeasurementOptions::kHarnessFloorAuto;
  write(true);
  r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->notes.size(), 2u);  // the rows of 0 bytes, and the floor they give
  EXPECT_NE(r->notes[1].find("own time per iteration is 34.00 us"), std::string::npos)
      << r->notes[1];
}

// GPUs per node and nodes, as calibrate gives them to NCCL's chunk schedule: the profile's
// nodes of 8 (kept when the simulator is moved out of Open's result), one node for one switch.
TEST(Validate, ProfileKnowsItsNodes) {
  const std::string nodes = WriteProfile(
      "heads",
      "topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 400.0, 50.0 ]\n"
      "latency: [ 900.0, 3000.0 ]\n",
      2);
  StatusOr<ProfileSimulator> sim = ProfileSimulator::Open(nodes, "", Backend::kAnalyticalAware);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  ProfileSimulator moved = std::move(*sim);
  EXPECT_EQ(moved.Heads(32), 8);
  EXPECT_EQ(moved.Nodes(32), 4);
  const std::string one = WriteProfile(
      "heads1",
      "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]\nlatency: [ 700.0 ]\n", 1);
  StatusOr<ProfileSimulator> single = ProfileSimulator::Open(one, "", Backend::kAnalyticalAware);
  ASSERT_TRUE(single.ok()) << single.status().message();
  EXPECT_EQ(single->Heads(5), 5);
  EXPECT_EQ(single->Nodes(5), 1);
}

// One switch: a measurement on fewer GPUs runs on that many ports of the same switch (the others
// idle); more GPUs, one GPU, or a ring cannot be scaled.
TEST(Validate, OneSwitchRunsFewerGpusOnItsPorts) {
  auto one_switch = [](int npus) {
    return WriteProfile("switch" + std::to_string(npus),
                        "topology: [ Switch ]\nnpus_count: [ " + std::to_string(npus) +
                            " ]\nbandwidth: [ 400.0 ]\nlatency: [ 700.0 ]\n",
                        1);
  };
  const std::string eight = one_switch(8);
  StatusOr<ValidationReport> r = ValidateCsv(
      eight, "ports_all_reduce.csv", "gpus,size_bytes,time_us\n4,67108864,300\n8,67108864,300\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->rows[0].gpus, 4);
  // Exactly as a profile of a 4-port switch.
  StatusOr<ValidationReport> direct =
      ValidateCsv(one_switch(4), "ports_all_reduce.csv", "size_bytes,time_us\n67108864,300\n", 4);
  ASSERT_TRUE(direct.ok()) << direct.status().message();
  ASSERT_EQ(direct->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].simulated_us, direct->rows[0].simulated_us);
  EXPECT_LT(r->rows[0].simulated_us, r->rows[1].simulated_us);  // a shorter ring

  for (const char* rows :
       {"gpus,size_bytes,time_us\n16,1048576,100\n", "gpus,size_bytes,time_us\n1,1048576,100\n"}) {
    r = ValidateCsv(eight, "ports_all_reduce.csv", rows);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("one switch: 2 to 8 GPUs"), std::string::npos)
        << r.status().message();
  }

  // --only-gpus or --min-size keeping no row is an error, not an empty report (calibrate loads
  // through the same ProfileSimulator::Load).
  ValidateOptions o;
  o.measurements = Tmp("ports_all_reduce.csv");
  std::ofstream(o.measurements) << "gpus,size_bytes,time_us\n4,67108864,300\n";
  o.machine = eight;
  o.only_gpus = {16};
  r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ports_all_reduce.csv: no rows on the GPU counts "
                                      "--only-gpus keeps"),
            std::string::npos)
      << r.status().message();
  o.only_gpus.clear();
  o.min_size = 1 << 30;
  r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no rows of at least 1073741824 bytes"), std::string::npos)
      << r.status().message();
}

// The simulated time of an all-to-all of `bytes` per GPU on `nodes` nodes of 8 GPUs (NVLink at
// `nvlink` GiB/s, one 50 GiB/s NIC per GPU), with `implementation` on every dimension.
double AllToAllUs(int nodes, double nvlink, const std::string& implementation, uint64_t bytes) {
  const std::string dir = Tmp("a2a_" + std::to_string(nodes) + "_" + implementation);
  mkdir(dir.c_str(), 0755);
  const std::string dims = nodes > 1 ? implementation + ", " + implementation : implementation;
  std::ofstream(dir + "/system.yaml")
      << "scheduling-policy: LIFO\nendpoint-delay: 10\nactive-chunks-per-dimension: 8\n"
         "preferred-dataset-splits: 8\nall-to-all-implementation: ["
      << dims << "]\ncollective-optimization: localBWAware\nlocal-mem-bw: 3350\n";
  std::ofstream(dir + "/network.yaml")
      << (nodes > 1 ? "topology: [ Switch, Switch ]\nnpus_count: [ 8, " + std::to_string(nodes) +
                          " ]\nbandwidth: [ " + std::to_string(nvlink) +
                          ", 50.0 ]\nlatency: [ 500.0, 3000.0 ]\n"
                    : "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ " +
                          std::to_string(nvlink) + " ]\nlatency: [ 500.0 ]\n");
  StatusOr<ProfileSimulator> sim = ProfileSimulator::Open(dir, "", Backend::kAnalyticalAware);
  EXPECT_TRUE(sim.ok()) << sim.status().message();
  if (!sim.ok()) return 0;
  StatusOr<std::string> system = sim->System("", -1, -1);
  StatusOr<std::string> network = sim->Network(8 * nodes, "test");
  EXPECT_TRUE(system.ok() && network.ok());
  if (!system.ok() || !network.ok()) return 0;
  StatusOr<double> t = sim->TimeUs("alltoall", 8 * nodes, bytes, *system, *network);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : 0;
}

// All-to-all across nodes: every GPU sends (nodes - 1)/nodes of its buffer to the other nodes,
// through its own NIC only (NCCL's per-NIC limit: the NVSwitch cannot spread it over other GPUs'
// NICs). With NVLink 100x faster than the NIC, time ~ that share / NIC bandwidth (64 MiB on two
// nodes at 50 GiB/s: 625 µs), plus at most 25% (each chunk is stored and forwarded by the switch;
// the intra-node phase). NCCL sends to every peer at once (direct, as the profiles run it); a
// ring across four nodes would carry each piece through up to three NICs, 1.5x the bytes.
TEST(Validate, AllToAllAcrossNodesIsBoundByEachGpusNic) {
  const uint64_t s = 64 << 20;
  for (int nodes : {2, 4}) {
    const double nic_bound_us =
        s * (nodes - 1.0) / nodes / (50.0 * (1 << 30)) * 1e6;  // 625 µs on 2 nodes
    const double direct = AllToAllUs(nodes, 5000, "direct", s);
    EXPECT_GT(direct, nic_bound_us) << nodes;
    EXPECT_LT(direct, 1.25 * nic_bound_us) << nodes;
    std::printf("%d nodes: direct %.0f us, NIC bound %.0f us\n", nodes, direct, nic_bound_us);
    if (nodes == 4) {
      const double ring = AllToAllUs(nodes, 5000, "ring", s);
      std::printf("4 nodes, ring: %.0f us\n", ring);
      EXPECT_GT(ring, 1.4 * nic_bound_us);
    }
  }
}

// All-to-all inside one NVSwitch node: NCCL's point-to-point sends go to every peer at once, so
// each GPU's port carries its 7/8 of the buffer once, at the port's rate (direct). ASTRA-sim's
// ring all-to-all forwards each piece through up to 7 GPUs, 4x the bytes on every port: what the
// shipped profiles ran before, 4.3-4.9x the measured time on an A100 node
// (PublishedData.DgxA100AllToAllAndAnotherNodesCollectives).
TEST(Validate, AllToAllInsideANodeRunsAtThePortRate) {
  const uint64_t s = 256 << 20;
  const double port_bound_us = s * 7.0 / 8 / (100.0 * (1 << 30)) * 1e6;  // 2188 µs
  const double direct = AllToAllUs(1, 100, "direct", s);
  const double ring = AllToAllUs(1, 100, "ring", s);
  std::printf("one node: direct %.0f us, ring %.0f us, port bound %.0f us\n", direct, ring,
              port_bound_us);
  EXPECT_GT(direct, port_bound_us);
  EXPECT_LT(direct, 1.1 * port_bound_us);
  EXPECT_GT(ring, 3.5 * port_bound_us);
}

// A broadcast or reduce of `bytes` on one switch of 8 NPUs at 100 GiB/s, with
// broadcast-reduce-algorithm `algorithm` (aware backend: the links are shared).
double RootedUs(const std::string& collective, const std::string& algorithm, uint64_t bytes) {
  const std::string dir = Tmp("rooted_" + algorithm);
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/system.yaml")
      << "scheduling-policy: LIFO\nendpoint-delay: 10\nactive-chunks-per-dimension: 1\n"
         "preferred-dataset-splits: 1\nbroadcast-reduce-algorithm: "
      << algorithm << "\nlocal-mem-bw: 3350\n";
  std::ofstream(dir + "/network.yaml")
      << "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 100.0 ]\nlatency: [ 500.0 ]\n";
  StatusOr<ProfileSimulator> sim = ProfileSimulator::Open(dir, "", Backend::kAnalyticalAware);
  EXPECT_TRUE(sim.ok()) << sim.status().message();
  if (!sim.ok()) return 0;
  StatusOr<std::string> system = sim->System("", -1, -1);
  StatusOr<std::string> network = sim->Network(8, "test");
  EXPECT_TRUE(system.ok() && network.ok());
  if (!system.ok() || !network.ok()) return 0;
  StatusOr<double> t = sim->TimeUs(collective, 8, bytes, *system, *network);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : 0;
}

// NCCL's broadcast and reduce are rings: a pipeline of slices along the members, each GPU's link
// carrying the buffer once, so they take about one buffer's time at the link rate (256 MiB at
// 100 GiB/s: 2.5 ms; 512 slices of 512 KiB, the pipeline filling in 6 of them). A binomial tree
// is log2(8) = 3 messages of the whole buffer deep, and the root sends it 3 times: at least three
// buffers' time (here six: each message crosses the switch stored whole, up and then down).
// Under nccl-model (every shipped profile) they run as the ring.
TEST(Validate, BroadcastAndReduceRunAsNcclsRing) {
  const uint64_t s = 256 << 20;
  const double link_us = s / (100.0 * (1 << 30)) * 1e6;  // 2500 µs
  for (const char* c : {"broadcast", "reduce"}) {
    const double ring = RootedUs(c, "ring", s);
    const double tree = RootedUs(c, "binomialTree", s);
    std::printf("%s of 256 MiB: ring %.0f us, binomial tree %.0f us, one buffer %.0f us\n", c, ring,
                tree, link_us);
    EXPECT_GT(ring, link_us) << c;
    EXPECT_LT(ring, 1.05 * link_us) << c;
    EXPECT_GT(tree, 2.9 * link_us) << c;
  }
}

TEST(Validate, BadInputsAreNamed) {
  ValidateOptions o;
  o.measurements = Tmp("sim.log");
  o.machine = Tmp("no-such-profile");
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a machine profile"), std::string::npos);
  o.machine = Tmp("ring8");
  o.algorithm = "collnet";
  r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.status().message().find("--algorithm (or auto): NCCL_ALGO 'collnet': 'collnet' is "
                                "one of NCCL's that Orrery does not model; valid: ring, tree, "
                                "nvls"),
      std::string::npos)
      << r.status().message();
  o.algorithm = "tree";  // one node: NCCL's tree there is a chain, not modelled
  r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'tree' needs a node dimension"), std::string::npos)
      << r.status().message();
}

// An all-gather size that is not a whole number of parts on its GPUs is an error naming it (4 B
// on 8 GPUs had run as parts of 0 B, 1000004 B as 1000000 B).
TEST(Validate, AnAllGatherSizeOfNoWholePartsIsAnError) {
  const std::string log = Tmp("odd-all_gather.log");
  std::ofstream(log) << "# Collective test starting: all_gather_perf\n"
                     << "#  Rank 7 Group 0 Pid 1 on host device 7 [0x1a] NVIDIA H100\n"
                     << "  1048576  32768  float  none  -1  40.0  1  1  0  40.0  1  1  0\n"
                     << "  1000004  31250  float  none  -1  40.0  1  1  0  40.0  1  1  0\n";
  ValidateOptions o;
  o.measurements = log;
  o.machine = WriteProfile("parts", kSwitch8, 1);
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(": all_gather size 1000004 is not a whole number of parts on "
                                      "8 GPUs"),
            std::string::npos)
      << r.status().message();
}

// A CSV with node counts but no GPU counts is refused by validate too (the profile's NPU count
// had stood in for every row, and rows on 1 and 2 nodes met a confusing message).
TEST(Validate, ACsvOfNodeCountsNeedsItsGpuCounts) {
  const std::string profile = WriteProfile("nodes_only", kSwitch8, 1);
  StatusOr<ValidationReport> r =
      ValidateCsv(profile, "nodes_only_all_reduce.csv",
                  "size_bytes,nodes,time_us\n1048576,1,100\n1048576,2,90\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a 'nodes' column but no 'gpus' column"), std::string::npos)
      << r.status().message();
  // Without node counts the profile's NPUs stand in, as before.
  r = ValidateCsv(profile, "plain_all_reduce.csv", "size_bytes,time_us\n1048576,100\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rows.front().gpus, 8);
}

// A size measured several times (nccl-tests -d all) is said in a note: every row counts.
TEST(Validate, RepeatedSizesAreSaid) {
  const std::string log = Tmp("dup-all_reduce.log");
  {
    std::ofstream f(log);
    WriteAllReduceHeader(f);
    for (const char* type : {"float", "half", "float"}) {
      f << "  1048576  262144  " << type << "  sum  -1  40.0  1  1  0  40.0  1  1  0\n";
    }
  }
  ValidateOptions o;
  o.measurements = log;
  o.machine = WriteProfile("dup", kSwitch8, 1);
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rows.size(), 3u);
  bool said = false;
  for (const std::string& n : r->notes) {
    said = said || n.find("1 size appears more than once (1048576 3 times; nccl-tests -d all") !=
                       std::string::npos;
  }
  EXPECT_TRUE(said);
}

// A profile's network is checked as any run checks it before validate reads its npus_count
// (a quoted count used to abort in yaml-cpp's conversion).
TEST(Validate, ProfileNetworkIsCheckedFirst) {
  const std::string bad = WriteProfile("bad_counts",
                                       "topology: [Switch, Switch]\nnpus_count: [8, \"two\"]\n"
                                       "bandwidth: [100, 10]\nlatency: [500, 1000]\n",
                                       2);
  StatusOr<ValidationReport> r =
      ValidateCsv(bad, "bad_counts.csv", "size_bytes,time_us\n1048576,100\n", 16);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(bad + "/network.yaml:2: key 'npus_count', item 2, is 'two'"),
            std::string::npos)
      << r.status().message();
}

// --collective takes Chakra's name for all-to-all as well as nccl-tests' (alltoall_perf).
TEST(Validate, AllToAllByEitherName) {
  const std::string ring = WriteProfile(
      "ring4_a2a", "topology: [Ring]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n", 1);
  std::ofstream(ring + "/system.yaml", std::ios::app) << "all-to-all-implementation: [direct]\n";
  std::vector<double> times;
  for (const char* name : {"alltoall", "all_to_all"}) {
    ValidateOptions o;
    o.measurements = Tmp(std::string("a2a_") + name + ".csv");
    std::ofstream(o.measurements) << "size_bytes,time_us\n1048576,100\n";
    o.machine = ring;
    o.collective = name;
    StatusOr<ValidationReport> r = Validate(o);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
    ASSERT_EQ(r->rows.size(), 1u);
    EXPECT_EQ(r->collective, "alltoall");
    times.push_back(r->rows[0].simulated_us);
  }
  EXPECT_EQ(times[0], times[1]);
  EXPECT_GT(times[0], 0);
}

// A collective validate does not simulate (nccl-tests' sendrecv_perf, say) is refused with the
// input named and the collectives it does simulate listed.
TEST(Validate, ACollectiveItDoesNotSimulateIsNamed) {
  const std::string ring = WriteProfile(
      "ring4_sr", "topology: [Ring]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n", 1);
  ValidateOptions o;
  o.measurements = Tmp("sr_sendrecv.csv");
  std::ofstream(o.measurements) << "size_bytes,time_us\n1048576,100\n";
  o.machine = ring;
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            o.measurements +
                ": collective 'sendrecv' is not one validate simulates; valid: all_gather, "
                "all_reduce, alltoall (or all_to_all), broadcast, reduce, reduce_scatter");
}

// GPU counts on the command line are whole numbers >= 1: --gpus 4.5 is an error, not 4.
TEST(Validate, GpuFlagsMustBeWholeNumbers) {
  auto run = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStderr();
    const int rc = ValidateMain(static_cast<int>(argv.size()), argv.data());
    return std::make_pair(rc, ::testing::internal::GetCapturedStderr());
  };
  const std::string log = Tmp("sim.log"), machine = Tmp("ring8");
  for (const char* gpus : {"4.5", "0", "-2", "8x", "99999999999"}) {
    auto [rc, err] =
        run({"validate", "--nccl-tests", log, "--machine", machine, std::string("--gpus=") + gpus});
    EXPECT_EQ(rc, 1) << gpus;
    EXPECT_EQ(
        err.rfind(
            std::string("error: validate: --gpus is '") + gpus + "'; expected an integer >= 1", 0),
        0u)
        << err;
  }
  for (const char* only : {"4.5", "16,99999999999", ",16"}) {
    auto [rc, err] = run({"validate", "--nccl-tests", log, "--machine", machine,
                          std::string("--only-gpus=") + only});
    EXPECT_EQ(rc, 1) << only;
    EXPECT_EQ(err, std::string("error: validate: --only-gpus is '") + only +
                       "'; expected a comma-separated list of integers in [1, 2147483647]\n");
  }
  // --min-size: a negative or fractional size is refused, not wrapped to 2^64 - 1.
  for (const char* size : {"-1", "1.5", "1M", "99999999999999999999999"}) {
    auto [rc, err] = run(
        {"validate", "--nccl-tests", log, "--machine", machine, std::string("--min-size=") + size});
    EXPECT_EQ(rc, 1) << size;
    EXPECT_EQ(err.rfind(std::string("error: validate: --min-size is '") + size +
                            "'; expected an integer >= 0",
                        0),
              0u)
        << err;
  }
}

// A measurement's layout must be the profile's: 8 GPUs on two hosts are not one NVSwitch node,
// a CSV's gpus column is not overridden by --gpus, and one report is of one collective.
TEST(Validate, TheMeasuredLayoutMustBeTheProfiles) {
  const std::string profile = WriteProfile("layout", kSwitch8, 1);
  const std::string hosts = Tmp("two_hosts_all_reduce.log");
  {
    std::ofstream f(hosts);
    f << "# Collective test starting: all_reduce_perf\n";
    for (int i = 0; i < 8; ++i) {
      f << "#  Rank  " << i << " Group  0 Pid 7 on node" << i / 4 << " device " << i % 4 << "\n";
    }
    f << "  1048576  262144  float  sum  -1  80.0  1  1  0  80.0  1  1  0\n";
  }
  ValidateOptions o;
  o.measurements = hosts;
  o.machine = profile;
  StatusOr<ValidationReport> r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("measured on 8 GPUs on 2 hosts (4 per host; the Rank lines' "
                                      "host names, or a 'nodes' column), but " +
                                      profile + " has one node of 8 GPUs"),
            std::string::npos)
      << r.status().message();

  r = ValidateCsv(profile, "gpus_all_reduce.csv", "gpus,size_bytes,time_us\n8,1048576,80\n", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--gpus is 4 but the file gives 8 GPUs"), std::string::npos)
      << r.status().message();

  const std::string two = Tmp("two_collectives.log");
  {
    std::ofstream f(two);
    WriteAllReduceHeader(f);
    f << "  1048576  262144  float  sum  -1  80.0  1  1  0  80.0  1  1  0\n";
    f << "# Collective test starting: all_gather_perf\n";
    for (int i = 0; i < 8; ++i) f << "#  Rank  " << i << " Group  0 Pid 7 on host\n";
    f << "  1048576  32768  float  none  -1  60.0  1  1  0  60.0  1  1  0\n";
  }
  o.measurements = two;
  r = Validate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("holds runs of more than one collective (" + two +
                                      " (the run from line 1): all_reduce, " + two +
                                      " (the run from line 11): all_gather)"),
            std::string::npos)
      << r.status().message();
}

// A report that cannot be written in full (a full disk) is an error, not a short file.
TEST(Validate, AReportThatCannotBeWrittenIsAnError) {
  const std::string profile = WriteProfile("report_full", kSwitch8, 1);
  const std::string log = Tmp("report_full_all_reduce.log");
  {
    std::ofstream f(log);
    WriteAllReduceHeader(f);
    f << "  1048576  262144  float  sum  -1  80.0  1  1  0  80.0  1  1  0\n";
  }
  std::string out, err;
  EXPECT_EQ(RunValidateMain(
                {"validate", "--nccl-tests", log, "--machine", profile, "--report", "/dev/full"},
                &out, &err),
            1);
  EXPECT_NE(err.find("/dev/full: write failed"), std::string::npos) << err;
  // An empty name is refused before anything runs (it was ignored, the report not written).
  EXPECT_EQ(RunValidateMain({"validate", "--nccl-tests", log, "--machine", profile, "--report", ""},
                            &out, &err),
            1);
  EXPECT_NE(err.find("--report needs a file name"), std::string::npos) << err;
}

// A size whose simulated bytes pass 2^53 (here after LL's efficiency would have wrapped past
// 2^64 and run as almost nothing) is an error naming the limit, not a number.
TEST(Validate, ASizePastWhatIsSimulatedIsAnError) {
  const std::string profile = WriteProfile("huge", kSwitch8, 1);
  StatusOr<ValidationReport> r =
      ValidateCsv(profile, "huge_all_reduce.csv", "size_bytes,time_us\n576460752303423488,1000\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is more than Orrery simulates: at most 2^53 bytes"),
            std::string::npos)
      << r.status().message();
}

// A log repeating one row 200,000 times is one simulation: every row is compared (with the
// same simulated time as a log of that row alone), and a note says the sizes were counted once.
TEST(Validate, RepeatedSizesAreSimulatedOnce) {
  const std::string profile =
      WriteProfile("repeated",
                   "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\n"
                   "latency: [ 500.0 ]\n",
                   1);
  StatusOr<ValidationReport> once =
      ValidateCsv(profile, "once_all_reduce.csv", "gpus,size_bytes,time_us\n4,1048576,100\n");
  ASSERT_TRUE(once.ok()) << once.status().message();
  std::string csv = "gpus,size_bytes,time_us\n";
  for (int i = 0; i < 200000; ++i) csv += "4,1048576,100\n";
  StatusOr<ValidationReport> r = ValidateCsv(profile, "repeated_all_reduce.csv", csv);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 200000u);
  EXPECT_EQ(r->rows.back().simulated_us, once->rows[0].simulated_us);
  bool noted = false;
  for (const std::string& n : r->notes) {
    noted = noted || n.find(
                         "199999 rows repeat sizes of earlier rows; each size is simulated "
                         "once") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace orrery
