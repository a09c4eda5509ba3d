#include "validate/calibrate.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>

namespace orrery {
namespace {

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// An 8-NPU switch profile whose NCCL runs ring with one protocol.
std::string Profile(const std::string& name, double latency_us, double efficiency) {
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
                                    << latency_us << ", efficiency: " << efficiency << "}\n";
  return dir;
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
  EXPECT_LT(r->validation.geomean_abs_error, 0.01);
  StatusOr<NcclModel> written = LoadNcclModel(o.out + "/nccl.yaml");
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_DOUBLE_EQ(written->protocols[0].efficiency, r->model.protocols[0].efficiency);
  struct stat st;
  EXPECT_EQ(stat((o.out + "/system.yaml").c_str(), &st), 0);
  EXPECT_EQ(stat((o.out + "/README.md").c_str(), &st), 0);

  // The same inputs give the same numbers (the fit is deterministic).
  o.out = "";
  StatusOr<CalibrationResult> again = Calibrate(o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->model.protocols[0].latency_us, r->model.protocols[0].latency_us);
  EXPECT_EQ(again->model.protocols[0].efficiency, r->model.protocols[0].efficiency);
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
  EXPECT_NE(::testing::internal::GetCapturedStderr().find(
                "--only-gpus '16,x': bad GPU count 'x'; expected whole numbers >= 1"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery
