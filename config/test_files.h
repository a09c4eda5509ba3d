// Test helpers: input files in ::testing::TempDir(), runfiles, and the ASTRA-sim compat corpus.
//
//   std::string path = WriteTestFile("bad.json", "{\"endpoint-delay\": -3}");
//   std::string readme = RunfilePath("configs/README.md");
//   std::string compat;  // ORRERY_COMPAT_DIR; the test fails when it is unset
//   ASSERT_TRUE(CompatDir(&compat)) << kCompatDirHelp;
#pragma once

#include <string>

namespace orrery {

// Writes `text` to ::testing::TempDir()/name and returns the path.
std::string WriteTestFile(const std::string& name, const std::string& text);

// Absolute path of a file in this workspace's runfiles (a `data` dependency).
std::string RunfilePath(const std::string& workspace_relative);

// The whole file, or "" when it cannot be read.
std::string ReadWholeFile(const std::string& path);

// Sets *dir to $ORRERY_COMPAT_DIR; false when unset or empty.
bool CompatDir(std::string* dir);
extern const char kCompatDirHelp[];

}  // namespace orrery
