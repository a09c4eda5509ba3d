#include "common/test_data.h"

#include <cstdlib>
#include <filesystem>

namespace orrery {

std::string RunfilesDir() {
  namespace fs = std::filesystem;
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    const char* d = std::getenv(var);
    if (d != nullptr && *d != '\0') return fs::absolute(d).string();
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : self.string() + ".runfiles";
}

std::string SharedDir(const std::string& sub) {
  const std::string runfiles = RunfilesDir();
  if (runfiles.empty()) return "";
  const std::string dir = runfiles + "/orrery_shared/" + sub;
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir : "";
}

std::string SharedDirMissing(const std::string& sub) {
  return "the shared reference material '" + sub + "' is not in this test's runfiles (" +
         RunfilesDir() + "/orrery_shared/" + sub + "): add \"@orrery_shared//:" + sub +
         "\" to the test's data; the workspace reads it from ../shared beside the checkout "
         "(WORKSPACE, new_local_repository orrery_shared)";
}

}  // namespace orrery
