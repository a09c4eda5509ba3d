#include "validate/nccl_tests.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "validate/nccl_tests_internal.h"

namespace orrery {

using nccl_tests_internal::LoadCsv;
using nccl_tests_internal::LoadLog;
using nccl_tests_internal::ParseDouble;
using nccl_tests_internal::TimeInRange;

const char* const kMeasuredTimeRange = "a number of microseconds from 0.001 to 1e9";

bool ParseMeasuredTime(const std::string& text, double* us) {
  return ParseDouble(text, us) && TimeInRange(*us);
}

double NcclBusFactor(const std::string& c, int n) {
  if (n <= 1) return 1.0;
  const double nn = n;
  if (c == "all_reduce") return 2.0 * (nn - 1) / nn;
  if (c == "all_gather" || c == "reduce_scatter" || c == "alltoall") return (nn - 1) / nn;
  return 1.0;
}

StatusOr<std::vector<NcclMeasurement>> LoadNcclMeasurements(const std::string& path, int gpus,
                                                            const std::string& collective,
                                                            int default_gpus) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return Status::Error(path +
                         ": is a directory; expected an nccl-tests log or a CSV of "
                         "measurements");
  }
  if (const std::string why = NotARegularFile(path); !why.empty()) return Status::Error(why);
  std::ifstream f(path);
  if (!f) return Status::Error(path + ": cannot read: " + std::strerror(errno));
  {
    // Text, not UTF-16 (a log saved by some Windows editors) or a binary file: no NUL bytes in
    // its first 4 KiB.
    char head[4096];
    f.read(head, sizeof head);
    const std::streamsize got = f.gcount();
    if (std::find(head, head + got, '\0') != head + got) {
      return Status::Error(path +
                           ": is not a text file (it holds NUL bytes: UTF-16, or binary); "
                           "expected an nccl-tests log or a CSV as plain text (UTF-8 or ASCII)");
    }
    f.clear();
    f.seekg(0);
  }
  // nccl-tests' name (alltoall_perf) for the collective Chakra and Orrery call all_to_all.
  const std::string name = collective == "all_to_all" ? "alltoall" : collective;
  return IsNcclCsv(path) ? LoadCsv(path, f, gpus, name, default_gpus)
                         : LoadLog(path, f, gpus, name);
}

bool IsNcclCsv(const std::string& path) {
  if (path.size() <= 4) return false;
  return Lower(path.substr(path.size() - 4)) == ".csv";
}

}  // namespace orrery
