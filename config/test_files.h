// Test helpers: input files in ::testing::TempDir(), runfiles, the ASTRA-sim compat corpus, and
// command lines run with their output captured.
//
//   std::string path = WriteTestFile("bad.json", "{\"endpoint-delay\": -3}");
//   std::string readme = RunfilePath("configs/README.md");
//   std::string compat;  // ../shared/compat through the runfiles; the test fails without it
//   ASSERT_TRUE(CompatDir(&compat)) << CompatDirHelp();
//   CommandOutcome o = RunCommand("timeout 120 ./orrery --help");
//   EXPECT_EQ(o.exit_code, 0) << o.err;
#pragma once

#include <string>

namespace orrery {

// Writes `text` to ::testing::TempDir()/name and returns the path.
std::string WriteTestFile(const std::string& name, const std::string& text);

// Absolute path of a file in this workspace's runfiles (a `data` dependency).
std::string RunfilePath(const std::string& workspace_relative);

// The whole file, or "" when it cannot be read.
std::string ReadWholeFile(const std::string& path);

// Sets *dir to the shared corpus ../shared/compat in the runfiles (`@orrery_shared//:compat` in
// the test's data); false when it is not there, and CompatDirHelp() says why.
bool CompatDir(std::string* dir);
std::string CompatDirHelp();

// What a command line did: its exit status (128 + N when signal N ended it) and its output.
struct CommandOutcome {
  int exit_code = -1;
  std::string out;  // standard output
  std::string err;  // standard error
};

// Runs `command` with the shell (std::system), its standard output and error sent to files in
// ::testing::TempDir(), and returns what it did.
CommandOutcome RunCommand(const std::string& command);

}  // namespace orrery
