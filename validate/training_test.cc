#include "validate/training.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "et_feeder/llm_workload.h"
#include "runner/run.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

std::string Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

// A machine of two GPUs on one switch, with a GPU model of round numbers.
std::string TinyProfile(const std::string& root) {
  const std::string dir = root + "/machines/tiny";
  Write(dir + "/network.yaml",
        "topology: [ Switch ]\nnpus_count: [ 2 ]\nbandwidth: [ 100.0 ]\nlatency: [ 500.0 ]\n");
  Write(dir + "/system.yaml",
        "scheduling-policy: LIFO\nendpoint-delay: 10\nactive-chunks-per-dimension: 1\n"
        "preferred-dataset-splits: 4\nall-reduce-implementation: [ring]\n"
        "all-gather-implementation: [ring]\nreduce-scatter-implementation: [ring]\n"
        "all-to-all-implementation: [ring]\ncollective-optimization: localBWAware\n"
        "local-mem-bw: 1000\ncommunication-slots: 2\n");
  Write(dir + "/gpu.yaml",
        "name: tiny\npeak-tflops-bf16: 100\nmemory-bandwidth-gbps: 1000\nsms: 10\n"
        "gemm-efficiency-bf16: 0.5\n");
  return dir;
}

const char kRun[] =
    "  - name: %s\n"
    "    source: \"a test\"\n"
    "    machine: tiny\n"
    "    gpus: 2\n"
    "    generate: \"%s\"\n"
    "    measured: %s\n"
    "    held_out: true\n";

std::string RunEntry(const std::string& name, const std::string& generate, const std::string& m) {
  char b[1024];
  std::snprintf(b, sizeof b, kRun, name.c_str(), generate.c_str(), m.c_str());
  return b;
}

const char kModel[] =
    "--layers 2 --hidden 256 --heads 4 --vocab 1000 --seq-length 128 --dp 2 "
    "--global-batch-size 8";

TEST(Training, PredictsWhatTheSimulatorRunsAndConvertsTheFigures) {
  const std::string root = ::testing::TempDir() + "/training_ok";
  TinyProfile(root);
  const std::string runs =
      Write(root + "/training/runs.yaml",
            "runs:\n" + RunEntry("step", kModel, "{step_time_s: 0.01}") +
                RunEntry("tokens", kModel, "{tokens_per_s_per_gpu: 2000}") +
                RunEntry("tflops", kModel, "{tflops_per_gpu: 10, flops: megatron}") +
                RunEntry("bad", std::string(kModel) + " --pipeline 2", "{step_time_s: 1}"));
  TrainingOptions o;
  o.runs = runs;
  o.jobs = 2;
  StatusOr<TrainingReport> r = ValidateTraining(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->runs.size(), 4u);

  // The same step generated and simulated by hand: the profile's network as it is (2 GPUs).
  StatusOr<et::LlmConfig> c = et::LlmConfigFromFlags(
      {"--layers", "2", "--hidden", "256", "--heads", "4", "--vocab", "1000", "--seq-length", "128",
       "--dp", "2", "--global-batch-size", "8", "--gpu-model", root + "/machines/tiny/gpu.yaml"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string prefix = root + "/by_hand/step";
  fs::create_directories(root + "/by_hand");
  ASSERT_TRUE(et::WriteLlmWorkload(*c, prefix).ok());
  RunOptions run;
  run.workload = prefix;
  run.system_config = root + "/machines/tiny/system.yaml";
  run.network_config = root + "/machines/tiny/network.yaml";
  StatusOr<RunResult> sim = RunSimulation(run);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const double predicted = static_cast<double>(sim->end.ps()) * 1e-12;

  const TrainingResult& step = r->runs[0];
  ASSERT_TRUE(step.ok()) << step.problem;
  EXPECT_DOUBLE_EQ(step.predicted_s, predicted);
  EXPECT_DOUBLE_EQ(step.measured_s, 0.01);
  EXPECT_DOUBLE_EQ(step.error, (predicted - 0.01) / 0.01);
  // 8 sequences of 128 tokens at 2000 tokens/s on each of 2 GPUs: 0.256 s.
  EXPECT_DOUBLE_EQ(r->runs[1].measured_s, 8.0 * 128 / (2000.0 * 2));
  // Megatron's count, 72·B·s·L·h²·(1 + s/6h + V/12Lh), at 10 TFLOPS on each of 2 GPUs.
  const double B = 8, s = 128, L = 2, h = 256, V = 1000;
  EXPECT_DOUBLE_EQ(r->runs[2].measured_s,
                   72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)) / (10e12 * 2));
  // The run with an unknown flag is an error naming it; the others ran.
  EXPECT_FALSE(r->runs[3].ok());
  EXPECT_NE(r->runs[3].problem.find("pipeline"), std::string::npos) << r->runs[3].problem;
  EXPECT_EQ(r->failed, 1);
  const std::string table = FormatTraining(*r);
  EXPECT_NE(table.find("bad: error: generate:"), std::string::npos) << table;
  // The last line is the error over the runs simulated.
  const std::string last = table.substr(table.rfind('\n', table.size() - 2) + 1);
  EXPECT_EQ(last.rfind("geomean error: ", 0), 0u) << table;
  EXPECT_NE(last.find("over 3 runs"), std::string::npos) << table;
}

TEST(Training, AGpuCountTheStepDoesNotMakeIsNamed) {
  const std::string root = ::testing::TempDir() + "/training_gpus";
  TinyProfile(root);
  const std::string runs = Write(
      root + "/training/runs.yaml",
      "runs:\n" + RunEntry("four", "--layers 2 --hidden 256 --heads 4 --dp 4", "{step_time_s: 1}"));
  TrainingOptions o;
  o.runs = runs;
  StatusOr<TrainingReport> r = ValidateTraining(o);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->runs[0].ok());
  EXPECT_NE(r->runs[0].problem.find("makes 4 NPUs"), std::string::npos) << r->runs[0].problem;
}

// The profile's network goes through the project's one YAML loader (config/schema.h): an alias
// bomb (nine levels of ten references: 10^9 nodes once expanded) is refused with the file and the
// alias, as a problem of that run, and a node count that is no number is named.
TEST(Training, AProfileNetworkIsReadByTheProjectsLoader) {
  const std::string root = ::testing::TempDir() + "/training_bomb";
  const std::string dir = TinyProfile(root);
  std::string bomb = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p;
    for (int j = 1; j < 10; ++j) bomb += ", " + p;
    bomb += "]\n";
  }
  Write(dir + "/network.yaml", bomb + "topology: [ Switch ]\nnpus_count: [ 2 ]\n");
  const std::string runs =
      Write(root + "/training/runs.yaml", "runs:\n" + RunEntry("bomb", kModel, "{step_time_s: 1}"));
  TrainingOptions o;
  o.runs = runs;
  StatusOr<TrainingReport> r = ValidateTraining(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->runs[0].ok());
  EXPECT_NE(r->runs[0].problem.find("network.yaml"), std::string::npos) << r->runs[0].problem;
  EXPECT_NE(r->runs[0].problem.find("alias"), std::string::npos) << r->runs[0].problem;

  Write(dir + "/network.yaml", "topology: [ Switch ]\nnpus_count: [ two ]\n");
  r = ValidateTraining(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->runs[0].ok());
  EXPECT_NE(r->runs[0].problem.find("npus_count[0] is 'two'"), std::string::npos)
      << r->runs[0].problem;
}

TEST(Training, EveryProblemOfARunsFileIsNamed) {
  const std::string root = ::testing::TempDir() + "/training_bad";
  const std::string runs = Write(root + "/runs.yaml",
                                 "runs:\n"
                                 "  - name: a\n"
                                 "    source: x\n"
                                 "    machine: tiny\n"
                                 "    gpus: 2.5\n"
                                 "    generate: \"--dp 2\"\n"
                                 "    measured: {step_time_s: 1, mfu: 0.4}\n"
                                 "    held_out: false\n"
                                 "    colour: red\n"
                                 "  - name: a\n"
                                 "    source: x\n"
                                 "    machine: tiny\n"
                                 "    gpus: 2\n"
                                 "    generate: \"--dp 2\"\n"
                                 "    measured: {tflops_per_gpu: 100}\n");
  StatusOr<std::vector<TrainingRun>> r = LoadTrainingRuns(runs);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  for (const char* expected :
       {"gpus is '2.5'", "a second figure", "'sets' does not say", "colour is unknown",
        "used twice", "needs 'flops'", "'held_out' is missing", "runs.yaml:2"}) {
    EXPECT_NE(m.find(expected), std::string::npos) << expected << "\n" << m;
  }
}

// The command line: a bad flag is one message naming it and what is valid, before any run.
TEST(Training, CommandLineErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"validate", "--training", "runs.yaml", "--jobs", "5000"},
       "error: validate --training: --jobs is '5000'; expected an integer in [0, 4096]\n"},
      {{"validate", "--training", "runs.yaml", "--jobs=x", "--jbos", "1"},
       "error: validate --training: unknown flag '--jbos'; did you mean '--jobs'?\n"},
  };
  for (auto [args, expected] : cases) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStderr();
    const int rc = TrainingValidateMain(static_cast<int>(argv.size()), argv.data());
    EXPECT_EQ(rc, 1);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), expected);
  }
}

}  // namespace
}  // namespace orrery
