#include "fuzz/fuzz_input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace orrery {

std::string FuzzInputFile(const uint8_t* data, size_t size, const std::string& name) {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    if (tmp == nullptr) tmp = std::getenv("TMPDIR");
    const std::string d =
        std::string(tmp != nullptr ? tmp : "/tmp") + "/orrery-fuzz-" + std::to_string(getpid());
    mkdir(d.c_str(), 0755);
    return d;
  }();
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f != nullptr) {
    if (size > 0) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

}  // namespace orrery
