// Same inputs, same outputs, at any thread count: a run (its trace files are loaded in
// parallel), a sweep and `orrery validate` / `calibrate` (their points and sizes run side by side)
// give the same bytes with one thread and with several: stdout, stderr (less the wall-time line)
// and every file they write.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "common/test_data.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// stderr without the line that differs from run to run by nature.
std::string WithoutWallTime(const std::string& err) {
  std::istringstream in(err);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.find(" s of wall time") != std::string::npos) continue;
    out += line + "\n";
  }
  return out;
}

// Everything one command gave: its exit status, streams, and every file under its directory
// (relative path -> bytes).
struct Outcome {
  int exit_code = -1;
  std::map<std::string, std::string> files;
};

// Runs `orrery args` in a fresh directory `name` under the test's temporary directory, with
// OMP_NUM_THREADS=`threads`; the inputs are named relative to the runfiles (examples/,
// configs/) or by absolute path.
Outcome RunOrrery(const std::string& name, int threads, const std::string& args) {
  const std::string ws = fs::current_path().string();  // the runfiles' workspace directory
  const std::string dir = ::testing::TempDir() + "/determinism/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* input : {"examples", "configs"}) {
    fs::create_directory_symlink(ws + "/" + input, dir + "/" + input);
  }
  const std::string cmd = "cd '" + dir + "' && OMP_NUM_THREADS=" + std::to_string(threads) +
                          " timeout 300 '" + ws + "/orrery' " + args + " >" + dir + ".stdout 2>" +
                          dir + ".stderr";
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.files["(stdout)"] = Slurp(dir + ".stdout");
  o.files["(stderr)"] = WithoutWallTime(Slurp(dir + ".stderr"));
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_symlink() || !e.is_regular_file()) continue;
    o.files[fs::relative(e.path(), dir).string()] = Slurp(e.path().string());
  }
  return o;
}

// Runs `one` with 1 thread and `many` with 4 (the same command, give or take its --jobs), and
// expects the same exit status and the same bytes in every file.
void ExpectSameAtOneAndFourThreads(const std::string& name, const std::string& one,
                                   const std::string& many, size_t min_files) {
  const Outcome a = RunOrrery(name + ".1", 1, one);
  const Outcome b = RunOrrery(name + ".4", 4, many);
  EXPECT_EQ(a.exit_code, b.exit_code) << a.files.at("(stderr)") << b.files.at("(stderr)");
  EXPECT_GE(a.files.size(), min_files) << name;
  ASSERT_EQ(a.files.size(), b.files.size()) << name;
  for (const auto& [file, bytes] : a.files) {
    const auto other = b.files.find(file);
    ASSERT_NE(other, b.files.end()) << name << ": " << file << " only with 1 thread";
    EXPECT_TRUE(bytes == other->second)
        << name << ": " << file << " differs between 1 and 4 "
        << "threads (" << bytes.size() << " vs " << other->second.size() << " bytes)";
  }
}

std::string Shared(const std::string& sub) {
  const std::string dir = SharedDir(sub);
  EXPECT_FALSE(dir.empty()) << SharedDirMissing(sub);
  return dir;
}

// The parity case: 64 trace files (loaded in parallel), every output.
TEST(Determinism, ARunWithEveryOutputAtOneAndFourThreads) {
  const std::string p = Shared("compat") + "/parity/mixed_p2p_2d/";
  const std::string args = "--workload-configuration=" + p + "mixed --system-configuration=" + p +
                           "Ring_4chunks_2d.json --network-configuration=" + p +
                           "Ring8_x_Switch_64npus.yml --report=report.json --report-csv=run "
                           "--timeline=timeline.json --timeline-npus=0-3,60 "
                           "--timeline-chakra=chakra.txt --link-stats=links.csv";
  ExpectSameAtOneAndFourThreads("run", args, args, 11);
  ExpectSameAtOneAndFourThreads("run_packet", args + " --network-backend=packet",
                                args + " --network-backend=packet", 11);
}

// Several ranks' files refused at once: the same message, in the same order.
TEST(Determinism, ErrorsFromFilesLoadedInParallelAtOneAndFourThreads) {
  const std::string dir = ::testing::TempDir() + "/determinism_bad";
  fs::create_directories(dir);
  for (int r = 0; r < 8; ++r) {
    const std::string name = "/t." + std::to_string(r) + ".et";
    std::string bytes = Slurp("examples/dp_step/dp_step." + std::to_string(r) + ".et");
    ASSERT_FALSE(bytes.empty());
    if (r == 2 || r == 5 || r == 7) bytes.resize(bytes.size() / 2);  // truncated
    std::ofstream(dir + name, std::ios::binary) << bytes;
  }
  const std::string args = "--workload-configuration=" + dir +
                           "/t --system-configuration=examples/dp_step/system.json "
                           "--network-configuration=examples/dp_step/network.yml";
  ExpectSameAtOneAndFourThreads("bad", args, args, 2);
  const Outcome o = RunOrrery("bad.again", 4, args);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.files.at("(stderr)").find("t.2.et"), std::string::npos) << o.files.at("(stderr)");
}

// A generated step (one data-parallel copy's files and a manifest) at scale's defaults: the
// files written, and the run that hashes them in parallel, shares identical ones and simulates
// one NPU per orbit, give the same bytes at one and four threads; so does --exact.
TEST(Determinism, AGeneratedStepAndItsShortcutRunAtOneAndFourThreads) {
  const std::string gen =
      "generate-llm --layers 4 --hidden 1024 --heads 16 --vocab 32000 --seq-length 1024 --tp 2 "
      "--pp 2 --dp 4 --global-batch-size 16 --output step";
  ExpectSameAtOneAndFourThreads("gen", gen, gen, 7);  // 4 rank files, groups, manifest, streams
  const Outcome g = RunOrrery("gen.src", 1, gen);
  ASSERT_EQ(g.exit_code, 0) << g.files.at("(stderr)");
  const std::string src = ::testing::TempDir() + "/determinism/gen.src/";
  std::ofstream(src + "net.yml") << "topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\n"
                                    "bandwidth: [ 200.0, 25.0 ]\nlatency: [ 500.0, 2000.0 ]\n";
  const std::string run = "--workload-configuration=" + src +
                          "step --system-configuration=configs/machines/dgx-h100-ndr/system.yaml "
                          "--network-configuration=" +
                          src + "net.yml";
  ExpectSameAtOneAndFourThreads("gen_run", run, run, 2);
  ExpectSameAtOneAndFourThreads("gen_run_exact", run + " --exact", run + " --exact", 2);
  const Outcome r = RunOrrery("gen_run.again", 4, run);
  EXPECT_EQ(r.exit_code, 0) << r.files.at("(stderr)");
  EXPECT_NE(r.files.at("(stderr)").find("16 NPUs simulated as 4"), std::string::npos)
      << r.files.at("(stderr)");
}

TEST(Determinism, ASweepWithOneAndFourJobs) {
  ExpectSameAtOneAndFourThreads("sweep", "sweep configs/sweeps/jobs_sharing.yaml --jobs 1 --out s",
                                "sweep configs/sweeps/jobs_sharing.yaml --jobs 4 --out s", 6);
}

TEST(Determinism, ValidateAndCalibrateWithOneAndFourJobs) {
  const std::string v = Shared("validation");
  const std::string validate = "validate --nccl-tests " + v +
                               "/azure-h100-8gpu-all_reduce-busbw.csv --nccl-tests " + v +
                               "/h100-8gpu-nvswitch-all_reduce-default.log "
                               "--machine configs/machines/hgx-h100 --report r.json --jobs ";
  ExpectSameAtOneAndFourThreads("validate", validate + "1", validate + "4", 3);
  const std::string calibrate = "calibrate --nccl-tests " + v +
                                "/azure-h100-8gpu-all_reduce-busbw.csv --machine "
                                "configs/machines/hgx-h100 --fit nvls,Simple --out fitted --jobs ";
  ExpectSameAtOneAndFourThreads("calibrate", calibrate + "1", calibrate + "4", 6);
}

}  // namespace
}  // namespace orrery
