#include "runner/npu_scale.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace orrery {

namespace {

constexpr const char* kFlag = "--npu-compute-scale";

// Parses a whole non-negative decimal integer; false on anything else.
bool ParseId(const std::string& s, long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  *out = std::strtol(s.c_str(), nullptr, 10);
  return errno == 0;
}

}  // namespace

StatusOr<std::vector<double>> ParseNpuScales(const std::string& spec, int num_npus) {
  std::vector<double> scales(static_cast<size_t>(num_npus), 1.0);
  if (spec.empty()) return scales;
  const std::string valid_ids = "NPU ids in [0, " + std::to_string(num_npus - 1) + "]";
  Status problems;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) {
      problems.Add(std::string(kFlag) + ": item '" + item +
                   "' has no ':'; expected <npu>:<factor> or <first>-<last>:<factor>, "
                   "e.g. 3:1.5 or 8-15:0.5");
      continue;
    }
    const std::string ids = item.substr(0, colon);
    const std::string factor_text = item.substr(colon + 1);
    long first = 0, last = 0;
    const size_t dash = ids.find('-');
    const bool ids_ok = dash == std::string::npos ? ParseId(ids, &first) && (last = first, true)
                                                  : ParseId(ids.substr(0, dash), &first) &&
                                                        ParseId(ids.substr(dash + 1), &last);
    if (!ids_ok || first > last || last >= num_npus) {
      problems.Add(std::string(kFlag) + ": '" + ids + "' in '" + item + "' is not " + valid_ids +
                   " (one id, or a range first-last with first <= last)");
      continue;
    }
    char* end = nullptr;
    errno = 0;
    const double factor = std::strtod(factor_text.c_str(), &end);
    if (factor_text.empty() || *end != '\0' || errno != 0 || !std::isfinite(factor) ||
        factor <= 0) {
      problems.Add(std::string(kFlag) + ": factor '" + factor_text + "' in '" + item +
                   "' is not a number > 0 (1 = nominal speed, 2 = twice as slow)");
      continue;
    }
    for (long i = first; i <= last; ++i) scales[static_cast<size_t>(i)] = factor;
  }
  if (!problems.ok()) return problems;
  return scales;
}

}  // namespace orrery
