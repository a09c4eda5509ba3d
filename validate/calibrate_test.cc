#include "validate/calibrate.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace orrery {
namespace {

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// An 8-NPU switch profile whose NCCL runs ring with one protocol.
std::string Profile(const std::string& name, double latency_us, double efficiency,
                    double step_latency_us = 0) {
  const std::string dir = Tmp(name);
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/system.yaml")
      << "scheduling-policy: LIFO\nendpoint-delay: 10\nactive-chunks-per-dimension: 4\n"
         "preferred-dataset-splits: 4\nall-reduce-implementation: [ring]\n"
         "collective-optimization: localBWAware\nlocal-mem-bw: 1600\n";
  std::ofstream(dir + "/network.yaml")
      << "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 100.0 ]\nlatency: [ 500.0 ]\n";
  std::ofstream(dir + "/nccl.yaml") << "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\n"
                                       "protocols:\n  Simple: {latency-us: "
                                    << latency_us << ", efficiency: " << efficiency
                                    << ", step-latency-us: " << step_latency_us << "}\n";
  return dir;
}

// An all-reduce log on 8 GPUs of (size, µs) rows, opened by `first_line` when given. With
// `out_of_place_scale` the times are the in-place column and the out-of-place one is that many
// times them; without it, rows have one group of columns.
void WriteAllReduceLog(const std::string& log, const std::vector<std::pair<uint64_t, double>>& rows,
                       const std::string& first_line = "", double out_of_place_scale = 0) {
  std::ofstream f(log);
  if (!first_line.empty()) f << first_line << "\n";
  f << "# Collective test starting: all_reduce_perf\n";
  for (int i = 0; i < 8; ++i)
    f << "#  Rank  " << i << " Group 0 Pid 1 on host device " << i << "\n";
  for (const auto& [size, us] : rows) {
    f << "  " << size << "  " << size / 4 << "  float  sum  -1  ";
    if (out_of_place_scale > 0) f << out_of_place_scale * us << "  1  1  0  ";
    f << us << "  1  1  0\n";
  }
}

// A log of `sizes` on 8 GPUs with the times `machine` simulates for them (WriteAllReduceLog's
// `first_line` and `out_of_place_scale`).
std::string SimulatedLog(const std::string& name, const std::string& machine,
                         const std::vector<uint64_t>& sizes, const std::string& first_line = "",
                         double out_of_place_scale = 0) {
  const std::string log = Tmp(name);
  std::vector<std::pair<uint64_t, double>> placeholder;
  for (uint64_t size : sizes) placeholder.push_back({size, 1.0});
  WriteAllReduceLog(log, placeholder, first_line, out_of_place_scale);
  ValidateOptions v;
  v.measurements = log;
  v.machine = machine;
  StatusOr<ValidationReport> sim = Validate(v);
  EXPECT_TRUE(sim.ok()) << sim.status().message();
  std::vector<std::pair<uint64_t, double>> rows;
  if (sim.ok()) {
    for (const ValidationRow& r : sim->rows) rows.push_back({r.size, r.simulated_us});
  }
  WriteAllReduceLog(log, rows, first_line, out_of_place_scale);
  return log;
}

// An NVLS log made with NCCL's chunk sizes and a known chunk overhead (12 KiB): fitted from a
// profile that models the chunks but starts at no overhead, calibrate finds it again. (NVLS
// only: with ring beside it, ring would take the sizes where the chunks cost most.)
TEST(Calibrate, FitsTheNvlsChunkOverhead) {
  auto nvls_profile = [](const std::string& name, double latency, double efficiency,
                         double overhead_kib) {
    const std::string dir = Profile(name, 30, 0.8);
    std::ofstream(dir + "/nccl.yaml")
        << "algorithms:\n  nvls: {latency-us: " << latency << ", efficiency: " << efficiency
        << ", protocols: [Simple], chunk-overhead-kib: " << overhead_kib
        << ", channels: 16}\nprotocols:\n  Simple: {latency-us: 30, efficiency: 0.8}\n";
    return dir;
  };
  std::vector<uint64_t> sizes;
  for (uint64_t s = uint64_t{1} << 23; s <= (uint64_t{1} << 32); s *= 2) sizes.push_back(s);
  const std::string log = SimulatedLog("nvls.log", nvls_profile("nvls_truth", 5, 0.9, 12), sizes);
  CalibrateOptions o;
  o.measurements = log;
  o.machine = nvls_profile("nvls_start", 8, 0.7, 0);
  o.fit = {"nvls"};
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const NcclAlgorithm& nvls = r->model.algorithms[0];
  ASSERT_EQ(nvls.name, "nvls");
  EXPECT_NEAR(nvls.chunking.overhead_kib, 12, 1);
  EXPECT_NEAR(nvls.efficiency, 0.9, 0.01);
  EXPECT_LT(r->validations[0].geomean_abs_error, 0.01);
  StatusOr<NcclModel> written = LoadNcclModel(Tmp("nvls_start") + "/nccl.yaml");
  ASSERT_TRUE(written.ok());
  EXPECT_TRUE(written->algorithms[0].chunking.modelled);
}

// A log made by the simulator with a known latency floor (40 µs) and efficiency (0.5): fitted
// from a profile that starts elsewhere (10 µs, 0.9), calibrate finds them again, and the written
// profile reproduces the log.
TEST(Calibrate, RecoversTheParametersOfASimulatedLog) {
  const std::string truth = Profile("truth", 40, 0.5);
  const std::string log = Tmp("truth.log");
  {
    std::ofstream f(log);
    f << "# Collective test starting: all_reduce_perf\n";
    for (int i = 0; i < 8; ++i)
      f << "#  Rank  " << i << " Group 0 Pid 1 on host device " << i << "\n";
    for (uint64_t s = 1 << 16; s <= (uint64_t{1} << 28); s *= 4) {
      f << "  " << s << "  " << s / 4 << "  float  sum  -1  1.0  1  1  0\n";
    }
  }
  // Replace the placeholder times by the simulated ones.
  ValidateOptions v;
  v.measurements = log;
  v.machine = truth;
  StatusOr<ValidationReport> sim = Validate(v);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  {
    std::ofstream f(log);
    f << "# Collective test starting: all_reduce_perf\n";
    for (int i = 0; i < 8; ++i)
      f << "#  Rank  " << i << " Group 0 Pid 1 on host device " << i << "\n";
    for (const ValidationRow& r : sim->rows) {
      f << "  " << r.size << "  " << r.size / 4 << "  float  sum  -1  " << r.simulated_us
        << "  1  1  0\n";
    }
  }
  CalibrateOptions o;
  o.measurements = log;
  o.machine = Profile("start", 10, 0.9);
  o.out = Tmp("fitted");
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->model.protocols.size(), 1u);
  EXPECT_NEAR(r->model.protocols[0].latency_us, 40, 0.5);
  EXPECT_NEAR(r->model.protocols[0].efficiency, 0.5, 0.005);
  EXPECT_LT(r->validations[0].geomean_abs_error, 0.01);
  StatusOr<NcclModel> written = LoadNcclModel(o.out + "/nccl.yaml");
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_DOUBLE_EQ(written->protocols[0].efficiency, r->model.protocols[0].efficiency);
  struct stat st;
  EXPECT_EQ(stat((o.out + "/system.yaml").c_str(), &st), 0);
  EXPECT_EQ(stat((o.out + "/README.md").c_str(), &st), 0);

  // The same inputs give the same numbers (the fit is deterministic), whatever the number of
  // simulations run at once (--jobs; 0 above: all cores).
  o.out = "";
  for (int jobs : {1, 3}) {
    o.jobs = jobs;
    StatusOr<CalibrationResult> again = Calibrate(o);
    ASSERT_TRUE(again.ok()) << jobs;
    EXPECT_EQ(again->model.protocols[0].latency_us, r->model.protocols[0].latency_us) << jobs;
    EXPECT_EQ(again->model.protocols[0].efficiency, r->model.protocols[0].efficiency) << jobs;
    EXPECT_EQ(again->mean_abs_log_error, r->mean_abs_log_error) << jobs;
    EXPECT_EQ(FormatValidation(again->validations[0]), FormatValidation(r->validations[0]));
  }
}

// --in-place fits the in-place times: a log whose in-place column holds a profile's times and
// whose out-of-place column is twice as slow gives that profile's parameters back with it; a log
// of one group of columns has no in-place times and is refused, naming the input and the size.
TEST(Calibrate, InPlaceFitsTheInPlaceTimes) {
  const std::vector<uint64_t> sizes = {1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26};
  const std::string one_group =
      SimulatedLog("in_place_truth.log", Profile("in_place_truth", 30, 0.6), sizes);
  CalibrateOptions o;
  o.measurements = one_group;
  o.machine = Profile("in_place_start", 10, 0.9);
  o.in_place = true;
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(one_group + ": --in-place, but size 65536 (and 5 more) has "
                                                  "no in-place time"),
            std::string::npos)
      << r.status().message();

  // Both columns: out of place twice the in-place (true) times.
  o.measurements = SimulatedLog("in_place_both.log", Profile("in_place_truth", 30, 0.6), sizes, "",
                                /*out_of_place_scale=*/2);
  r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->model.protocols[0].latency_us, 30, 0.5);
  EXPECT_NEAR(r->model.protocols[0].efficiency, 0.6, 0.006);
  EXPECT_LT(r->validations[0].geomean_abs_error, 0.01);
  o.in_place = false;  // the out-of-place times fit another machine
  r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(std::abs(r->model.protocols[0].efficiency - 0.6), 0.1);
}

// A log whose small rows are nccl-tests' own time per iteration (one process driving 8 GPUs):
// its rows of 0 bytes time that floor, and calibrate compares every row as validate does, at
// least the floor, so the rows under it do not pull the collective's latency up. Without the
// floor (--harness-floor none) they do.
TEST(Calibrate, RowsAtTheHarnessFloorDoNotPullTheLatency) {
  const std::vector<uint64_t> sizes = {1 << 10, 1 << 14, 1 << 18, 1 << 20,
                                       1 << 22, 1 << 24, 1 << 26, 1 << 28};
  const std::string truth = SimulatedLog("floor_truth.log", Profile("floor_truth", 30, 0.6), sizes);
  const double kFloor = 100;
  ValidateOptions v;
  v.measurements = truth;
  v.machine = Tmp("floor_truth");
  StatusOr<ValidationReport> sim = Validate(v);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const std::string log = Tmp("floor.log");
  int under = 0;
  {
    std::ofstream f(log);
    f << "# Collective test starting: all_reduce_perf\n";
    for (int i = 0; i < 8; ++i)
      f << "#  Rank  " << i << " Group 0 Pid 1 on host device " << i << "\n";
    f << "  0  0  float  sum  -1  " << kFloor << "  0  0  0\n";
    for (const ValidationRow& r : sim->rows) {
      under += r.simulated_us < kFloor;
      f << "  " << r.size << "  " << r.size / 4 << "  float  sum  -1  "
        << std::max(r.simulated_us, kFloor) << "  1  1  0\n";
    }
  }
  ASSERT_GE(under, 3);
  ASSERT_LE(under, 5);
  CalibrateOptions o;
  o.measurements = log;
  o.machine = Profile("floor_start", 10, 0.9);
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->model.protocols[0].latency_us, 30, 1);
  EXPECT_NEAR(r->model.protocols[0].efficiency, 0.6, 0.006);
  EXPECT_LT(r->validations[0].geomean_abs_error, 0.01);
  int at_floor = 0;
  for (const ValidationRow& row : r->validations[0].rows) at_floor += row.AtFloor();
  EXPECT_EQ(at_floor, under);

  o.harness_floor_us = 0;
  r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->model.protocols[0].latency_us, 40);
}

// A protocol's step latency is NCCL's constant, kept as it is: calibrate charges it as validate
// does (14 ring steps on 8 GPUs) and fits the floor beside it.
TEST(Calibrate, KeepsTheStepLatencyAndFitsTheFloorBesideIt) {
  const std::string truth = Profile("steps_truth", 40, 0.5, 2);
  std::vector<uint64_t> sizes;
  for (uint64_t s = 1 << 16; s <= (uint64_t{1} << 28); s *= 4) sizes.push_back(s);
  CalibrateOptions o;
  o.measurements = SimulatedLog("steps_truth.log", truth, sizes);
  o.machine = Profile("steps_start", 10, 0.9, 2);
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->model.protocols.size(), 1u);
  EXPECT_DOUBLE_EQ(r->model.protocols[0].step_latency_us, 2);
  EXPECT_NEAR(r->model.protocols[0].latency_us, 40, 0.5);  // not 40 + 14 x 2
  EXPECT_NEAR(r->model.protocols[0].efficiency, 0.5, 0.005);
  EXPECT_LT(r->validations[0].geomean_abs_error, 0.01);
}

// A protocol no row runs (LL, on a log from 64 MiB where Simple wins every row) keeps its values
// and is named as kept: the simplex had carried such values off along the flat direction (LL's
// floor 5.0 -> 8.9 us on #290's 8-GPU log), changing the profile's small sizes for nothing.
TEST(Calibrate, KeepsWhatNoRowDependsOn) {
  // A ring profile whose nccl.yaml has these protocols (YAML lines under "protocols:").
  auto profile = [](const std::string& name, const std::string& protocols) {
    const std::string dir = Profile(name, 10, 0.9);
    std::ofstream(dir + "/nccl.yaml")
        << "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\nprotocols:\n"
        << protocols;
    return dir;
  };
  const std::string ll = "  LL: {latency-us: 5, efficiency: 0.02}\n";
  const std::string truth = ll + "  Simple: {latency-us: 40, efficiency: 0.6}\n";
  std::vector<uint64_t> sizes;
  for (uint64_t s = uint64_t{1} << 26; s <= (uint64_t{1} << 30); s *= 2) sizes.push_back(s);
  CalibrateOptions o;
  o.measurements = SimulatedLog("kept_truth.log", profile("kept_truth", truth), sizes);
  o.machine = profile("kept_start", ll + "  Simple: {latency-us: 10, efficiency: 0.9}\n");
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->model.protocols.size(), 2u);
  ASSERT_EQ(r->model.protocols[0].name, "LL");
  EXPECT_EQ(r->model.protocols[0].latency_us, 5);
  EXPECT_EQ(r->model.protocols[0].efficiency, 0.02);
  EXPECT_EQ(r->kept, (std::vector<std::string>{"LL latency-us", "LL efficiency"}));
  EXPECT_NEAR(r->model.protocols[1].efficiency, 0.6, 0.01);
  EXPECT_LT(r->validations[0].geomean_abs_error, 0.01);

  // Exactly as they were: a latency of 0 stays 0 (the fit's transform had written 0.05).
  o.machine = profile("kept_zero",
                      "  LL: {latency-us: 0, efficiency: 0.02}\n"
                      "  Simple: {latency-us: 10, efficiency: 0.9}\n");
  r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->model.protocols[0].latency_us, 0);

  // --fit LL leaves LL128's efficiency as the profile has it (it had become Simple's x 120/128).
  o.machine = profile("kept_ll128", ll + "  LL128: {latency-us: 20, efficiency: 0.5}\n"
                                         "  Simple: {latency-us: 10, efficiency: 0.9}\n");
  o.fit = {"LL"};
  r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->model.protocols.size(), 3u);
  EXPECT_EQ(r->model.protocols[1].name, "LL128");
  EXPECT_EQ(r->model.protocols[1].efficiency, 0.5);
  o.fit.clear();

  // A protocol that wins rows only far from where it starts (LL's floor at 1000 us, where the
  // small rows were measured at its 5 us) is fitted, not kept: kept means no value the fit
  // could reach changes a row.
  std::vector<uint64_t> small;
  for (uint64_t s = 1024; s <= (uint64_t{1} << 26); s *= 4) small.push_back(s);
  o.measurements = SimulatedLog("kept_small.log", profile("kept_small_truth", truth), small);
  o.machine = profile("kept_far",
                      "  LL: {latency-us: 1000, efficiency: 0.02}\n"
                      "  Simple: {latency-us: 40, efficiency: 0.6}\n");
  r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->kept.empty()) << r->kept.front();
  EXPECT_NEAR(r->model.protocols[0].latency_us, 5, 0.5);
  EXPECT_LT(r->validations[0].geomean_abs_error, 0.01);
}

// On the packet backend every packet of the fit's grid (to 200 times the largest row) is
// simulated: a log of small sizes fits there, one to 8 GiB is refused up front, naming the
// figures and what to do instead, rather than running for hours.
TEST(Calibrate, OnThePacketBackendAGridOfBillionsOfPacketsIsRefused) {
  const std::string machine = Profile("packet_start", 10, 0.9);
  CalibrateOptions o;
  o.machine = machine;
  o.backend = Backend::kPacket;
  o.measurements =
      SimulatedLog("packet_small.log", Profile("packet_truth", 20, 0.5), {4096, 16384, 65536});
  StatusOr<CalibrationResult> small = Calibrate(o);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->validations[0].rows.size(), 3u);
  const std::string big = Tmp("packet_big.log");
  WriteAllReduceLog(big, {{uint64_t{8} << 30, 40000.0}});
  o.measurements = big;
  StatusOr<CalibrationResult> refused = Calibrate(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            big +
                ": calibrate's grid on the packet backend would simulate collectives of up to "
                "1.72e+12 B (200 times its largest row, 8.59e+09 B) on 8 GPUs: about 3.4e+09 "
                "packets of 4096 B per grid size, hours of simulation (at most 1000000000 per "
                "grid size); fit on analytical-aware, as the shipped profiles are, and check the "
                "fit with orrery validate --network-backend packet, or fit a log of smaller "
                "sizes");
  o.backend = Backend::kAnalyticalAware;  // the same log fits there
  EXPECT_TRUE(Calibrate(o).ok());
}

TEST(Calibrate, BadInputsAreNamed) {
  CalibrateOptions o;
  o.measurements = Tmp("truth.log");
  o.machine = Profile("nofit", 10, 0.9);
  std::remove((o.machine + "/nccl.yaml").c_str());
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no nccl.yaml"), std::string::npos);
  o.machine = Profile("fitname", 10, 0.9);
  o.fit = {"Simpel"};
  r = Calibrate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--fit 'Simpel': not an algorithm or protocol"),
            std::string::npos)
      << r.status().message();
}

// NVLS always runs with Simple, so a log of NVLS runs fixes only the product of nvls's and
// Simple's efficiencies: fitted on it alone, the two stay near where they started. With a
// ring-forced log of the same machine beside it (as a user would run NCCL_ALGO=Ring next to the
// default), calibrate fits both together and finds each again.
TEST(Calibrate, SeveralLogsTellApartWhatOneCannot) {
  auto profile = [](const std::string& name, double simple, double nvls) {
    const std::string dir = Profile(name, 30, simple);
    std::ofstream(dir + "/nccl.yaml")
        << "algorithms:\n  ring: {latency-us: 0, efficiency: 1}\n  nvls: {latency-us: 5, "
           "efficiency: "
        << nvls
        << ", protocols: [Simple]}\nprotocols:\n  Simple: {latency-us: 30, efficiency: " << simple
        << "}\n";
    return dir;
  };
  std::vector<uint64_t> sizes;
  for (uint64_t s = uint64_t{1} << 20; s <= (uint64_t{1} << 32); s *= 4) sizes.push_back(s);
  const std::string truth = profile("two_truth", 0.6, 0.9);
  const std::string nvls = SimulatedLog("two_nvls.log", truth, sizes, "# NCCL_ALGO=NVLS");
  const std::string ring = SimulatedLog("two_ring.log", truth, sizes, "# NCCL_ALGO=Ring");
  auto efficiency = [](const NcclModel& m, const std::string& name) {
    for (const NcclProtocol& p : m.protocols)
      if (p.name == name) return p.efficiency;
    for (const NcclAlgorithm& a : m.algorithms)
      if (a.name == name) return a.efficiency;
    return -1.0;
  };

  CalibrateOptions o;
  o.machine = profile("two_start", 0.8, 0.7);
  o.measurements = nvls;
  StatusOr<CalibrationResult> alone = Calibrate(o);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_LT(alone->validations[0].geomean_abs_error, 0.01);
  EXPECT_NEAR(efficiency(alone->model, "Simple") * efficiency(alone->model, "nvls"), 0.54, 0.01);
  EXPECT_GT(std::fabs(efficiency(alone->model, "Simple") - 0.6), 0.05);

  o.more = {ring};
  o.out = Tmp("two_fitted");
  StatusOr<CalibrationResult> both = Calibrate(o);
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_NEAR(efficiency(both->model, "Simple"), 0.6, 0.01);
  EXPECT_NEAR(efficiency(both->model, "nvls"), 0.9, 0.015);
  ASSERT_EQ(both->validations.size(), 2u);
  EXPECT_EQ(both->validations[1].rows.size(), sizes.size());
  for (const ValidationReport& v : both->validations) EXPECT_LT(v.geomean_abs_error, 0.01);
  for (const ValidationRow& row : both->validations[1].rows) {
    EXPECT_EQ(row.choice.rfind("ring/", 0), 0u) << row.choice;
  }
  // The written profile names both inputs.
  std::ifstream f(o.out + "/nccl.yaml");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(nvls + " and " + ring), std::string::npos) << text;

  // The command line takes --nccl-tests once per input and prints each input's table, then the
  // error over all of them.
  std::vector<std::string> args = {"calibrate", "--nccl-tests", nvls,     "--nccl-tests",
                                   ring,        "--machine",    o.machine};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(CalibrateMain(static_cast<int>(argv.size()), argv.data()), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("== " + nvls + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("== " + ring + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("sizes of 2 inputs\n"), std::string::npos) << out;

  // The same file twice would count its rows twice: refused.
  o.more = {Tmp("two_nvls.log")};
  o.out = "";
  StatusOr<CalibrationResult> twice = Calibrate(o);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "--nccl-tests '" + Tmp("two_nvls.log") +
                                          "' is the same file as '" + nvls +
                                          "': give each input once");
}

// The command line: missing or malformed flags are one clear error and exit code 1.
TEST(Calibrate, CommandLineErrors) {
  std::vector<std::string> missing = {"calibrate", "--nccl-tests", Tmp("truth.log")};
  std::vector<std::string> bad_gpus = {"calibrate", "--nccl-tests", Tmp("truth.log"),
                                       "--machine", Tmp("start"),   "--only-gpus",
                                       "16,x"};
  std::vector<std::string> unknown = {"calibrate", "--nccl-test", Tmp("truth.log")};
  for (auto* args : {&missing, &bad_gpus, &unknown}) {
    std::vector<char*> argv;
    for (std::string& a : *args) argv.push_back(a.data());
    ::testing::internal::CaptureStderr();
    const int rc = CalibrateMain(static_cast<int>(argv.size()), argv.data());
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, 1) << (*args)[1];
    EXPECT_EQ(err.rfind("error: ", 0), 0u) << err;
  }
  ::testing::internal::CaptureStderr();
  std::vector<char*> argv;
  for (std::string& a : bad_gpus) argv.push_back(a.data());
  CalibrateMain(static_cast<int>(argv.size()), argv.data());
  EXPECT_NE(
      ::testing::internal::GetCapturedStderr().find(
          "--only-gpus is '16,x'; expected a comma-separated list of integers in [1, 2147483647]"),
      std::string::npos);
}

// An --out that is a file, or whose parent directory is missing, is refused before the fit
// (the log is not even read), not after it.
TEST(Calibrate, AnOutThatCannotBeWrittenIsRefusedFirst) {
  CalibrateOptions o;
  o.measurements = Tmp("absent.log");
  o.machine = Profile("out_checks", 10, 0.9);
  std::ofstream(Tmp("out_is_a_file")) << "x";
  o.out = Tmp("out_is_a_file");
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "--out " + o.out + " is a file; give a directory for the fitted profile");
  o.out = Tmp("no_such_dir/fitted");
  r = Calibrate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--out " + o.out + ": its parent directory '" +
                                      Tmp("no_such_dir") + "' does not exist; create it first");
}

// --out naming the --machine profile itself (however spelt: a trailing slash, "..", a symlink)
// is refused before anything is fitted or written: it would overwrite the nccl.yaml it starts
// from.
TEST(Calibrate, RefusesToOverwriteTheMachineProfile) {
  const std::string machine = Profile("inplace", 10, 0.9);
  std::string before;
  {
    std::ifstream f(machine + "/nccl.yaml");
    before.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  const std::string link = Tmp("inplace-link");
  std::remove(link.c_str());
  ASSERT_EQ(symlink(machine.c_str(), link.c_str()), 0);
  CalibrateOptions o;
  o.measurements = Tmp("absent.log");  // refused before it is read
  o.machine = machine;
  for (const std::string& out : {machine, machine + "/", machine + "/../inplace", link}) {
    o.out = out;
    StatusOr<CalibrationResult> r = Calibrate(o);
    ASSERT_FALSE(r.ok()) << out;
    EXPECT_EQ(r.status().message(),
              "--out '" + out + "' is the --machine profile itself (" +
                  std::filesystem::canonical(machine).string() +
                  "): calibrate would overwrite the nccl.yaml it starts from; write the fitted "
                  "profile to another directory, e.g. --out " +
                  machine + "-calibrated, and copy its nccl.yaml over once checked");
  }
  std::ifstream f(machine + "/nccl.yaml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()),
            before);
  // A directory holding another profile's files (the user's own, edited) is not written over.
  const std::string edited = Tmp("inplace-edited");
  std::filesystem::create_directories(edited);
  std::ofstream(edited + "/system.yaml") << "# my own\n";
  o.out = edited;
  StatusOr<CalibrationResult> refused = Calibrate(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--out " + edited +
                                            " already has a system.yaml that "
                                            "differs from " +
                                            machine + "/system.yaml"),
            std::string::npos)
      << refused.status().message();
  // Another directory is fine (here: the error is then the missing log, read next).
  o.out = Tmp("inplace-calibrated");
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("absent.log: cannot read"), std::string::npos)
      << r.status().message();
}

// A row of 0 bytes (nccl-tests -b 0) is left out of the fit, as validate leaves it out: NCCL runs
// nothing for an empty buffer, so its time is nccl-tests' own overhead. (It once kept the grid of
// sizes at 0 forever; a log of nothing else is an error saying why, not a hang.)
TEST(Calibrate, ARowOfZeroBytesIsLeftOut) {
  const std::string machine = Profile("zero", 10, 0.9);
  const std::string log = Tmp("zero.log");
  std::ofstream f(log);
  f << "# Collective test starting: all_reduce_perf\n";
  for (int i = 0; i < 8; ++i)
    f << "#  Rank  " << i << " Group 0 Pid 1 on host device " << i << "\n";
  f << "  0  0  float  sum  -1  12.0  0  0  0\n"
    << "  1048576  262144  float  sum  -1  60.0  1  1  0\n"
    << "  16777216  4194304  float  sum  -1  400.0  1  1  0\n";
  f.close();
  CalibrateOptions o;
  o.measurements = log;
  o.machine = machine;
  StatusOr<CalibrationResult> r = Calibrate(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(std::isfinite(r->mean_abs_log_error));
  ASSERT_EQ(r->validations[0].rows.size(), 2u);
  EXPECT_EQ(r->validations[0].rows[0].size, 1048576u);
  for (const ValidationRow& v : r->validations[0].rows) EXPECT_TRUE(std::isfinite(v.error));
  ASSERT_EQ(r->validations[0].notes.size(), 2u);  // and the harness floor it gives (12 us)
  EXPECT_NE(r->validations[0].notes[0].find("zero.log: 1 row of 0 bytes left out"),
            std::string::npos)
      << r->validations[0].notes[0];

  // A log of only 0-byte rows.
  std::ofstream(log) << "# Collective test starting: all_reduce_perf\n"
                     << "#  Rank  7 Group 0 Pid 1 on host device 7\n"
                     << "  0  0  float  sum  -1  12.0  0  0  0\n";
  r = Calibrate(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("zero.log: no rows of 1 byte or more (rows of 0 bytes are "
                                      "left out: NCCL runs nothing for an empty buffer)"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace orrery
