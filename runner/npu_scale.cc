#include "runner/npu_scale.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "config/comm_group_config.h"

namespace orrery {

namespace {

constexpr const char* kFlag = "--npu-compute-scale";

}  // namespace

bool ParseNpuRange(const std::string& text, int* first, int* last) {
  const size_t dash = text.find('-');
  *first = ParseDecimalId(Trim(text.substr(0, dash)));
  *last = dash == std::string::npos ? *first : ParseDecimalId(Trim(text.substr(dash + 1)));
  return *first >= 0 && *last >= *first;
}

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
    int first = 0, last = 0;
    if (!ParseNpuRange(ids, &first, &last) || last >= num_npus) {
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
    for (int i = first; i <= last; ++i) scales[static_cast<size_t>(i)] = factor;
  }
  if (!problems.ok()) return problems;
  return scales;
}

StatusOr<std::vector<int>> ParseNpuList(const std::string& text, const std::string& what,
                                        const std::string& expected) {
  std::vector<int> npus;
  Status problems;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = Trim(text.substr(start, comma - start));
    start = comma + 1;
    int first = 0, last = 0;
    if (!ParseNpuRange(item, &first, &last)) {
      problems.Merge(Status::Invalid("", what + " item", item, expected));
      continue;
    }
    for (int i = first; i <= last; ++i) npus.push_back(i);
  }
  if (!problems.ok()) return problems;
  return npus;
}

StatusOr<std::vector<bool>> ParseNpuSet(const std::string& spec, int num_npus,
                                        const std::string& flag) {
  const std::string valid = "NPU ids in [0, " + std::to_string(num_npus - 1) + "]";
  StatusOr<std::vector<int>> npus =
      ParseNpuList(spec, flag, valid + " and ranges first-last, e.g. 0-7,64");
  if (!npus.ok()) return npus.status();
  std::vector<bool> in(static_cast<size_t>(num_npus), false);
  for (int npu : *npus) {
    if (npu >= num_npus) {
      return Status::Error(flag + " '" + spec + "' names NPU " + std::to_string(npu) +
                           "; expected " + valid + " (the network's NPUs)");
    }
    in[static_cast<size_t>(npu)] = true;
  }
  return in;
}

}  // namespace orrery
