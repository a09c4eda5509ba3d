// `orrery import`, `orrery analyze` and `orrery compare` run as a user runs them: bad input
// (a truncated gzip, JSON that is no trace, traces of different jobs mixed, an execution trace
// that does not match its Kineto trace, ranks missing) gives one clear message naming the file,
// what is wrong and what would be valid, and a non-zero exit; good input gives the same bytes
// every time.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "config/test_files.h"
#include "profile/input_file.h"
#include "profile/test_traces.h"

namespace orrery {
namespace {

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

CommandOutcome Orrery(const std::string& args) {
  return RunCommand("timeout 120 ./orrery " + args);
}

std::string Trace(const std::string& relative) {
  const std::string dir = profile::TracesDir();
  EXPECT_FALSE(dir.empty()) << profile::kTracesDirHelp;
  return dir + "/" + relative;
}

void ExpectError(const CommandOutcome& o, const std::string& message) {
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("error: " + message), std::string::npos) << o.err;
  // One message: one line.
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(ProfileCli, ATruncatedGzipIsNamed) {
  const std::string full = ReadWholeFile(Trace("hta/nccl_parser_config/nccl_data.json.gz"));
  ASSERT_GT(full.size(), 1000u);
  const std::string cut = Tmp("cut.json.gz");
  std::ofstream(cut, std::ios::binary) << full.substr(0, full.size() / 3);
  const std::string expected = cut + ": truncated gzip: the compressed data ends after " +
                               std::to_string(full.size() / 3) + " bytes";
  ExpectError(Orrery("import --kineto " + cut + " --output " + Tmp("cut/out")), expected);
  ExpectError(Orrery("analyze " + cut), expected);
}

TEST(ProfileCli, JsonThatIsNoTraceIsNamed) {
  const std::string et = Trace("param/linear_et.json.gz");
  ExpectError(Orrery("import --kineto " + et + " --output " + Tmp("noet/out")),
              et + ": JSON, but not a trace: it has no 'traceEvents' (its keys: schema, pid, "
                   "time, start_ts, nodes, finish_ts); it looks like a PyTorch execution trace: "
                   "give it with --et");
  const std::string kineto = Trace("param/linear_kineto.json.gz");
  ExpectError(Orrery("import --et " + kineto + " --output " + Tmp("nok/out")),
              kineto +
                  ": JSON, but not a PyTorch execution trace: it has no 'nodes' list; it "
                  "is a Kineto profile: give it with --kineto");
  const std::string garbage = Tmp("garbage.json");
  std::ofstream(garbage) << "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1,}]}";
  ExpectError(Orrery("analyze " + garbage), garbage + ": byte 37 (line 1): expected a key");
}

TEST(ProfileCli, TracesOfDifferentJobsAreRefused) {
  const std::string a = Trace("hta/trace_filter/sampled_rank-0.json.gz");
  const std::string b = Trace("hta/nccl_parser_config/nccl_data.json.gz");
  const std::string expected = "traces of different jobs: " + b +
                               " is a rank of a job of 2 "
                               "ranks, " +
                               a + " of 128";
  ExpectError(Orrery("import --kineto " + b + " --kineto " + a + " --output " + Tmp("mix/out")),
              expected);
  ExpectError(Orrery("analyze " + b + " " + a), expected);
}

TEST(ProfileCli, AnExecutionTraceThatDoesNotMatchItsKinetoTraceIsRefused) {
  const std::string et = Trace("param/linear_et.json.gz");
  const std::string kineto = Trace("param/linear_kineto.json.gz");
  ExpectError(Orrery("import --et " + et + " --kineto " + kineto + " --output " + Tmp("nm/out")),
              et + " does not match its Kineto trace " + kineto +
                  ": of its 928 operators with "
                  "a record-function id, 928 name a Kineto operator by 'External id' (it "
                  "records no 'Record function id') and 218 of those have the same name");
  // Another run's Kineto trace.
  const std::string other = Trace("hta/execution_trace/benchmark_simple_add_et.json.gz");
  const CommandOutcome o =
      Orrery("import --et " + other + " --kineto " +
             Trace("hta/nccl_parser_config/nccl_data.json.gz") + " --output " + Tmp("nm2/out"));
  ExpectError(o, other + " does not match its Kineto trace");
}

TEST(ProfileCli, MissingRanksAreNamed) {
  profile::KinetoText r0, r2;
  r0.rank = 0;
  r2.rank = 2;
  r0.world = r2.world = 4;
  r0.Kernel("gemm", 7, 100, 5, 1);
  r2.Kernel("gemm", 7, 100, 5, 1);
  std::ofstream(Tmp("r0.json")) << r0.Json();
  std::ofstream(Tmp("r2.json")) << r2.Json();
  ExpectError(Orrery("import --kineto " + Tmp("r0.json") + " --kineto " + Tmp("r2.json") +
                     " --output " + Tmp("miss/out")),
              "ranks missing: the profiles are ranks [0, 2] of a job of 4 ranks, without rank "
              "[1]");
}

TEST(ProfileCli, CompareNamesAFileThatIsNoReport) {
  const std::string other = Tmp("other.json");
  std::ofstream(other) << "{\"ranks\": []}";
  ExpectError(Orrery("compare " + other + " " + other), other + ": not a report of orrery analyze");
  ExpectError(Orrery("compare " + other), "expected two reports");
}

// The three commands end to end, twice: the same bytes.
TEST(ProfileCli, ImportAnalyzeCompareAreDeterministic) {
  const std::string profile = Trace("hta/nccl_parser_config/nccl_data.json.gz");
  std::string outputs[2];
  for (int run = 0; run < 2; ++run) {
    const std::string p = Tmp("det" + std::to_string(run));
    const CommandOutcome imp = Orrery("import --kineto " + profile + " --output " + p + "/nccl");
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
    EXPECT_NE(imp.out.find("21 collectives (15 ALL_REDUCE, 6 BROADCAST)"), std::string::npos)
        << imp.out;
    const CommandOutcome sim =
        Orrery("--workload-configuration=" + p +
               "/nccl --replicate-trace "
               "--network-configuration=examples/profiles/pcie_2gpu.yml "
               "--system-configuration=examples/profiles/nccl_ring_ll.json --timeline=" +
               p + "/t.json");
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const CommandOutcome m = Orrery("analyze " + profile + " --report " + p + "/m.json");
    const CommandOutcome s = Orrery("analyze " + p + "/t.json --report " + p + "/s.json");
    ASSERT_EQ(m.exit_code, 0) << m.err;
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const CommandOutcome c = Orrery("compare " + p + "/m.json " + p + "/s.json");
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_NE(c.out.find("busy_us"), std::string::npos);
    outputs[run] = ReadWholeFile(p + "/nccl.0.et") + imp.out + sim.out + m.out + s.out + c.out +
                   ReadWholeFile(p + "/m.json");
  }
  EXPECT_EQ(outputs[0].size(), outputs[1].size());
  // Paths differ between the runs; everything else is equal once they are removed.
  for (std::string& o : outputs) {
    for (int run = 0; run < 2; ++run) {
      const std::string p = Tmp("det" + std::to_string(run));
      for (size_t at; (at = o.find(p)) != std::string::npos;) o.replace(at, p.size(), "P");
    }
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

}  // namespace
}  // namespace orrery
