// The `orrery` command line, run as a user runs it: bad inputs give one clear message and a
// non-zero exit (never a crash or a hang), good inputs give the same bytes every time, and the
// real PyTorch Chakra trace runs on 4 NPUs on both backends.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "config/test_files.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace {

using ChakraProtoMsg::Node;

void Spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// Whether this test, and so the ./orrery beside it (built in the same configuration), runs
// under AddressSanitizer.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// The time a command may take before it counts as hung: 120 s, five times that under
// AddressSanitizer (about three times slower; an interrupted 512-NPU sweep's resume took more
// than 120 s under it beside three other sanitized tests on 2 cores).
const std::string kTimeout = kAddressSanitizer ? "timeout 600 " : "timeout 120 ";

// Runs ./orrery with `args` under kTimeout (a hang fails the test with exit 124).
CommandOutcome Orrery(const std::string& args) { return RunCommand(kTimeout + "./orrery " + args); }

const char* kSystem = R"({
  "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
  "local-mem-bw": 1600
})";

std::string RingNetwork(int npus) {
  return "topology: [ Ring ]\nnpus_count: [ " + std::to_string(npus) +
         " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
}

// A case directory with system.json and net.yml for `npus` NPUs, and `ranks` written as traces.
std::string Args(const std::string& name, int npus, const std::vector<std::vector<Node>>& ranks,
                 const std::string& system = kSystem) {
  const std::string prefix = Tmp(name);
  Spit(prefix + ".system.json", system);
  Spit(prefix + ".net.yml", RingNetwork(npus));
  if (!ranks.empty()) {
    Status s = et::WriteRankFiles(prefix, ranks);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return "--workload-configuration=" + prefix + " --system-configuration=" + prefix +
         ".system.json --network-configuration=" + prefix + ".net.yml";
}

std::vector<std::vector<Node>> AllReduceRanks(int npus) {
  std::vector<std::vector<Node>> ranks(npus);
  for (auto& r : ranks) {
    r = {et::MakeCompNode(1, "fwd", 5),
         et::MakeCollNode(2, "grad", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1})};
  }
  return ranks;
}

// `text` with every `from` replaced by `to`.
std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

void ExpectCleanFailure(const CommandOutcome& o, const std::vector<std::string>& needles) {
  EXPECT_NE(o.exit_code, 0) << o.err;
  EXPECT_LT(o.exit_code, 124) << "crashed or hung: " << o.err;
  EXPECT_NE(o.err.find("error: "), std::string::npos) << o.err;
  for (const auto& needle : needles) {
    EXPECT_NE(o.err.find(needle), std::string::npos) << "missing '" << needle << "' in:\n" << o.err;
  }
  EXPECT_EQ(o.out.find("finished"), std::string::npos) << o.out;
}

TEST(Cli, GoodRunPrintsAstraSimLinesAndSummary) {
  // 4-NPU ring all-reduce of 1 MiB after 5 us of compute: 5000 + 43000 ns (REFERENCE.md gives
  // 43000 for the bare all-reduce on this network and system config).
  const CommandOutcome o =
      Orrery(Args("good", 4, AllReduceRanks(4)) + " --network-backend=analytical-unaware");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(o.out.find("sys[" + std::to_string(i) +
                         "] finished, 48000 cycles, exposed communication 43000 cycles."),
              std::string::npos)
        << o.out;
  }
  EXPECT_NE(o.out.find("summary: 4 NPUs"), std::string::npos) << o.out;
}

// Every output at once; the summary table on stdout shows the same breakdown as the report.
TEST(Cli, TimelineReportAndLogFileAreWritten) {
  const std::string base = Tmp("outputs");
  const CommandOutcome o =
      Orrery(Args("outputs", 4, AllReduceRanks(4)) + " --timeline=" + base +
             ".trace.json --timeline-chakra " + base + ".txt --report=" + base +
             ".report.json --report-csv=" + base + " --log-file=" + base + ".log");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(ReadWholeFile(base + ".trace.json").find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(ReadWholeFile(base + ".txt").find("callback,sys->id=3, tick=48000"), std::string::npos);
  EXPECT_NE(ReadWholeFile(base + ".report.json").find("\"exposed_communication\": 43000"),
            std::string::npos);
  EXPECT_NE(ReadWholeFile(base + ".npus.csv").find("\n0,48000,5000,0,43000,43000,0,0,0,0\n"),
            std::string::npos);
  EXPECT_NE(ReadWholeFile(base + ".log").find("events in"), std::string::npos);
  const size_t row = o.out.find("exposed communication", o.out.find("summary:"));
  ASSERT_NE(row, std::string::npos) << o.out;
  const std::string line = o.out.substr(row, o.out.find('\n', row) - row);
  EXPECT_NE(line.find("43.000"), line.rfind("43.000")) << line;  // mean and slowest NPU
}

// --timeline-chunks off leaves the chunk lanes out of a timeline (for large runs), and only them.
TEST(Cli, TimelineChunksOffLeavesChunkLanesOut) {
  const std::string base = Tmp("chunks");
  const std::string args = Args("chunks", 4, AllReduceRanks(4));
  const CommandOutcome on = Orrery(args + " --timeline=" + base + ".on.json");
  const CommandOutcome off =
      Orrery(args + " --timeline=" + base + ".off.json --timeline-chunks off");
  ASSERT_EQ(on.exit_code, 0) << on.err;
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(on.out, off.out);
  const std::string with = ReadWholeFile(base + ".on.json"),
                    without = ReadWholeFile(base + ".off.json");
  EXPECT_NE(with.find("\"cat\":\"chunk\""), std::string::npos);
  EXPECT_NE(with.find("\"name\":\"chunks 0\""), std::string::npos);
  EXPECT_EQ(without.find("\"cat\":\"chunk\""), std::string::npos);
  EXPECT_EQ(without.find("\"name\":\"chunks 0\""), std::string::npos);
  EXPECT_NE(without.find("\"cat\":\"collective\""), std::string::npos);
  EXPECT_NE(without.find("\"cat\":\"critical path\""), std::string::npos);
  ExpectCleanFailure(Orrery(args + " --timeline=" + base + ".json --timeline-chunks no"),
                     {"--timeline-chunks is 'no'; expected one of on, off"});
  ExpectCleanFailure(Orrery(args + " --timeline-chunks off"),
                     {"--timeline-chunks off leaves chunk lanes out of a --timeline, but none is "
                      "given"});
}

TEST(Cli, TimelineNpusSelectsTheNpusShown) {
  const std::string base = Tmp("shown");
  const std::string args = Args("shown", 4, AllReduceRanks(4));
  const CommandOutcome o = Orrery(args + " --timeline=" + base + ".trace.json --timeline-chakra " +
                                  base + ".txt --timeline-npus 2-3");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string chakra = ReadWholeFile(base + ".txt");
  EXPECT_NE(chakra.find("callback,sys->id=3, tick=48000"), std::string::npos) << chakra;
  EXPECT_EQ(chakra.find("sys->id=0,"), std::string::npos) << chakra;
  const std::string chrome = ReadWholeFile(base + ".trace.json");
  EXPECT_NE(chrome.find("\"pid\":3,"), std::string::npos);  // NPU 2 (pids count from 1)
  EXPECT_EQ(chrome.find("\"pid\":2,"), std::string::npos);  // NPU 1
  // Without a timeline it selects nothing: an error before the run, as is an NPU not there.
  CommandOutcome bad = Orrery(args + " --timeline-npus 1");
  ExpectCleanFailure(bad, {"--timeline-npus '1'", "no --timeline or --timeline-chakra"});
  EXPECT_EQ(bad.err.find("events in"), std::string::npos) << bad.err;
  bad = Orrery(args + " --timeline=" + base + ".trace.json --timeline-npus 0,7");
  ExpectCleanFailure(bad, {"--timeline-npus '0,7' names NPU 7; expected NPU ids in [0, 3]"});
  EXPECT_EQ(bad.err.find("events in"), std::string::npos) << bad.err;
}

TEST(Cli, UnknownLogLevelListsTheValidOnes) {
  ExpectCleanFailure(Orrery(Args("loglevel", 4, AllReduceRanks(4)) + " --log-level=loud"),
                     {"--log-level", "loud", "trace, debug, info, warn, error, off"});
}

// A misspelled flag is named with a suggestion, with or without '=value' (the value had been
// counted in the distance, and no suggestion came); a prefix of a flag is not that flag
// ('--comm-scal=2' had run as --comm-scale 2), here or in a subcommand.
TEST(Cli, MisspelledFlagsAreNamedAndPrefixesAreNotFlags) {
  const std::string args = Args("misspelled", 4, AllReduceRanks(4));
  for (const char* flag : {"--network-backed=packet", "--network-backed packet"}) {
    const CommandOutcome o = Orrery(args + " " + flag);
    EXPECT_NE(o.exit_code, 0) << flag;
    EXPECT_NE(o.err.find("did you mean '--network-backend'?"), std::string::npos) << o.err;
  }
  const CommandOutcome prefix = Orrery(args + " --comm-scal=2");
  EXPECT_NE(prefix.exit_code, 0);
  EXPECT_NE(prefix.err.find("unknown flag '--comm-scal=2'; did you mean '--comm-scale'?"),
            std::string::npos)
      << prefix.err;
  const CommandOutcome sweep = Orrery("sweep --sha 0/2 nothing.yaml");
  EXPECT_NE(sweep.exit_code, 0);
  EXPECT_NE(sweep.err.find("'--sha'"), std::string::npos) << sweep.err;
  // Every subcommand suggests the flag it has closest to a misspelled one, with or without a
  // value after '=' (they had said only "unrecognised option").
  const std::vector<std::pair<std::string, std::string>> subcommands = {
      {"validate --nccl-tests x.log --machne configs/machines/hgx-h100",
       "validate: unknown flag '--machne'; did you mean '--machine'?"},
      {"calibrate --nccl-test=x.log",
       "unknown flag '--nccl-test=x.log'; did you mean "
       "'--nccl-tests'?"},
      {"sweep --resme spec.yaml", "sweep: unknown flag '--resme'; did you mean '--resume'?"},
      {"sweep merge --otu x a.csv", "unknown flag '--otu'; did you mean '--out'?"},
      {"trace-info --jsn x.json x", "trace-info: unknown flag '--jsn'; did you mean '--json'?"},
      {"convert-text --inptu x", "convert-text: unknown flag '--inptu'; did you mean '--input'?"},
      {"generate-llm --layrs 4", "generate-llm: unknown flag '--layrs'; did you mean '--layers'?"},
  };
  for (const auto& [command, message] : subcommands) {
    const CommandOutcome o = Orrery(command);
    EXPECT_NE(o.exit_code, 0) << command;
    EXPECT_NE(o.err.find(message), std::string::npos) << command << ": " << o.err;
  }
}

// A word that is no flag's value is an error naming it: '--replicate-trace false' had run with
// replication on (the 'false' dropped), and a stray word had been ignored, in every command.
TEST(Cli, AWordThatIsNoFlagsValueIsAnError) {
  const std::string args = Args("stray", 4, AllReduceRanks(4));
  CommandOutcome o = Orrery(args + " --replicate-trace false");
  ExpectCleanFailure(o, {"unexpected argument 'false' after --replicate-trace, a switch that takes "
                         "no value (give it for on, leave it out for off)"});
  EXPECT_EQ(o.err.find("events in"), std::string::npos) << o.err;
  o = Orrery(args + " stray.json");
  ExpectCleanFailure(o, {"unexpected argument 'stray.json' after --network-configuration=",
                         ".net.yml: a flag takes one value"});
  for (const std::string& command :
       {std::string("validate --nccl-tests x.log --machine configs/machines/hgx-h100 --in-place "
                    "false"),
        std::string("convert-text --input x --output y extra"),
        std::string("generate-llm --output y --sequence-parallel false")}) {
    o = Orrery(command);
    EXPECT_NE(o.exit_code, 0) << command;
    EXPECT_NE(o.err.find("unexpected argument '"), std::string::npos) << command << ": " << o.err;
  }
}

// gen_workload (scripts/bench.sh's trace writer) names a bad number, an unknown flag (with the
// closest one), a repeated one or one without a value; it had written a 1-byte all-reduce for
// --size 1e6 and 4 NPUs for --npus 4abc. A size is digits up to 2^53 (2^53 + 1 would round to
// 2^53 as a double).
TEST(Cli, GenWorkloadRefusesBadNumbers) {
  const std::string out = Tmp("gw/z");
  auto gen = [&](const std::string& args) {
    const std::string err = Tmp("gw_err");
    const int status = std::system(("./et_feeder/gen_workload " + args + " 2>" + err).c_str());
    EXPECT_TRUE(WIFEXITED(status)) << args;
    return std::make_pair(WEXITSTATUS(status), ReadWholeFile(err));
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"collective --size 1e6 --npus 4 --out " + out,
       "--size is '1e6'; expected a whole number of digits in [0, 9007199254740992]"},
      {"collective --size -5 --npus 4 --out " + out, "--size is '-5'"},
      {"collective --npus 4abc --out " + out,
       "gen_workload collective: --npus is '4abc'; expected an integer in [1, 16777216]"},
      {"dp-step --npus 4 --layers 0 --out " + out, "--layers is '0'"},
      {"collective --size 9007199254740993 --npus 4 --out " + out,
       "--size is '9007199254740993'; expected a whole number of digits in [0, 9007199254740992]"},
      {"collective --npus 4 --sise 8 --out " + out,
       "gen_workload collective: unknown flag '--sise'; did you mean '--size'?"},
      {"dp-step --npus 4 --layer 2 --out " + out,
       "unknown flag '--layer'; did you mean '--layers'?"},
      {"collective --type all_redcue --npus 4 --out " + out,
       "--type is 'all_redcue'; expected one of all_reduce, all_gather, reduce_scatter, all_to_all "
       "(did you mean 'all_reduce'?)"},
      {"collective --npus 4 --out", "the required argument for option '--out' is missing"},
      {"collective --npus 4 --npus 8 --out " + out, "'--npus' cannot be specified more than once"},
  };
  for (const auto& [args, message] : cases) {
    const auto [code, err] = gen(args);
    EXPECT_EQ(code, 1) << args;
    EXPECT_NE(err.find(message), std::string::npos) << args << ": " << err;
  }
  const auto [code, err] = gen("collective --size 4096 --npus 2 --out " + out);
  EXPECT_EQ(code, 0) << err;
  const CommandOutcome info = Orrery("trace-info " + out);
  EXPECT_NE(info.out.find("ALL_REDUCE: 1 (4096 B)"), std::string::npos) << info.out;
}

// Each gen_workload mode lists its flags (from their one declaration) with --help, and exits 0.
TEST(Cli, GenWorkloadModesHaveHelp) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> modes = {
      {"collective", {"--type", "--size", "--npus", "--out"}},
      {"dp-step", {"--npus", "--layers", "--out"}}};
  for (const auto& [mode, flags] : modes) {
    const std::string help = Tmp("gw_help");
    const int status =
        std::system(("./et_feeder/gen_workload " + mode + " --help > " + help).c_str());
    ASSERT_TRUE(WIFEXITED(status)) << mode;
    EXPECT_EQ(WEXITSTATUS(status), 0) << mode;
    const std::string text = ReadWholeFile(help);
    for (const std::string& flag : flags) {
      EXPECT_NE(text.find("  " + flag + " arg"), std::string::npos) << mode << ": " << text;
    }
  }
}

// convert-text's two spellings of one flag given together are refused (the Chakra spelling had
// silently won: --num-npus 4 --num_npus 8 wrote 8 files).
TEST(Cli, ConvertTextRefusesBothSpellingsOfAFlag) {
  const std::string input = "examples/text/cnn_data.txt", out = Tmp("both_spellings");
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--num-npus 4 --num_npus 8", "--num-npus and --num_npus are the same flag"},
           {"--num-npus 4 --num-passes 1 --num_passes 2",
            "--num-passes and --num_passes are the same flag"},
           {"--num-npus 4 --input_filename " + input,
            "--input and --input_filename are the same flag"}}) {
    const CommandOutcome o =
        Orrery("convert-text --input " + input + " --output " + out + " " + args);
    ExpectCleanFailure(o, {message});
  }
  EXPECT_EQ(Orrery("convert-text --input_filename " + input + " --output " + out +
                   " --num-npus 2 --num_passes 1")
                .exit_code,
            0);
}

// trace-enabled: 1 logs a line per node issued and completed, in ASTRA-sim's words (the key had
// been accepted and had done nothing). NPU 1: fwd (5 us) at 0, then the all-reduce at 5000.
TEST(Cli, TraceEnabledLogsEveryNodesIssueAndCompletion) {
  const std::string system =
      Replaced(kSystem, "\"endpoint-delay\"", "\"trace-enabled\": 1, \"endpoint-delay\"");
  ASSERT_NE(system, kSystem);
  const CommandOutcome o = Orrery(Args("trace_enabled", 2, AllReduceRanks(2), system));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* line :
       {"issue,sys->id=1, tick=0, node->id=1, node->name=fwd, node->type=4",
        "callback,sys->id=1, tick=5000, node->id=1, node->name=fwd, node->type=4",
        "issue,sys->id=1, tick=5000, node->id=2, node->name=grad, node->type=7"}) {
    EXPECT_NE(o.err.find(line), std::string::npos) << line << "\n" << o.err;
  }
  // Each of NPU 0's two nodes completes once.
  size_t callbacks = 0;
  for (size_t at = o.err.find("callback,sys->id=0,"); at != std::string::npos;
       at = o.err.find("callback,sys->id=0,", at + 1)) {
    ++callbacks;
  }
  EXPECT_EQ(callbacks, 2u) << o.err;
  const CommandOutcome plain = Orrery(Args("trace_disabled", 2, AllReduceRanks(2)));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find("issue,sys->id="), std::string::npos) << plain.err;
}

TEST(Cli, UnwritableOutputsAreErrorsBeforeTheRun) {
  // Checked before simulating (a typo must not cost a whole run): no "events in" line.
  const std::string args = Args("unwritable", 4, AllReduceRanks(4));
  CommandOutcome o = Orrery(args + " --report=/nonexistent-dir/report.json");
  ExpectCleanFailure(o, {"--report '/nonexistent-dir/report.json': the directory "
                         "'/nonexistent-dir' does not exist; create it first"});
  EXPECT_EQ(o.err.find("events in"), std::string::npos) << o.err;
  const std::string dir = ::testing::TempDir();
  // A CSV prefix that is a directory would write hidden files dir/.npus.csv, ...
  o = Orrery(args + " --report-csv=" + dir + "/");
  ExpectCleanFailure(
      o, {"--report-csv '" + dir + "/' is a directory; expected a file prefix", "run.npus.csv"});
  EXPECT_EQ(o.err.find("events in"), std::string::npos) << o.err;
  o = Orrery(args + " --timeline=" + dir);
  ExpectCleanFailure(o, {"--timeline '" + dir + "' is a directory; expected a file path"});
  o = Orrery(args + " --link-stats=/nonexistent-dir/links.csv");
  ExpectCleanFailure(o, {"--link-stats '/nonexistent-dir/links.csv'", "does not exist"});
  // The log file too: spdlog alone would create the missing directory.
  const std::string missing = dir + "/no-such-dir";
  o = Orrery(args + " --log-file=" + missing + "/run.log");
  ExpectCleanFailure(o, {"--log-file '" + missing + "/run.log'", "does not exist"});
  EXPECT_FALSE(std::filesystem::exists(missing));
}

// `orrery sweep`: Slurm's array variables pick the shard; `sweep merge` joins the shards into
// what one unsharded run writes; a failing point makes the exit code 2.
TEST(Cli, SweepShardsFromSlurmAndMerges) {
  Args("sweepbase", 4, {});  // writes sweepbase.system.json and sweepbase.net.yml
  const std::string spec = Tmp("cli.sweep.yaml");
  Spit(spec,
       "base:\n  system: sweepbase.system.json\n  network: sweepbase.net.yml\n"
       "  workload: {collective: all_reduce, size: 1048576}\n"
       "grid:\n  workload.collective: [all_reduce, all_gather]\n"
       "  backend: [analytical-aware, analytical-unaware]\n");
  const CommandOutcome whole =
      Orrery("sweep " + spec + " --quiet --jobs 2 --out " + Tmp("sw_whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(whole.out.find("4 points: 4 run, 0 kept from an earlier run, 0 failed"),
            std::string::npos)
      << whole.out;
  for (int id = 1; id <= 2; ++id) {  // an array job --array=1-2
    const std::string env = "SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                            " SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=2 ";
    const int rc = std::system((env + "timeout 120 ./orrery sweep " + spec + " --quiet --out " +
                                Tmp("sw_task" + std::to_string(id)) + " > /dev/null")
                                   .c_str());
    ASSERT_EQ(rc, 0);
  }
  EXPECT_EQ(ReadWholeFile(Tmp("sw_task1.csv")).find("\n1,"),
            std::string::npos);  // task 1 = shard 0
  // --array=0-4:4: ids 0 and 4, step 4, are shards 0 and 1 (id 4 had been refused as shard 4).
  for (int id : {0, 4}) {
    const std::string env = "SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                            " SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=4 "
                            "SLURM_ARRAY_TASK_COUNT=2 ";
    const int rc = std::system((env + "timeout 120 ./orrery sweep " + spec + " --quiet --out " +
                                Tmp("sw_step" + std::to_string(id)) + " > /dev/null")
                                   .c_str());
    ASSERT_EQ(rc, 0);
  }
  EXPECT_EQ(ReadWholeFile(Tmp("sw_step0.csv")), ReadWholeFile(Tmp("sw_task1.csv")));
  EXPECT_EQ(ReadWholeFile(Tmp("sw_step4.csv")), ReadWholeFile(Tmp("sw_task2.csv")));
  const CommandOutcome merged = Orrery("sweep merge --out " + Tmp("sw_merged") + " " +
                                       Tmp("sw_task1.csv") + " " + Tmp("sw_task2.csv"));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(ReadWholeFile(Tmp("sw_merged.csv")), ReadWholeFile(Tmp("sw_whole.csv")));

  Spit(spec,
       "base:\n  system: sweepbase.system.json\n  network: sweepbase.net.yml\n"
       "  workload: {collective: all_reduce, size: 1048576}\n"
       "grid:\n  network.bandwidth: [[50.0], [-5.0]]\n");
  const CommandOutcome failing = Orrery("sweep " + spec + " --quiet --out " + Tmp("sw_fail"));
  EXPECT_EQ(failing.exit_code, 2) << failing.out << failing.err;
  EXPECT_NE(failing.out.find("2 points: 2 run, 0 kept from an earlier run, 1 failed"),
            std::string::npos);
}

// Ctrl-C in the middle of a sweep: exit 130, a CSV of whole rows only, and --resume finishes
// the rest without redoing what was done.
TEST(Cli, InterruptedSweepResumes) {
  Args("intbase", 4, {});
  Spit(Tmp("intbase.net.yml"),
       "topology: [ Ring ]\nnpus_count: [ 512 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
  const std::string spec = Tmp("int.sweep.yaml");
  std::string sizes;
  for (int i = 1; i <= 20; ++i) sizes += (i > 1 ? ", " : "") + std::to_string(i << 20);
  Spit(spec,
       "base:\n  system: intbase.system.json\n  network: intbase.net.yml\n"
       "  workload: {collective: all_reduce, size: 1048576}\n"
       "grid:\n  workload.size: [" +
           sizes + "]\n");
  const std::string out = Tmp("int_out");
  // Interrupt as soon as the first point is in the CSV (header + 1 row), whatever the load on
  // the machine; give up waiting after 120 s.
  const std::string cmd = "./orrery sweep " + spec + " --jobs 1 --quiet --out " + out +
                          " > /dev/null 2>&1 & pid=$!; for i in $(seq 2400); do "
                          "[ \"$(cat " +
                          out +
                          ".csv 2>/dev/null | wc -l)\" -ge 2 ] && break; "
                          "sleep 0.05; done; kill -INT $pid; wait $pid";
  const int status = std::system(("bash -c '" + cmd + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 130) << "the sweep was not interrupted";
  std::stringstream csv(ReadWholeFile(out + ".csv"));
  std::string line;
  int rows = -1;  // the header
  while (std::getline(csv, line)) {
    ++rows;
    if (rows > 0) {
      EXPECT_EQ(line.substr(line.find(',') + 1, 3), "ok,") << line;
    }
  }
  EXPECT_GT(rows, 0);
  EXPECT_LT(rows, 20);
  const CommandOutcome resumed =
      Orrery("sweep " + spec + " --jobs 2 --quiet --resume --out " + out);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("20 points: " + std::to_string(20 - rows) + " run, " +
                             std::to_string(rows) + " kept from an earlier run, 0 failed"),
            std::string::npos)
      << resumed.out;
}

TEST(Cli, SpaceSeparatedFlagsWorkLikeEquals) {
  const std::string prefix = Tmp("spaced");
  Args("spaced", 4, AllReduceRanks(4));
  const CommandOutcome a =
      Orrery("--workload-configuration " + prefix + " --system-configuration " + prefix +
             ".system.json --network-configuration " + prefix +
             ".net.yml --network-backend analytical-unaware");
  const CommandOutcome b =
      Orrery("--workload-configuration=" + prefix + " --system-configuration=" + prefix +
             ".system.json --network-configuration=" + prefix +
             ".net.yml --network-backend=analytical-unaware");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(Cli, ScalesChangeTheResult) {
  // --compute-scale 2 doubles the 5 us compute; --comm-scale 2 doubles the collective size.
  const std::string args =
      Args("scales", 4, AllReduceRanks(4)) + " --network-backend=analytical-unaware";
  const CommandOutcome base = Orrery(args);
  const CommandOutcome compute = Orrery(args + " --compute-scale=2");
  const CommandOutcome comm = Orrery(args + " --comm-scale=2");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(compute.exit_code, 0) << compute.err;
  ASSERT_EQ(comm.exit_code, 0) << comm.err;
  EXPECT_NE(compute.out.find("sys[0] finished, 53000 cycles"), std::string::npos) << compute.out;
  EXPECT_EQ(comm.out.find("sys[0] finished, 48000 cycles"), std::string::npos) << comm.out;
  EXPECT_NE(comm.out.find("sys[0] finished"), std::string::npos) << comm.out;
}

TEST(Cli, TruncatedTraceNamesTheFile) {
  const std::string args = Args("truncated", 4, AllReduceRanks(4));
  const std::string path = Tmp("truncated.2.et");
  std::string bytes = ReadWholeFile(path);
  ASSERT_GT(bytes.size(), 10u);
  Spit(path, bytes.substr(0, bytes.size() - 7));
  ExpectCleanFailure(Orrery(args), {"truncated.2.et"});
}

TEST(Cli, EmptyTraceNamesTheFile) {
  const std::string args = Args("empty_et", 4, AllReduceRanks(4));
  Spit(Tmp("empty_et.1.et"), "");
  ExpectCleanFailure(Orrery(args), {"empty_et.1.et"});
}

TEST(Cli, GarbageTraceNamesTheFile) {
  const std::string args = Args("garbage", 4, AllReduceRanks(4));
  Spit(Tmp("garbage.3.et"), "this is not a chakra trace, just some text\n\x01\x02\xff\xfe");
  ExpectCleanFailure(Orrery(args), {"garbage.3.et"});
}

TEST(Cli, InvalidUtf8InATraceGivesOneMessage) {
  const std::string args = Args("utf8", 4, AllReduceRanks(4));
  const std::string path = Tmp("utf8.1.et");
  std::string bytes = ReadWholeFile(path);
  // Byte 0 is the first message's length, 1-2 the tag and length of GlobalMetadata's version.
  ASSERT_GT(bytes.size(), 4u);
  ASSERT_EQ(bytes[1], '\x0a');
  bytes[3] = '\xff';
  Spit(path, bytes);
  const CommandOutcome o = Orrery(args);
  ExpectCleanFailure(o, {"utf8.1.et"});
  EXPECT_EQ(o.err.find("libprotobuf"), std::string::npos) << o.err;
  // The file is there, only broken: no hint about which files the network wants.
  EXPECT_EQ(o.err.find("needs files"), std::string::npos) << o.err;
}

TEST(Cli, ScalesAndQueuesOutOfRangeAreRejected) {
  const std::string args = Args("ranges", 4, AllReduceRanks(4));
  for (const char* flag : {"--comm-scale=nan", "--compute-scale=1e15", "--injection-scale=inf",
                           "--num-queues-per-dim=2147483647", "--num-queues-per-dim=1,",
                           "--num-queues-per-dim=,1", "--num-queues-per-dim=1,,2"}) {
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    ExpectCleanFailure(Orrery(args + " " + flag), {name, "expected"});
  }
}

// Simulated time is int64 picoseconds (about 106 days). An input that pushes past it (a compute
// node, a message, a hop's delay, a bandwidth of 1e-300 GiB/s) is reported on every backend,
// instead of wrapping into a wrong time that exits 0 or a delay of zero.
TEST(Cli, TimePastTheEndOfSimulatedTimeIsReported) {
  auto long_compute = AllReduceRanks(4);
  long_compute[1][0] = et::MakeCompNode(1, "fwd", /*duration_us=*/10'000'000'000'000);
  auto huge_message = AllReduceRanks(4);
  for (auto& r : huge_message) {
    r[1] = et::MakeCollNode(2, "grad", ChakraProtoMsg::ALL_REDUCE, (uint64_t{1} << 63) - 1, {1});
  }
  std::string slow_hop = kSystem;
  const std::string delay = "\"endpoint-delay\": 10";
  slow_hop.replace(slow_hop.find(delay), delay.size(), "\"endpoint-delay\": 1e15");
  const std::string slow_hop_args = Args("slow_hop", 4, AllReduceRanks(4), slow_hop);
  const std::string tiny_bandwidth_args = Args("tiny_bandwidth", 4, AllReduceRanks(4));
  Spit(Tmp("tiny_bandwidth.net.yml"),
       "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1e-300 ]\nlatency: [ 500.0 ]\n");
  const std::vector<std::string> cases = {
      Args("long_compute", 4, long_compute),
      Args("huge_message", 4, huge_message),
      tiny_bandwidth_args,
  };
  for (const std::string& args : cases) {
    for (const char* backend : {"analytical-aware", "analytical-unaware", "packet"}) {
      SCOPED_TRACE(args + " " + backend);
      const CommandOutcome o = Orrery(args + " --network-backend=" + backend);
      // A (2^63 - 1)-byte collective is refused before it runs, named with its bytes as
      // written (they had been printed as 2^63): past 2^53 bytes no size is exact.
      ExpectCleanFailure(o, {args == cases[1] ? "all-reduce of 9223372036854775807 bytes (after "
                                                "--comm-scale and any protocol efficiency) is more "
                                                "than Orrery simulates: at most 2^53 bytes"
                                              : "past the end of simulated time"});
    }
  }
  // A delay past 1000 s is refused before the run, naming the key and what is valid.
  ExpectCleanFailure(Orrery(slow_hop_args),
                     {"slow_hop.system.json", "key 'endpoint-delay' is '1e15'",
                      "expected a number in [0, 1000000000000] (ns)"});
  // The long compute names its file and node, and the duration; a compute scale below 1 does
  // not bring it back into range.
  ExpectCleanFailure(Orrery(cases[0] + " --compute-scale=0.5"),
                     {"long_compute.1.et", "NPU 1 node 1 'fwd'", "duration_micros 10000000000000"});
}

// A size that --comm-scale or protocol-efficiency takes past 2^64 bytes (or a comm_size of
// 2^64 - 1, which the double product rounds up to 2^64) saturates, so the run ends past the end
// of simulated time, instead of converting to 0 bytes and finishing in no time with exit 0.
TEST(Cli, SizesPastTwoToThe64Saturate) {
  auto max_collective = AllReduceRanks(4);
  for (auto& r : max_collective) {
    r[1] = et::MakeNode(2, "grad", ChakraProtoMsg::COMM_COLL_NODE, {1});
    et::SetBoolAttr(&r[1], "is_cpu_op", false);
    et::SetIntAttr(&r[1], "comm_type", ChakraProtoMsg::ALL_REDUCE);
    et::SetUint64Attr(&r[1], "comm_size", UINT64_MAX);
  }
  std::vector<std::vector<Node>> max_message(4);
  for (int i = 0; i < 4; ++i) {
    Node send = et::MakeNode(1, "send", ChakraProtoMsg::COMM_SEND_NODE);
    et::SetBoolAttr(&send, "is_cpu_op", false);
    et::SetUint64Attr(&send, "comm_size", UINT64_MAX);
    et::SetIntAttr(&send, "comm_dst", (i + 1) % 4, et::IntEncoding::kInt32);
    Node recv = et::MakeNode(2, "recv", ChakraProtoMsg::COMM_RECV_NODE);
    et::SetBoolAttr(&recv, "is_cpu_op", false);
    et::SetUint64Attr(&recv, "comm_size", UINT64_MAX);
    et::SetIntAttr(&recv, "comm_src", (i + 3) % 4, et::IntEncoding::kInt32);
    max_message[i] = {send, recv};
  }
  auto big_collective = AllReduceRanks(4);
  for (auto& r : big_collective) {
    r[1] = et::MakeCollNode(2, "grad", ChakraProtoMsg::ALL_REDUCE, (uint64_t{1} << 63) - 1, {1});
  }
  std::string inefficient = kSystem;
  inefficient.insert(inefficient.rfind('}'), ", \"protocol-efficiency\": 1e-300");
  const std::vector<std::string> cases = {
      Args("max_collective", 4, max_collective),
      Args("max_message", 4, max_message),
      Args("big_collective", 4, big_collective) + " --comm-scale=1e6",
      Args("inefficient", 4, AllReduceRanks(4), inefficient),
  };
  for (const std::string& args : cases) {
    // A collective that large is refused before it runs (past 2^53 bytes no size is exact); a
    // message runs until simulated time ends, or the packet backend refuses its packets.
    const bool collective = args != cases[1];
    for (const char* backend : {"analytical-aware", "analytical-unaware"}) {
      SCOPED_TRACE(args + " " + backend);
      ExpectCleanFailure(Orrery(args + " --network-backend=" + backend),
                         {collective ? "is more than Orrery simulates: at most 2^53 bytes"
                                     : "past the end of simulated time"});
    }
    SCOPED_TRACE(args + " packet");
    ExpectCleanFailure(Orrery(args + " --network-backend=packet"),
                       {collective ? "is more than Orrery simulates: at most 2^53 bytes"
                                   : "use the analytical-aware backend"});
  }
}

// Inputs that are not regular files: a directory where a YAML file is expected (an uncaught
// exception aborted the run), a device that never ends (/dev/zero was read until memory ran
// out), as a rank file, a config, an NCCL model or a sweep spec. Each is one clear error.
TEST(Cli, InputsThatAreNotFilesAreNamed) {
  const std::string args = Args("not_files", 4, AllReduceRanks(4));
  const std::string dir = Tmp("not_files_dir");
  std::filesystem::create_directories(dir);
  ExpectCleanFailure(Orrery(args + " --nccl-model=" + dir), {dir + ": is a directory"});
  std::filesystem::remove(Tmp("not_files.2.et"));
  std::filesystem::create_symlink("/dev/zero", Tmp("not_files.2.et"));
  ExpectCleanFailure(Orrery(args), {"not_files.2.et: is not a regular file"});
  ExpectCleanFailure(Orrery("sweep " + dir), {dir + ": is a directory"});
  ExpectCleanFailure(Orrery("validate --nccl-tests /dev/zero --machine configs/machines/hgx-h100"),
                     {"/dev/zero: is not a regular file"});
}

// A forced algorithm the machine cannot run for a row is named by the row and validate's own
// flag (it had named validate's scratch trace, /tmp/orrery-validate.*/..., and --nccl-algorithm).
TEST(Cli, ValidateNamesTheRowAndItsFlagWhenAForcedAlgorithmCannotRun) {
  const std::string csv = Tmp("two_nodes.csv");
  Spit(csv, "nodes,gpus,size_bytes,algbw_GBps_out_of_place\n2,16,8388608,50\n");
  const CommandOutcome o =
      Orrery("validate --nccl-tests " + csv +
             " --collective all_reduce --machine configs/machines/dgx-h100-ndr "
             "--algorithm nvls");
  ExpectCleanFailure(o, {"all_reduce of 8388608 B on 16 GPUs: no algorithm of the NCCL model",
                         "NCCL's NVLS runs within one node only",
                         "left out by the forced algorithm, --algorithm, as NCCL_ALGO"});
  EXPECT_EQ(o.err.find("orrery-validate."), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("--nccl-algorithm"), std::string::npos) << o.err;
}

// Results printed to a full disk are lost: the exit status says so.
TEST(Cli, AFailedWriteOfTheResultsIsAnError) {
  const std::string args = Args("full_stdout", 4, AllReduceRanks(4));
  const int status = std::system(
      ("timeout 120 ./orrery " + args + " >/dev/full 2>" + Tmp("full_stdout.err")).c_str());
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(
      ReadWholeFile(Tmp("full_stdout.err")).find("writing the results to standard output failed"),
      std::string::npos);
}

TEST(Cli, MissingRankFileIsNamed) {
  const std::string args = Args("missing", 4, AllReduceRanks(4));
  ASSERT_EQ(std::remove(Tmp("missing.1.et").c_str()), 0);
  ExpectCleanFailure(Orrery(args), {"missing.1.et"});
}

TEST(Cli, NetworkWithMoreNpusThanTraceFiles) {
  const std::string args = Args("too_few", 8, AllReduceRanks(4));
  ExpectCleanFailure(Orrery(args), {"too_few.4.et", "8 NPUs", "too_few.7.et"});
  // On a large network it is said before any file is loaded, with the files there are.
  const std::string large = Args("too_few_large", 4096, AllReduceRanks(4));
  ExpectCleanFailure(Orrery(large), {"too_few_large.4.et: no such trace file", "has 4096 NPUs",
                                     "too_few_large.4095.et (there are ", "too_few_large.3.et)"});
}

// A system file listing fewer algorithms than the network has dimensions runs, as ASTRA-sim
// does, each collective over the first dimensions only: said once, naming the keys.
TEST(Cli, FewerAlgorithmsThanDimensionsIsAWarning) {
  const std::string args = Args("short_list", 8, AllReduceRanks(8));
  Spit(Tmp("short_list.net.yml"),
       "topology: [ Ring, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 50.0 ]\n"
       "latency: [ 500.0, 500.0 ]\n");
  const CommandOutcome o = Orrery(args);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(
      o.err.find("'all-reduce-implementation', 'reduce-scatter-implementation', "
                 "'all-gather-implementation', 'all-to-all-implementation' list 1 algorithm "
                 "for the network's 2 dimensions: as in ASTRA-sim, such a collective over all "
                 "NPUs (no communicator group) runs over the first 1 only (groups of 4 of "
                 "the 8 NPUs)"),
      std::string::npos)
      << o.err;
  // A one* algorithm flattens the whole machine into one ring: one entry spans it, no warning.
  const std::string flat_args =
      Args("short_flat", 8, AllReduceRanks(8), Replaced(kSystem, "[\"ring\"]", "[\"oneRing\"]"));
  Spit(Tmp("short_flat.net.yml"),
       "topology: [ Ring, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 50.0 ]\n"
       "latency: [ 500.0, 500.0 ]\n");
  const CommandOutcome f = Orrery(flat_args);
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.err.find("list 1 algorithm"), std::string::npos) << f.err;
}

// ASTRA-sim's one* algorithms make one ring of all NPUs, whose neighbours can differ in several
// dimensions; its congestion-unaware backend charges such a message the lowest differing
// dimension alone, Orrery's every dimension it crosses. A run there says its times are not
// ASTRA-sim's (network/README.md had claimed ASTRA-sim's algorithms never send such messages).
TEST(Cli, OneStarAlgorithmsOnSeveralDimensionsWarnOnTheUnawareBackend) {
  const std::string flat =
      Replaced(Replaced(Replaced(kSystem, "[\"ring\"]", "[\"oneRing\"]"),
                        "\"preferred-dataset-splits\": 4", "\"preferred-dataset-splits\": 1"),
               "localBWAware", "baseline");
  std::vector<std::vector<Node>> ranks(8);
  for (auto& r : ranks) {
    r = {et::MakeCollNode(1, "grad", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {})};
  }
  const std::string args = Args("one_star", 8, ranks, flat);
  Spit(Tmp("one_star.net.yml"),
       "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100.0, 25.0 ]\n"
       "latency: [ 200.0, 1000.0 ]\n");
  const std::string warning =
      "flattens the network's 2 dimensions into one of all NPUs; a message between NPUs that "
      "differ in several dimensions crosses each of them here, where ASTRA-sim's "
      "congestion-unaware backend charges the lowest one alone";
  const CommandOutcome o = Orrery(args + " --network-backend=analytical-unaware");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("one_star.system.json: a one* algorithm (in 'all-reduce-implementation', "
                       "'reduce-scatter-implementation', 'all-gather-implementation', "
                       "'all-to-all-implementation') " +
                       warning),
            std::string::npos)
      << o.err;
  // 14 ring steps of 128 KiB; the steps from NPU 3 to 4 and 7 to 0 cross both dimensions at
  // the switch's 25 GB/s (ASTRA-sim's rule: one ring hop at 100 GB/s, 21,731 ns in all).
  EXPECT_NE(o.out.find("sys[0] finished, 44379 cycles"), std::string::npos) << o.out;
  // The congestion-aware backend routes across every dimension as ASTRA-sim's (1-D only) could
  // not; per-dimension algorithms never send such a message: no warning either way.
  const CommandOutcome aware = Orrery(args);
  EXPECT_EQ(aware.exit_code, 0) << aware.err;
  EXPECT_EQ(aware.err.find(warning), std::string::npos) << aware.err;
  const std::string per_dim =
      Args("one_star_rings", 8, ranks,
           std::string(kSystem).replace(std::string(kSystem).find("[\"ring\"]"), 8,
                                        "[\"ring\", \"direct\"]"));
  Spit(Tmp("one_star_rings.net.yml"),
       "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100.0, 25.0 ]\n"
       "latency: [ 200.0, 1000.0 ]\n");
  const CommandOutcome rings = Orrery(per_dim + " --network-backend=analytical-unaware");
  EXPECT_EQ(rings.exit_code, 0) << rings.err;
  EXPECT_EQ(rings.err.find("flattens"), std::string::npos) << rings.err;
}

// A collective cut into chunks of a few bytes: ASTRA-sim's models truncate each message's time
// to whole ns, so bytes that serialize in under 1 ns take no time (a 1 MiB all-reduce in 262144
// splits on 4 NPUs at 50 GB/s: 3070 ns, against 29800 in 4). Both analytical backends say so,
// once; the same collective in 4 splits, and the packet backend, say nothing.
TEST(Cli, BytesTimedAsNothingAreAWarning) {
  const std::string fine = Replaced(
      Replaced(kSystem, "\"preferred-dataset-splits\": 4", "\"preferred-dataset-splits\": 262144"),
      "\"active-chunks-per-dimension\": 1", "\"active-chunks-per-dimension\": 1048576");
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) r = {et::MakeCollNode(1, "grad", ChakraProtoMsg::ALL_REDUCE, 1 << 20, {})};
  const std::string warning =
      "messages of up to 1 B serialized in under 1 ns, which the %s backend truncates to 0 as "
      "ASTRA-sim does: their bytes took no time";
  for (const char* backend : {"analytical-aware", "analytical-unaware"}) {
    const CommandOutcome o =
        Orrery(Args("zero_time", 4, ranks, fine) + " --network-backend=" + backend);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    const std::string expected = Replaced(warning, "%s", backend);
    EXPECT_NE(o.err.find("warning: 6291456 " + expected), std::string::npos) << o.err;
    EXPECT_EQ(Occurrences(o.err, "serialized in under 1 ns"), 1u) << o.err;
  }
  const CommandOutcome coarse = Orrery(Args("zero_time_coarse", 4, ranks));
  EXPECT_EQ(coarse.exit_code, 0) << coarse.err;
  EXPECT_EQ(coarse.err.find("serialized in under 1 ns"), std::string::npos) << coarse.err;
}

// Runs `command` (a run of a million NPUs, which needs gigabytes, with less memory than that)
// and expects the out-of-memory error with exit 1, not an abort.
void ExpectOutOfMemoryError(const std::string& name, const std::string& command) {
  const std::string err = Tmp(name + ".err");
  const int status = std::system((command + " >/dev/null 2>" + err).c_str());
  ASSERT_TRUE(WIFEXITED(status)) << name;
  EXPECT_EQ(WEXITSTATUS(status), 1) << name;
  const std::string message = ReadWholeFile(err);
  EXPECT_NE(message.find("error: out of memory: this run needs more memory than the process may "
                         "use"),
            std::string::npos)
      << name << ": " << message;
  EXPECT_EQ(message.find("terminate called"), std::string::npos) << name << ": " << message;
}

// Running out of memory (a million NPUs under a 1 GB limit) is an error saying so, with exit 1;
// it had aborted with "terminate called after throwing an instance of 'std::bad_alloc'". Two
// ways to run out: the address space limited (`ulimit -v`), where allocations fail as on a
// full machine; and ./orrery_new_limit, whose operator new throws std::bad_alloc past 256 MiB
// live (tests/new_limit.cc). AddressSanitizer cannot start under `ulimit -v` (it reserves
// terabytes of shadow address space) and its operator new exits rather than throw, so under it
// the second way alone drives the same std::bad_alloc through the same code.
TEST(Cli, OutOfMemoryIsAnErrorNotAnAbort) {
  const std::string args = Args("out_of_memory", 2, AllReduceRanks(2));
  Spit(Tmp("out_of_memory.net.yml"),
       "topology: [ Switch ]\nnpus_count: [ 1048576 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  const std::string run = args + " --replicate-trace --dp-groups none";
  ExpectOutOfMemoryError("new_limit",
                         "ORRERY_TEST_NEW_LIMIT_MB=256 " + kTimeout + "./orrery_new_limit " + run);
  if (!kAddressSanitizer) {
    ExpectOutOfMemoryError("ulimit", "ulimit -v 1000000; timeout 120 ./orrery " + run);
  }
}

// The limited binary is the same program while its limit is not reached: the same run, on a
// machine it fits, gives the same output as ./orrery.
TEST(Cli, TheNewLimitBinaryRunsLikeOrreryBelowItsLimit) {
  const std::string args = Args("new_limit_fits", 4, AllReduceRanks(4));
  const CommandOutcome plain = Orrery(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string out = Tmp("new_limit_fits.limited.out");
  const int status = std::system(("ORRERY_TEST_NEW_LIMIT_MB=256 " + kTimeout +
                                  "./orrery_new_limit " + args + " >" + out + " 2>/dev/null")
                                     .c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadWholeFile(out), plain.out);
}

// More rank files than NPUs is most likely the wrong network file: the run goes on, and warns.
TEST(Cli, MoreTraceFilesThanNpusIsAWarning) {
  const CommandOutcome o = Orrery(Args("too_many", 4, AllReduceRanks(8)));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("warning: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("too_many.4.et exists"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("has 4 NPUs"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("sys[3] finished"), std::string::npos) << o.out;
}

TEST(Cli, DependencyCycleIsNamed) {
  auto ranks = AllReduceRanks(4);
  et::AddDataDeps(&ranks[2][0], {2});  // fwd <- grad <- fwd
  ExpectCleanFailure(Orrery(Args("cycle", 4, ranks)), {"cycle.2.et", "cycle"});
}

TEST(Cli, UnreceivedSendNamesTheSendingNpuAndNode) {
  std::vector<std::vector<Node>> ranks(2);
  ranks[0] = {et::MakeSendNode(7, /*peer=*/1, 4096, /*tag=*/3)};
  ranks[1] = {et::MakeCompNode(1, "idle", 1)};
  const CommandOutcome o = Orrery(Args("unmatched", 2, ranks));
  ExpectCleanFailure(o, {"no NPU received", "NPU 0 node 7", "NPU 1", "4096 B"});
}

TEST(Cli, MisspelledConfigKeySuggestsTheRightOne) {
  std::string system = kSystem;
  system.replace(system.find("preferred-dataset-splits"), 24, "prefered-dataset-splits");
  ExpectCleanFailure(Orrery(Args("typo", 4, AllReduceRanks(4), system)),
                     {"prefered-dataset-splits", "preferred-dataset-splits", "typo.system.json"});
}

TEST(Cli, RetiredSchedulingPolicyListsTheValidOnes) {
  std::string system = kSystem;
  system.replace(system.find("\"local-mem-bw\""), 0, "\"intra-dimension-scheduling\": \"RG\", ");
  ExpectCleanFailure(Orrery(Args("rg", 4, AllReduceRanks(4), system)),
                     {"rg.system.json", "intra-dimension-scheduling", "'RG'",
                      "FIFO, smallestFirst, lessRemainingPhaseFirst"});
}

// 2 NPUs: fwd (5 us) writes a 1 MiB activation, the all-reduce (20 us later, whatever it
// takes) reads it; the activation is the only tensor: peak 1 MiB on every NPU.
TEST(Cli, TrackLocalMemPrintsThePeakAndWritesTheTraces) {
  std::vector<std::vector<Node>> ranks = AllReduceRanks(2);
  for (auto& r : ranks) {
    et::SetStringListAttr(&r[0], "outputs", {"act", "1048576"});
    et::SetStringListAttr(&r[1], "inputs", {"act", "1048576"});
  }
  const std::string prefix = Tmp("memcli_trace");
  std::string system = kSystem;
  system.replace(system.find("\"local-mem-bw\""), 0,
                 "\"track-local-mem\": 1, \"local-mem-trace-filename\": \"" + prefix + "\", ");
  const CommandOutcome o = Orrery(Args("memcli", 2, ranks, system));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (int i = 0; i < 2; ++i) {
    EXPECT_NE(o.out.find("sys[" + std::to_string(i) + "] peak memory usage: 1.00 MB\n"),
              std::string::npos)
        << o.out;
    EXPECT_NE(ReadWholeFile(prefix + "." + std::to_string(i) + ".json").find("\"tensorLifetime\""),
              std::string::npos);
  }
}

TEST(Cli, RooflineWithoutPeakPerfIsRejected) {
  std::string system = kSystem;
  system.replace(system.find("\"local-mem-bw\""), 0, "\"roofline-enabled\": 1, ");
  ExpectCleanFailure(Orrery(Args("roofline", 4, AllReduceRanks(4), system)),
                     {"roofline.system.json", "peak-perf", "is 0", "> 0"});
}

TEST(Cli, NegativeBandwidthIsRejected) {
  const std::string args = Args("negbw", 4, AllReduceRanks(4));
  Spit(Tmp("negbw.net.yml"),
       "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ -50.0 ]\nlatency: [ 500.0 ]\n");
  ExpectCleanFailure(Orrery(args), {"negbw.net.yml", "bandwidth", "-50"});
}

TEST(Cli, UnparsableYamlNamesFileAndLine) {
  const std::string args = Args("badyaml", 4, AllReduceRanks(4));
  Spit(Tmp("badyaml.net.yml"), "topology: [ Ring\nnpus_count: [ 4 ]\n");
  ExpectCleanFailure(Orrery(args), {"badyaml.net.yml:2:"});
}

TEST(Cli, UnknownBackendListsTheValidOnes) {
  const CommandOutcome o =
      Orrery(Args("backend", 4, AllReduceRanks(4)) + " --network-backend=analytical-awre");
  ExpectCleanFailure(o, {"analytical-awre", "analytical-aware", "analytical-unaware", "packet"});
}

// The packet backend from the command line: port columns in --link-stats after the usual ones,
// and a PFC buffer too small for the link's headroom is one clean error naming the key.
TEST(Cli, PacketBackendLinkStatsAndBadParameter) {
  const std::string args = Args("packet", 4, AllReduceRanks(4));
  const std::string csv = Tmp("packet_links.csv");
  const CommandOutcome ok = Orrery(args + " --network-backend=packet --link-stats=" + csv);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const std::string links = ReadWholeFile(csv);
  EXPECT_EQ(links.rfind("rank,link,bytes,busy_ns,utilisation,max_queue_bytes,mean_queue_bytes,"
                        "pause_ns,drops\n",
                        0),
            0u)
      << links;
  EXPECT_NE(links.find("npu0->npu1"), std::string::npos) << links;

  Spit(Tmp("packet.net.yml"),
       RingNetwork(4) + "packet-flow-control: pfc\npacket-buffer-bytes: 10000\n");
  const CommandOutcome bad = Orrery(args + " --network-backend=packet");
  ExpectCleanFailure(bad, {"packet-buffer-bytes", "10000", "expected"});
  // The analytical backends ignore the packet keys.
  EXPECT_EQ(Orrery(args + " --network-backend=analytical-aware").exit_code, 0);
}

TEST(Cli, UnknownFlagSuggestsTheRightOne) {
  const CommandOutcome o = Orrery(Args("flag", 4, AllReduceRanks(4)) + " --comm-scael=2");
  ExpectCleanFailure(o, {"--comm-scael", "--comm-scale"});
}

TEST(Cli, RemoteMemoryWithoutExpansionNamesTheNode) {
  std::vector<std::vector<Node>> ranks(2);
  ranks[0] = {et::MakeNode(4, "load_weights", ChakraProtoMsg::MEM_LOAD_NODE)};
  et::SetUint64Attr(&ranks[0][0], "tensor_size", 1 << 20);
  ranks[1] = {et::MakeCompNode(1, "idle", 1)};
  ExpectCleanFailure(Orrery(Args("mem", 2, ranks)), {"load_weights", "NO_MEMORY_EXPANSION"});
}

// involved_dim holds one bool per network dimension. Entries past the network's dimensions are
// harmless when false (the run is the same as without them); a true one is an error naming the
// file, the node, the list's length and the network's number of dimensions.
TEST(Cli, InvolvedDimPastTheNetworkMustBeFalse) {
  auto with = [](const std::vector<bool>& dims) {
    auto ranks = AllReduceRanks(4);
    for (auto& r : ranks) et::SetBoolListAttr(&r[1], "involved_dim", dims);
    return ranks;
  };
  const CommandOutcome plain = Orrery(Args("inv_plain", 4, AllReduceRanks(4)));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const CommandOutcome trailing = Orrery(Args("inv_false", 4, with({true, false, false})));
  ASSERT_EQ(trailing.exit_code, 0) << trailing.err;
  EXPECT_NE(trailing.out.find("sys[3] finished"), std::string::npos) << trailing.out;
  EXPECT_EQ(trailing.out, plain.out);

  const CommandOutcome bad = Orrery(Args("inv_true", 4, with({true, false, true})));
  ExpectCleanFailure(bad, {Tmp("inv_true.0.et") +
                           ": NPU 0 node 2 'grad': 'involved_dim' has 3 entries but the network "
                           "has 1 dimension, and entry 3 is true; expected one bool per network "
                           "dimension (1), any entries beyond them false"});
  EXPECT_EQ(Occurrences(bad.err, "\n"), 1u) << bad.err;

  // Two dimensions (2 x 2): [true, true, false, true] names entry 4.
  const std::string args = Args("inv_2d", 4, with({true, true, false, true}));
  Spit(Tmp("inv_2d.net.yml"),
       "topology: [ Ring, Switch ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50.0, 50.0 ]\n"
       "latency: [ 500.0, 500.0 ]\n");
  ExpectCleanFailure(Orrery(args), {Tmp("inv_2d.0.et"), "node 2 'grad'", "has 4 entries",
                                    "the network has 2 dimensions", "entry 4 is true"});
}

// PER_NODE_MEMORY_EXPANSION on a network whose NPU count is not num-nodes * num-npus-per-node.
TEST(Cli, PerNodeMemoryMustMatchTheNetwork) {
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) {
    r = {et::MakeNode(1, "load_weights", ChakraProtoMsg::MEM_LOAD_NODE)};
    et::SetUint64Attr(&r[0], "tensor_size", 1 << 20);
  }
  const std::string args = Args("memnode", 4, ranks);
  const std::string memory = Tmp("memnode.mem.json");
  Spit(memory, R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-bw": 100,
                   "num-nodes": 2, "num-npus-per-node": 4})");
  const CommandOutcome bad = Orrery(args + " --remote-memory-configuration=" + memory);
  ExpectCleanFailure(
      bad, {memory +
            ": keys 'num-nodes' 2 * 'num-npus-per-node' 4 = 8 NPUs, but "
            "the network (" +
            Tmp("memnode.net.yml") + ") has 4 NPUs; expected num-nodes * num-npus-per-node = 4"});
  EXPECT_EQ(Occurrences(bad.err, "\n"), 1u) << bad.err;
  Spit(memory, R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-bw": 100,
                   "num-nodes": 2, "num-npus-per-node": 2})");
  const CommandOutcome good = Orrery(args + " --remote-memory-configuration=" + memory);
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("sys[3] finished"), std::string::npos) << good.out;
  // A memory node without its bytes is an error naming it, as a send without comm_size (it had
  // moved 0 bytes in the memory's latency alone).
  for (auto& r : ranks) r = {et::MakeNode(1, "load_weights", ChakraProtoMsg::MEM_LOAD_NODE)};
  const std::string sizeless = Args("memnode_sizeless", 4, ranks);
  ExpectCleanFailure(Orrery(sizeless + " --remote-memory-configuration=" + memory),
                     {"node 1 'load_weights': a MEM_LOAD_NODE with no 'tensor_size'; expected "
                      "its bytes"});
}

// 100,000 unknown keys: the first 20 problems, then one line counting the rest.
TEST(Cli, HugeNumberOfUnknownKeysIsCapped) {
  std::string system = kSystem;
  std::string junk;
  for (int i = 0; i < 100000; ++i) junk += "\"junk" + std::to_string(i) + "\": 1,\n";
  system.replace(system.find("\"local-mem-bw\""), 0, junk);
  const CommandOutcome o = Orrery(Args("manykeys", 4, AllReduceRanks(4), system));
  const std::string path = Tmp("manykeys.system.json");
  ExpectCleanFailure(o, {path + ":6: unknown key 'junk0'", path + ":25: unknown key 'junk19'",
                         "... and 99980 more problems in " + path});
  EXPECT_EQ(Occurrences(o.err, "\n"), 21u) << o.err.substr(0, 4000);
  EXPECT_EQ(o.err.find("junk20'"), std::string::npos);
}

// ASTRA-sim's 8-rank custom ring all-reduce with one rank's ET missing: one line naming the
// system config, the key, the algorithm and the missing rank and file (not one line per node
// that talks to the missing rank).
TEST(Cli, CustomCollectiveWithAMissingRankIsOneMessage) {
  const std::string compat = SharedDir("compat");
  ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
  const std::string src = compat +
                          "/astra-sim/examples/system/custom_collectives/"
                          "custom_ring_allreduce_8npus_1MB/custom_allreduce";
  const std::string prefix = Tmp("gap_algo");
  auto file = [](const std::string& p, int r) { return p + "." + std::to_string(r) + ".et"; };
  for (int r = 0; r < 8; ++r) Spit(file(prefix, r), ReadWholeFile(file(src, r)));
  std::string system = kSystem;
  system.replace(system.find("\"local-mem-bw\""), 0,
                 "\"all-reduce-implementation-custom\": [\"" + prefix + "\"], ");
  const std::string args = Args("gap", 8, AllReduceRanks(8), system);
  const CommandOutcome whole = Orrery(args);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;

  // Rank 5 missing: ranks 6 and 7 are there.
  ASSERT_EQ(std::remove(file(prefix, 5).c_str()), 0);
  const CommandOutcome gap = Orrery(args);
  ExpectCleanFailure(
      gap, {Tmp("gap.system.json") +
                ": 'all-reduce-implementation-custom': custom collective algorithm '" + prefix +
                "': rank 5 is missing (no file " + file(prefix, 5) + "), but " + file(prefix, 7) +
                " exists",
            "expected one ET for each rank 0 .. 7"});
  EXPECT_EQ(Occurrences(gap.err, "\n"), 1u) << gap.err;

  // The last rank missing: only the peers tell.
  Spit(file(prefix, 5), ReadWholeFile(file(src, 5)));
  ASSERT_EQ(std::remove(file(prefix, 7).c_str()), 0);
  const CommandOutcome last = Orrery(args);
  ExpectCleanFailure(last, {"rank 7 is missing (no file " + file(prefix, 7) +
                                "), but 28 nodes name rank 7 as peers (e.g. " + file(prefix, 0) +
                                ": node 1 'COMM_RECV_NODE_tb0_step1' has comm_src 7)",
                            "or peers in [0, 6]"});
  EXPECT_EQ(Occurrences(last.err, "\n"), 1u) << last.err;
}

// The cycles NPU 0 reports ("sys[0] finished, N cycles"), or -1.
long long Npu0Cycles(const std::string& out) {
  const std::string key = "sys[0] finished, ";
  const size_t at = out.find(key);
  return at == std::string::npos ? -1 : std::atoll(out.c_str() + at + key.size());
}

// --nccl-algorithm forces one NCCL algorithm in an ordinary run (as NCCL_ALGO), and --nccl-model
// gives a model to a system config without one. On hgx-h100 NCCL takes NVLS for a 1 MiB
// all-reduce, so forcing nvls changes nothing and forcing ring is slower.
TEST(Cli, NcclAlgorithmAndModelFlags) {
  const std::string machine = "configs/machines/hgx-h100/";
  const std::string prefix = Tmp("nccl_flags");
  ASSERT_TRUE(et::WriteRankFiles(prefix, AllReduceRanks(8)).ok());
  const std::string run = "--workload-configuration=" + prefix +
                          " --system-configuration=" + machine +
                          "system.yaml --network-configuration=" + machine + "network.yaml";
  const CommandOutcome chosen = Orrery(run);
  const CommandOutcome nvls = Orrery(run + " --nccl-algorithm=nvls");
  const CommandOutcome ring = Orrery(run + " --nccl-algorithm=ring");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  ASSERT_EQ(nvls.exit_code, 0) << nvls.err;
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_GT(Npu0Cycles(chosen.out), 5000);
  EXPECT_EQ(Npu0Cycles(nvls.out), Npu0Cycles(chosen.out));
  EXPECT_GT(Npu0Cycles(ring.out), Npu0Cycles(nvls.out));

  ExpectCleanFailure(Orrery(run + " --nccl-algorithm=rign"),
                     {"NCCL_ALGO 'rign': 'rign' is unknown (did you mean 'ring'?); valid: ring, "
                      "tree, nvls, nvlstree"});
  ExpectCleanFailure(Orrery(run + " --nccl-algorithm=tree"),
                     {"algorithm 'tree' is not one this machine's NCCL runs; its algorithms: "
                      "nvls, ring"});
  // NCCL_ALGO's and NCCL_PROTO's syntax: all but NVLS is ring here; a list; protocols.
  const CommandOutcome not_nvls = Orrery(run + " --nccl-algorithm=^NVLS");
  ASSERT_EQ(not_nvls.exit_code, 0) << not_nvls.err;
  EXPECT_EQ(Npu0Cycles(not_nvls.out), Npu0Cycles(ring.out));
  const CommandOutcome listed = Orrery(run + " --nccl-algorithm=Ring,NVLS");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(Npu0Cycles(listed.out), Npu0Cycles(chosen.out));
  const CommandOutcome ll = Orrery(run + " --nccl-algorithm=ring --nccl-protocol=LL");
  ASSERT_EQ(ll.exit_code, 0) << ll.err;
  EXPECT_NE(Npu0Cycles(ll.out), Npu0Cycles(ring.out));
  ExpectCleanFailure(Orrery(run + " --nccl-protocol=LL129"),
                     {"NCCL_PROTO 'LL129': 'LL129' is unknown (did you mean 'LL128'?); valid: LL, "
                      "LL128, Simple"});
  // No model: the flag says what is missing.
  const std::string plain = Args("nccl_flags_plain", 8, AllReduceRanks(8));
  ExpectCleanFailure(Orrery(plain + " --nccl-algorithm=ring"),
                     {"there is no NCCL model", "or give --nccl-model"});
  // A model from the command line, on a plain ring system config and a Ring network: NCCL's
  // choice there is ring's (NVLS needs a switch), and forcing nvls says why it cannot run.
  const CommandOutcome given = Orrery(plain + " --nccl-model=" + machine + "nccl.yaml");
  ASSERT_EQ(given.exit_code, 0) << given.err;
  const CommandOutcome without = Orrery(plain);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(Npu0Cycles(given.out), Npu0Cycles(without.out));
  EXPECT_NE(given.out.find("all-reduce 1048576 B on 8 NPUs: ring/"), std::string::npos)
      << given.out;
  ExpectCleanFailure(
      Orrery(plain + " --nccl-model=" + machine + "nccl.yaml --nccl-algorithm=nvls"),
      {"nvls/Simple: node 2 'grad': 'all-reduce-implementation' dimension 0: 'nvls' reduces in "
       "the switch, but this dimension is a Ring, not a Switch"});
}

// An error the system layer reports about a collective names its node once, with the NPU (not
// "NPU 0 node 2 'x': node 2 'x': ...").
TEST(Cli, ErrorsNameTheNodeOnce) {
  std::string system = kSystem;
  const std::string gather = "\"all-gather-implementation\": [\"ring\"],";
  system.erase(system.find(gather), gather.size());
  std::vector<std::vector<Node>> ranks(4);
  for (auto& r : ranks) r = {et::MakeCollNode(2, "gather_act", ChakraProtoMsg::ALL_GATHER, 4096)};
  const CommandOutcome o = Orrery(Args("once", 4, ranks, system));
  ExpectCleanFailure(o, {Tmp("once.0.et") + ": NPU 0 node 2 'gather_act': " +
                         Tmp("once.system.json") + " has no 'all-gather-implementation'"});
  EXPECT_EQ(Occurrences(o.err, "node 2 'gather_act'"), 1u) << o.err;

  // A member missing from the node's communicator group.
  for (auto& r : ranks) {
    r = {et::MakeCollNode(2, "grad", ChakraProtoMsg::ALL_REDUCE, 4096)};
    et::SetStringAttr(&r[0], "pg_name", "1");
  }
  const std::string groups = Tmp("once_groups.json");
  Spit(groups, R"({"1": [0, 1]})");
  const CommandOutcome member =
      Orrery(Args("once_group", 4, ranks) + " --comm-group-configuration=" + groups);
  ExpectCleanFailure(member, {Tmp("once_group.2.et") + ": NPU 2 node 2 'grad': NPU 2 is not a "
                                                       "member of communicator group 1"});
  EXPECT_EQ(Occurrences(member.err, "node 2 'grad'"), 1u) << member.err;
}

TEST(Cli, SameInputsGiveTheSameBytes) {
  const std::string args =
      "--workload-configuration=examples/dp_step/dp_step "
      "--system-configuration=examples/dp_step/system.json "
      "--network-configuration=examples/dp_step/network.yml "
      "--remote-memory-configuration=examples/dp_step/memory.json";
  for (const char* backend : {"analytical-aware", "analytical-unaware", "packet"}) {
    const CommandOutcome a = Orrery(args + std::string(" --network-backend=") + backend);
    const CommandOutcome b = Orrery(args + std::string(" --network-backend=") + backend);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_NE(a.out.find("sys[7] finished"), std::string::npos) << a.out;
    EXPECT_EQ(a.out, b.out) << backend;
  }
}

// The `+X% from sharing` of job `name` in a --jobs-alone summary (NaN when absent).
double SharingCost(const std::string& out, const std::string& name) {
  const size_t job = out.find("  job '" + name + "'");
  if (job == std::string::npos) return std::nan("");
  const size_t alone = out.find("; alone ", job);
  const size_t comma = out.find(", ", alone);
  if (alone == std::string::npos || comma == std::string::npos) return std::nan("");
  double pct = std::nan("");
  if (std::sscanf(out.c_str() + comma + 2, "%lf%% from sharing", &pct) != 1) return std::nan("");
  return pct;
}

TEST(Cli, JobsExampleShowsWhatSharingTheTorusCosts) {
  const std::string machine =
      " --system-configuration=examples/dp_step/system.json "
      "--network-configuration=configs/network/torus_2d_4x4.yml --jobs-alone";
  // On blocks of rows the two jobs' rings share no link: each runs as it does alone.
  const CommandOutcome blocks = Orrery("--jobs=examples/jobs/blocks.yaml" + machine);
  ASSERT_EQ(blocks.exit_code, 0) << blocks.err;
  EXPECT_NE(blocks.out.find("workload: 2 jobs on 16 NPUs: 'train' on NPUs 0-7, 'sync' on NPUs "
                            "8-15"),
            std::string::npos)
      << blocks.out;
  EXPECT_EQ(SharingCost(blocks.out, "train"), 0.0) << blocks.out;
  EXPECT_EQ(SharingCost(blocks.out, "sync"), 0.0) << blocks.out;
  // Interleaved, their dimension-0 rings hop over each other's NPUs and share links: the
  // training step slows down.
  const CommandOutcome inter = Orrery("--jobs=examples/jobs/interleaved.yaml" + machine);
  ASSERT_EQ(inter.exit_code, 0) << inter.err;
  EXPECT_GT(SharingCost(inter.out, "train"), 10.0) << inter.out;
  EXPECT_GE(SharingCost(inter.out, "sync"), 0.0) << inter.out;
  EXPECT_NE(inter.out.find("sys[15] finished"), std::string::npos) << inter.out;
  // Without congestion the jobs cannot slow each other down.
  const CommandOutcome unaware = Orrery("--jobs=examples/jobs/interleaved.yaml" + machine +
                                        " --network-backend=analytical-unaware");
  ASSERT_EQ(unaware.exit_code, 0) << unaware.err;
  EXPECT_EQ(SharingCost(unaware.out, "train"), 0.0) << unaware.out;
  EXPECT_EQ(Orrery("--jobs=examples/jobs/interleaved.yaml" + machine).out, inter.out);

  ExpectCleanFailure(Orrery("--workload-configuration=examples/dp_step/dp_step --jobs-alone" +
                            machine.substr(0, machine.find(" --jobs-alone"))),
                     {"--jobs-alone applies only with --jobs"});
  ExpectCleanFailure(Orrery("--jobs=" + Tmp("no_jobs.yaml") + machine),
                     {Tmp("no_jobs.yaml") + ": cannot open the file"});
}

TEST(Cli, RealPyTorchTraceRunsOnFourNpusOnBothBackends) {
  const std::string compat = SharedDir("compat");
  ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
  const std::string trace = ReadWholeFile(compat + "/chakra/pytorch_model.0.et");
  ASSERT_GT(trace.size(), 1000000u);
  const std::string prefix = Tmp("pytorch");
  for (int r = 0; r < 4; ++r) Spit(prefix + "." + std::to_string(r) + ".et", trace);
  Spit(prefix + ".system.json", kSystem);
  Spit(prefix + ".net.yml", RingNetwork(4));
  const std::string args = "--workload-configuration=" + prefix +
                           " --system-configuration=" + prefix +
                           ".system.json --network-configuration=" + prefix + ".net.yml";
  for (const char* backend : {"analytical-aware", "analytical-unaware"}) {
    const CommandOutcome a = Orrery(args + std::string(" --network-backend=") + backend);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_NE(a.err.find("warning: "), std::string::npos) << a.err;
    EXPECT_NE(a.err.find("not in the file"), std::string::npos) << a.err;
    // Its ctrl_deps close cycles (operator <-> kernel): one warning, naming the file once.
    const std::string file = prefix + ".0.et";
    const size_t ctrl = a.err.find("ctrl_deps form a cycle");
    ASSERT_NE(ctrl, std::string::npos) << a.err;
    const size_t named = a.err.find(file, ctrl);
    ASSERT_NE(named, std::string::npos) << a.err;
    EXPECT_EQ(a.err.find(file + ": " + file), std::string::npos) << a.err;
    for (int i = 0; i < 4; ++i) {
      EXPECT_NE(a.out.find("sys[" + std::to_string(i) + "] finished"), std::string::npos) << a.out;
    }
    const CommandOutcome b = Orrery(args + std::string(" --network-backend=") + backend);
    EXPECT_EQ(a.out, b.out) << backend;
  }
}

// The real PyTorch trace is one rank: --replicate-trace runs it on 16 NPUs from its one file,
// exactly as 16 copies of the file would run.
TEST(Cli, ReplicateTraceRunsOneRankOnSixteenNpus) {
  const std::string compat = SharedDir("compat");
  ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
  const std::string original = compat + "/chakra/pytorch_model";
  const std::string prefix = Tmp("pytorch16");
  const std::string trace = ReadWholeFile(original + ".0.et");
  ASSERT_GT(trace.size(), 1000000u);
  for (int r = 0; r < 16; ++r) Spit(prefix + "." + std::to_string(r) + ".et", trace);
  Spit(prefix + ".system.json", kSystem);
  Spit(prefix + ".net.yml", RingNetwork(16));
  const std::string configs = " --system-configuration=" + prefix +
                              ".system.json --network-configuration=" + prefix + ".net.yml";
  const CommandOutcome copies =
      Orrery("--workload-configuration=" + original + configs + " --replicate-trace");
  const CommandOutcome again =
      Orrery("--workload-configuration=" + original + configs + " --replicate-trace");
  const CommandOutcome written = Orrery("--workload-configuration=" + prefix + configs);
  ASSERT_EQ(copies.exit_code, 0) << copies.err;
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(copies.out, again.out);
  const std::string line =
      "  workload: trace of 1 rank run as 16 copies on 16 NPUs; data-parallel groups: world\n";
  const size_t at = copies.out.find(line);
  ASSERT_NE(at, std::string::npos) << copies.out;
  // Apart from that line, the same bytes as the 16 files.
  EXPECT_EQ(copies.out.substr(0, at) + copies.out.substr(at + line.size()), written.out);
  EXPECT_NE(copies.out.find("sys[15] finished"), std::string::npos);

  // Its flags are in --help; a bad --dp-groups and a network that is not whole copies fail.
  const CommandOutcome help = Orrery("--help");
  EXPECT_NE(help.out.find("--replicate-trace"), std::string::npos);
  EXPECT_NE(help.out.find("--dp-groups"), std::string::npos);
  const CommandOutcome bad = Orrery("--workload-configuration=" + original + configs +
                                    " --replicate-trace --dp-groups=wrold");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("--dp-groups: item 1 of 'wrold' is 'wrold'"), std::string::npos)
      << bad.err;
  const CommandOutcome empty = Orrery("--workload-configuration=" + original + configs +
                                      " --replicate-trace --dp-groups ''");
  EXPECT_EQ(empty.exit_code, 1) << empty.err;
  EXPECT_NE(empty.err.find("--dp-groups is empty; expected 'world', 'none'"), std::string::npos)
      << empty.err;
  const CommandOutcome two =
      Orrery(Args("two_ranks", 3, {{et::MakeCompNode(1, "a", 1)}, {et::MakeCompNode(1, "b", 1)}}) +
             " --replicate-trace");
  EXPECT_EQ(two.exit_code, 1) << two.err;
  EXPECT_NE(two.err.find("has 3 NPUs, not a whole number of copies of the trace's 2 rank files"),
            std::string::npos)
      << two.err;
}

// ASTRA-sim 1.0 text workloads: converted as chakra_converter Text does, then run. Every NPU's
// file is the same, so one file with --replicate-trace runs alike; Chakra-compatible files
// (ids numbered on across NPUs) simulate the same when there is no NONE to write.
// orrery generate-llm: a preset model with data, tensor and pipeline parallelism on the
// dgx-h100-ndr profile (2 nodes of 8: each stage's tensor- and data-parallel groups inside a
// node, the pipeline across), in a directory it makes (as docs/workloads.md's `--output
// /tmp/llama/llama`); its files describe themselves to trace-info; bad flags are named.
TEST(Cli, GenerateLlmWritesATrainingStepThatRuns) {
  const std::string prefix = Tmp("llm_dir/new/llm");
  const CommandOutcome gen = Orrery(
      "generate-llm --model gpt3-13b --layers 8 --dp 2 --tp 4 --pp 2 "
      "--micro-batches 3 --seq-length 1024 --output " +
      prefix);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_NE(gen.out.find("gpt3-13b: 8 layers, hidden 5120, 40 heads, ffn 20480 (gelu), vocabulary "
                         "50257 (padded 50688), sequence 1024"),
            std::string::npos)
      << gen.out;
  EXPECT_NE(
      gen.out.find("16 NPUs = dp 2 × tp 4 × pp 2; 1F1B, 3 micro-batches of 1 (global batch 6)"),
      std::string::npos)
      << gen.out;
  // By default one data-parallel copy's files (pp 2 × tp 4 ranks, copy-local) and a manifest.
  EXPECT_NE(gen.out.find(prefix + ".0.et ... " + prefix + ".7.et"), std::string::npos) << gen.out;
  EXPECT_NE(gen.out.find(prefix + ".manifest.yaml: 2 copies fill the 16 NPUs"), std::string::npos)
      << gen.out;
  EXPECT_FALSE(std::filesystem::exists(prefix + ".8.et"));
  EXPECT_NE(gen.err.find("roofline-enabled"), std::string::npos) << gen.err;
  const std::string manifest = ReadWholeFile(prefix + ".manifest.yaml");
  for (const char* line : {"npus: 16\n", "copies: 2\n", "interleave: 4\n",
                           "data-parallel-groups: \"world,5,6,7,8,9,10,11,12\"\n"}) {
    EXPECT_NE(manifest.find(line), std::string::npos) << line << " in\n" << manifest;
  }
  // Copy 0's groups in copy-local ranks: its tensor-parallel groups; the data-parallel ones as
  // the copy's one member each.
  const std::string local_groups = ReadWholeFile(prefix + ".comm_groups.json");
  EXPECT_NE(local_groups.find("\"1\": [0, 1, 2, 3]"), std::string::npos) << local_groups;
  EXPECT_NE(local_groups.find("\"3\": [4, 5, 6, 7]"), std::string::npos) << local_groups;
  EXPECT_NE(local_groups.find("\"5\": [0]"), std::string::npos) << local_groups;
  EXPECT_EQ(local_groups.find("\"2\""), std::string::npos) << local_groups;

  // --all-ranks: every NPU's file, as ASTRA-sim reads them; the earlier manifest goes.
  const std::string all = Tmp("llm_dir/all/llm");
  const CommandOutcome gen_all = Orrery(
      "generate-llm --model gpt3-13b --layers 8 --dp 2 --tp 4 --pp 2 "
      "--micro-batches 3 --seq-length 1024 --all-ranks --output " +
      all);
  ASSERT_EQ(gen_all.exit_code, 0) << gen_all.err;
  EXPECT_NE(gen_all.out.find(all + ".0.et ... " + all + ".15.et"), std::string::npos)
      << gen_all.out;
  EXPECT_FALSE(std::filesystem::exists(all + ".manifest.yaml"));
  const std::string groups = ReadWholeFile(all + ".comm_groups.json");
  EXPECT_NE(groups.find("\"1\": [0, 1, 2, 3]"), std::string::npos) << groups;
  EXPECT_NE(groups.find("\"5\": [0, 4]"), std::string::npos) << groups;

  const CommandOutcome info = Orrery("trace-info " + all + ".15.et");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  // The last stage: 3 micro-batches × (4 layers × 4 + 1 LM head + 3 cross entropy) all-reduces
  // of its tensor-parallel group (group 4: stage 1, replica 1), and one of every weight over its
  // data-parallel group (group 12: after the 4 tensor-parallel groups, stage 1's tp rank 3) at
  // the end.
  EXPECT_NE(info.out.find("groups (pg_name: collectives): '12': 1, '4': 60"), std::string::npos)
      << info.out;

  const std::string machine =
      " --system-configuration=configs/machines/dgx-h100-ndr/system.yaml "
      "--network-configuration=configs/machines/dgx-h100-ndr/network.yaml";
  const CommandOutcome run = Orrery("--workload-configuration=" + prefix + machine);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("sys[15] finished"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("summary: 16 NPUs, step time"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("all-reduce 10485760 B on 4 NPUs"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("workload: manifest " + prefix +
                         ".manifest.yaml: 8 rank files run as 2 data-parallel copies on 16 NPUs"),
            std::string::npos)
      << run.out;
  // The manifest's copies are the full set of files, NPU for NPU.
  const CommandOutcome run_all = Orrery("--workload-configuration=" + all + machine);
  ASSERT_EQ(run_all.exit_code, 0) << run_all.err;
  std::string without_workload = run.out;
  without_workload.erase(without_workload.find("  workload: "),
                         without_workload.find('\n', without_workload.find("  workload: ")) -
                             without_workload.find("  workload: ") + 1);
  EXPECT_EQ(without_workload, run_all.out);

  const CommandOutcome bad = Orrery(
      "generate-llm --layers 9 --hidden 1000 --heads 3 --pp 2 --tp x "
      "--schedule zigzag --output " +
      prefix);
  EXPECT_EQ(bad.exit_code, 1);
  for (const char* m : {"--tp is 'x'; expected a whole number from 1 to 1048576",
                        "--schedule is 'zigzag'; expected one of 1f1b, gpipe"}) {
    EXPECT_NE(bad.err.find(m), std::string::npos) << m << "\n" << bad.err;
  }
  // With a flag that did not parse, checks across flags wait (they would judge the others
  // against a value not given: --ep 2 'expected 1 without --experts' for --experts abc).
  EXPECT_EQ(bad.err.find("--pp is '2'"), std::string::npos) << bad.err;
  const CommandOutcome across =
      Orrery("generate-llm --layers 9 --hidden 1000 --heads 3 --pp 2 --schedule zigzag --output " +
             prefix);
  EXPECT_EQ(across.exit_code, 1);
  for (const char* m : {"--schedule is 'zigzag'; expected one of 1f1b, gpipe",
                        "--pp is '2'; expected a divisor of --layers (9)",
                        "--hidden is '1000'; expected a multiple of --heads (3)"}) {
    EXPECT_NE(across.err.find(m), std::string::npos) << m << "\n" << across.err;
  }
  const CommandOutcome experts = Orrery(
      "generate-llm --layers 4 --hidden 4096 --heads 32 --dp 2 --experts abc --ep 2 --output " +
      prefix);
  EXPECT_EQ(experts.err,
            "error: generate-llm: --experts is 'abc'; expected a whole number from 0 to 65536\n");
  // 0 is not "the default": it is refused, except --experts 0 (a dense MLP).
  const CommandOutcome zero =
      Orrery("generate-llm --model gpt3-13b --pp 2 --micro-batches 0 --output " + prefix);
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("--micro-batches is '0'; expected a whole number from 1"),
            std::string::npos)
      << zero.err;
  const CommandOutcome unnamed = Orrery("generate-llm --output " + prefix);
  EXPECT_EQ(unnamed.exit_code, 1);
  EXPECT_NE(unnamed.err.find("--layers is required without --model"), std::string::npos)
      << unnamed.err;
  // Each flag is named once, with its text and its whole range; a missing one only as missing
  // (they had been named twice, the second time as '0', the default the field kept).
  const CommandOutcome once = Orrery("generate-llm --layers 1.5 --heads -1 --output " + prefix);
  EXPECT_EQ(once.exit_code, 1);
  EXPECT_EQ(once.err,
            "error: generate-llm: --hidden is required without --model (presets: orrery "
            "generate-llm --list-models)\n"
            "error: generate-llm: --layers is '1.5'; expected a whole number from 1 to 100000\n"
            "error: generate-llm: --heads is '-1'; expected a whole number from 1 to 1048576\n");
  const CommandOutcome models = Orrery("generate-llm --list-models");
  ASSERT_EQ(models.exit_code, 0);
  EXPECT_NE(models.out.find("llama2-70b: Llama 2 70B, 80 layers, hidden 8192, 64 heads (8 "
                            "key-value), ffn 28672 (swiglu)"),
            std::string::npos)
      << models.out;
}

// orrery generate-llm with a mixture of experts: Mixtral's shape (2 layers) with its experts
// over ep 4 replicas inside a node of dgx-h100-ndr, tensor parallelism with sequence
// parallelism, the pipeline across the nodes; the all-to-alls run on the expert-parallel group.
TEST(Cli, GenerateLlmMixtureOfExpertsRuns) {
  const std::string prefix = Tmp("moe");
  const CommandOutcome gen = Orrery(
      "generate-llm --model mixtral-8x7b --layers 2 --dp 4 --ep 4 --tp 2 --sequence-parallel "
      "--pp 2 --micro-batches 2 --seq-length 1024 --output " +
      prefix);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_NE(gen.out.find("ffn 14336 (swiglu) → 8 experts of 14336, 2 per token, over ep 4"),
            std::string::npos)
      << gen.out;
  // 512 tokens per rank (1024 over tp 2), 2 copies of each, 4096 × 2 bytes.
  EXPECT_NE(gen.out.find("8.00 MiB per expert all-to-all"), std::string::npos) << gen.out;
  const CommandOutcome run =
      Orrery("--workload-configuration=" + prefix +
             " --system-configuration=configs/machines/dgx-h100-ndr/system.yaml "
             "--network-configuration=configs/machines/dgx-h100-ndr/network.yaml");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("summary: 16 NPUs, step time"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("all-to-all 8388608 B on 4 NPUs"), std::string::npos) << run.out;
  const CommandOutcome bad =
      Orrery("generate-llm --model mixtral-8x7b --dp 4 --ep 3 --tp 2 --output " + prefix);
  EXPECT_EQ(bad.exit_code, 1);
  for (const char* m : {"--ep is '3'; expected a divisor of --experts (8)",
                        "--ep is '3'; expected a divisor of --dp (4)",
                        "--tp is '2'; expected 1 with --experts unless --sequence-parallel"}) {
    EXPECT_NE(bad.err.find(m), std::string::npos) << m << "\n" << bad.err;
  }
  const CommandOutcome models = Orrery("generate-llm --list-models");
  EXPECT_NE(models.out.find("mixtral-8x7b: Mixtral 8x7B, 32 layers, hidden 4096, 32 heads (8 "
                            "key-value), ffn 14336 (swiglu) × 8 experts (2 per token)"),
            std::string::npos)
      << models.out;
}

TEST(Cli, TextWorkloadsConvertAndRun) {
  const std::string configs =
      " --system-configuration=examples/dp_step/system.json "
      "--network-configuration=examples/dp_step/network.yml";
  // GPU compute per NPU: two passes of every layer's forward, weight- and input-gradient times
  // (the first layer's input gradient is not computed; none in the MICRO file).
  const struct {
    const char* name;
    const char* compute;
  } kCases[] = {{"cnn_data", "6.370"}, {"dlrm_hybrid", "50.340"}, {"allreduce_micro", "0.000"}};
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string input = std::string("examples/text/") + c.name + ".txt";
    const std::string eight = Tmp(std::string("text8_") + c.name);
    const std::string chakra = Tmp(std::string("textc_") + c.name);
    const std::string one = Tmp(std::string("text1_") + c.name);
    const CommandOutcome convert = Orrery("convert-text --input " + input + " --output " + eight +
                                          " --num-npus 8 "
                                          "--num-passes 2");
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    EXPECT_NE(convert.out.find(eight + ".0.et ... " + eight + ".7.et"), std::string::npos)
        << convert.out;
    // Chakra's own flag spellings.
    ASSERT_EQ(Orrery("convert-text --input_filename " + input + " --output_filename " + chakra +
                     " --num_npus 8 --num_passes 2 --chakra-compatible")
                  .exit_code,
              0);
    ASSERT_EQ(Orrery("convert-text --input=" + input + " --output=" + one +
                     " --num-npus=1 --num-passes=2")
                  .exit_code,
              0);
    const CommandOutcome run = Orrery("--workload-configuration=" + eight + configs);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("sys[7] finished"), std::string::npos) << run.out;
    const std::string compute_line = "  GPU compute";
    const size_t at = run.out.find(compute_line);
    ASSERT_NE(at, std::string::npos) << run.out;
    EXPECT_NE(run.out.substr(at, run.out.find('\n', at) - at).find(c.compute), std::string::npos)
        << run.out;
    EXPECT_EQ(Orrery("--workload-configuration=" + chakra + configs).out, run.out);
    const CommandOutcome replicated =
        Orrery("--workload-configuration=" + one + configs + " --replicate-trace");
    ASSERT_EQ(replicated.exit_code, 0) << replicated.err;
    const std::string line =
        "  workload: trace of 1 rank run as 8 copies on 8 NPUs; data-parallel groups: world\n";
    const size_t w = replicated.out.find(line);
    ASSERT_NE(w, std::string::npos) << replicated.out;
    EXPECT_EQ(replicated.out.substr(0, w) + replicated.out.substr(w + line.size()), run.out);
  }

  // NONE communications: no node, or with --chakra-compatible Chakra's all-reduces of 0 B,
  // which still cost time.
  const std::string model = Tmp("text_model.txt");
  Spit(model,
       "MODEL\n3\n"
       "a -1 10 ALLGATHER 1000 11 NONE 0 12 NONE 0 1\n"
       "b -1 10 NONE 0 11 REDUCESCATTER 1000 12 NONE 0 1\n"
       "c -1 10 NONE 0 11 NONE 0 12 NONE 0 1\n");
  const CommandOutcome plain =
      Orrery("convert-text --input " + model + " --output " + Tmp("text_model") + " --num-npus 8");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("11 nodes per NPU (2 collectives)"), std::string::npos) << plain.out;
  EXPECT_NE(plain.err.find("note: 3 NONE communication(s) written as no node"), std::string::npos)
      << plain.err;
  const CommandOutcome compatible =
      Orrery("convert-text --input " + model + " --output " + Tmp("text_model_c") +
             " --num-npus 8 --chakra-compatible");
  ASSERT_EQ(compatible.exit_code, 0) << compatible.err;
  EXPECT_NE(compatible.out.find("14 nodes per NPU (5 collectives)"), std::string::npos)
      << compatible.out;
  auto step = [&](const std::string& prefix) {
    const CommandOutcome o = Orrery("--workload-configuration=" + prefix + configs);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    const size_t at = o.out.find("step time ");
    return at == std::string::npos ? 0.0 : std::atof(o.out.c_str() + at + 10);
  };
  const double without = step(Tmp("text_model")), with = step(Tmp("text_model_c"));
  EXPECT_GT(without, 99.0);  // 99 us of compute, and the two real collectives
  EXPECT_GT(with, without);

  // Bad input: one message naming the file, line and value; bad flags name the flag.
  ExpectCleanFailure(
      Orrery("convert-text --input " + model + "x --output " + Tmp("t") + " --num-npus 8"),
      {"text_model.txtx: cannot read the text workload"});
  Spit(Tmp("text_bad.txt"), "DATA\n1\na -1 10 NONE 0 11 NONE 0 12 ALLREDUC 1000 1\n");
  ExpectCleanFailure(
      Orrery("convert-text --input " + Tmp("text_bad.txt") + " --output " + Tmp("t") +
             " --num-npus 8"),
      {"text_bad.txt:3: column 10 (weight-gradient communication type) of layer 'a' is "
       "'ALLREDUC'; expected ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or NONE"});
  ExpectCleanFailure(
      Orrery("convert-text --input " + model + " --output " + Tmp("t") + " --num-npus -3"),
      {"--num-npus is '-3'; expected an integer in [1, 1048576]"});
  ExpectCleanFailure(Orrery("convert-text --input " + model + " --output " + Tmp("t")),
                     {"--input FILE, --output PREFIX and --num-npus N are required"});
  // The output prefix's directory is made as needed (docs/workloads.md's `--output /tmp/cnn/cnn`);
  // a file in its way is named.
  const std::string nested = Tmp("text_new_dir/a/b/cnn");
  const CommandOutcome made =
      Orrery("convert-text --input " + model + " --output " + nested + " --num-npus 8");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(step(nested), without);  // the same traces as Tmp("text_model")'s
  Spit(Tmp("text_in_the_way"), "a file\n");
  ExpectCleanFailure(
      Orrery("convert-text --input " + model + " --output " + Tmp("text_in_the_way/cnn") +
             " --num-npus 2"),
      {"text_in_the_way/cnn: cannot create the directory '" + Tmp("text_in_the_way") +
       "' for its trace files: '" + Tmp("text_in_the_way") + "' is a file"});
  ExpectCleanFailure(Orrery("convert-text --input " + model + " --output " + Tmp("t") +
                            " --num-npus 8 --num-passes 0"),
                     {"--num-passes is '0'; expected an integer in [1, 100000]"});
  ExpectCleanFailure(Orrery("convert-text --inptu " + model),
                     {"convert-text: unknown flag '--inptu'; did you mean '--input'?"});
  // A text workload, or one rank's file, given as the trace prefix says what to give instead.
  ExpectCleanFailure(
      Orrery("--workload-configuration=examples/text/cnn_data.txt" + configs),
      {"examples/text/cnn_data.txt is a file, not a trace prefix: if it is an ASTRA-sim 1.0 text "
       "workload, convert it first: orrery convert-text --input examples/text/cnn_data.txt "
       "--output PREFIX --num-npus 1, then run --workload-configuration=PREFIX "
       "--replicate-trace"});
  ExpectCleanFailure(
      Orrery("--workload-configuration=examples/text/cnn_data.txt --replicate-trace" + configs),
      {"--replicate-trace: there is no examples/text/cnn_data.txt.0.et",
       "examples/text/cnn_data.txt is a file, not a trace prefix"});
  ExpectCleanFailure(Orrery("--workload-configuration=examples/dp_step/dp_step.3.et" + configs),
                     {"examples/dp_step/dp_step.3.et is a file, not a trace prefix: NPU r reads "
                      "<prefix>.<r>.et, so give examples/dp_step/dp_step"});
  EXPECT_NE(Orrery("--help").out.find("orrery convert-text --help"), std::string::npos);
  EXPECT_NE(Orrery("convert-text --help").out.find("--chakra-compatible"), std::string::npos);
}

// `orrery trace-info`: a prefix's files described (alike ones once, as a range), one file's
// JSON, and the errors a run would give.
TEST(Cli, TraceInfoDescribesTracesAndWritesJson) {
  const CommandOutcome dp = Orrery("trace-info examples/dp_step/dp_step");
  ASSERT_EQ(dp.exit_code, 0) << dp.err;
  // The ranks differ in their send and receive peers only, so each is listed.
  EXPECT_NE(dp.out.find("examples/dp_step/dp_step.7.et:\n  nodes: 15 (trace version 0.0.4)"),
            std::string::npos)
      << dp.out;
  EXPECT_NE(dp.out.find("    ALL_REDUCE: 4 (10485760 B, 1048576 to 4194304 B)"), std::string::npos)
      << dp.out;
  EXPECT_NE(dp.out.find("sends: 1 (262144 B) to 0; receives: 1 (262144 B) from 6"),
            std::string::npos)
      << dp.out;

  const std::string text = Tmp("info_text");
  ASSERT_EQ(
      Orrery("convert-text --input examples/text/cnn_data.txt --output " + text + " --num-npus 8")
          .exit_code,
      0);
  const CommandOutcome alike = Orrery("trace-info " + text);
  ASSERT_EQ(alike.exit_code, 0) << alike.err;
  EXPECT_EQ(alike.out.find(text + ".0.et .. " + text + ".7.et (8 files, each):\n  nodes: 23\n"), 0u)
      << alike.out;
  EXPECT_NE(alike.out.find("compute (duration_micros): GPU 3.185 ms, CPU 0 ns"), std::string::npos)
      << alike.out;

  const std::string json = Tmp("info.json");
  const CommandOutcome one = Orrery("trace-info examples/dp_step/dp_step.3.et --json " + json);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("wrote " + json), std::string::npos);
  EXPECT_NE(ReadWholeFile(json).find("\"name\": \"optimizer_step\""), std::string::npos);

  ExpectCleanFailure(Orrery("trace-info examples/dp_step/dp_step --json " + json),
                     {"--json writes one file's nodes; examples/dp_step/dp_step is a prefix of 8 "
                      "files, give one of them (e.g. examples/dp_step/dp_step.0.et)"});
  ExpectCleanFailure(Orrery("trace-info examples/dp_step/nothing"),
                     {"there is no file examples/dp_step/nothing, nor "
                      "examples/dp_step/nothing.0.et"});
  Spit(Tmp("info_bad.0.et"), std::string("\x07\x0a\x03") + "0.0");
  ExpectCleanFailure(Orrery("trace-info " + Tmp("info_bad.0.et")), {"info_bad.0.et: truncated"});
  ExpectCleanFailure(Orrery("trace-info"), {"give a .et file or a trace prefix"});
  EXPECT_NE(Orrery("--help").out.find("orrery trace-info PATH"), std::string::npos);
}

}  // namespace
}  // namespace orrery
