#include "config/test_files.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/test_data.h"
#include "gtest/gtest.h"

namespace orrery {

std::string WriteTestFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path;
}

std::string RunfilePath(const std::string& workspace_relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return workspace_relative;
  return std::string(srcdir) + "/" + workspace + "/" + workspace_relative;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool CompatDir(std::string* dir) {
  *dir = SharedDir("compat");
  return !dir->empty();
}

std::string CompatDirHelp() { return SharedDirMissing("compat"); }

CommandOutcome RunCommand(const std::string& command) {
  static int n = 0;
  const std::string base = ::testing::TempDir() + "/command_" + std::to_string(n++);
  const int status =
      std::system(("(" + command + ") >" + base + ".out 2>" + base + ".err").c_str());
  CommandOutcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = ReadWholeFile(base + ".out");
  o.err = ReadWholeFile(base + ".err");
  return o;
}

}  // namespace orrery
