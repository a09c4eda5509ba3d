#include "runner/npu_scale.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "config/comm_group_config.h"

namespace orrery {

namespace {

constexpr const char* kFlag = "--npu-compute-scale";
constexpr double kMaxFactor = 1e6;

// The comma-separated items of `text`, trimmed, empty ones kept ("1,,2," has four).
std::vector<std::string> SplitItems(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(Trim(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return items;
}

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
  for (const std::string& item : SplitItems(spec)) {
    if (item.empty()) {
      problems.Add(std::string(kFlag) + ": '" + spec +
                   "' has an empty item (a comma at the start or end, or two in a row); "
                   "expected <npus>:<factor> items separated by commas, e.g. 3:1.5,8-15:0.5");
      continue;
    }
    const size_t colon = item.find(':');
    if (colon == std::string::npos) {
      problems.Add(std::string(kFlag) + ": item '" + item +
                   "' has no ':'; expected <npu>:<factor> or <first>-<last>:<factor>, "
                   "e.g. 3:1.5 or 8-15:0.5");
      continue;
    }
    const std::string ids = item.substr(0, colon);
    const std::string factor_text = Trim(item.substr(colon + 1));
    int first = 0, last = 0;
    if (!ParseNpuRange(ids, &first, &last) || last >= num_npus) {
      problems.Add(std::string(kFlag) + ": '" + ids + "' in '" + item + "' is not " + valid_ids +
                   " (one id, or a range first-last with first <= last)");
      continue;
    }
    char* end = nullptr;
    errno = 0;
    const double factor = std::strtod(factor_text.c_str(), &end);
    // At most 1e6, as --compute-scale: more would overflow simulated time.
    if (factor_text.empty() || *end != '\0' || errno != 0 || !std::isfinite(factor) ||
        factor <= 0 || factor > kMaxFactor) {
      problems.Add(std::string(kFlag) + ": factor '" + factor_text + "' in '" + item +
                   "' is not a number > 0 and <= 1e6 (1 = nominal speed, 2 = twice as slow)");
      continue;
    }
    for (int i = first; i <= last; ++i) scales[static_cast<size_t>(i)] = factor;
  }
  if (!problems.ok()) return problems;
  return scales;
}

StatusOr<std::vector<NpuRange>> ParseNpuRanges(const std::string& text, const std::string& what,
                                               const std::string& expected, int num_npus,
                                               const std::string& bound) {
  const std::string valid = "NPU ids in [0, " + std::to_string(num_npus - 1) + "]";
  std::vector<NpuRange> ranges;
  Status problems;
  for (const std::string& item : SplitItems(text)) {
    NpuRange r;
    if (!ParseNpuRange(item, &r.first, &r.last)) {
      problems.Merge(Status::Invalid("", what + " item", item, expected));
      continue;
    }
    if (r.last >= num_npus) {
      // Checked here, before any caller expands the range: 0-999999999 is one message, not 4 GB.
      problems.Add(what + " '" + text + "' names NPU " + std::to_string(r.last) +
                   (r.first == r.last ? "" : " (in '" + item + "')") + "; expected " + valid +
                   " (" + bound + ")");
      continue;
    }
    ranges.push_back(r);
  }
  if (!problems.ok()) return problems;
  return ranges;
}

StatusOr<std::vector<bool>> ParseNpuSet(const std::string& spec, int num_npus,
                                        const std::string& flag) {
  const std::string valid = "NPU ids in [0, " + std::to_string(num_npus - 1) + "]";
  StatusOr<std::vector<NpuRange>> ranges = ParseNpuRanges(
      spec, flag, valid + " and ranges first-last, e.g. 0-7,64", num_npus, "the network's NPUs");
  if (!ranges.ok()) return ranges.status();
  std::vector<bool> in(static_cast<size_t>(num_npus), false);
  for (const NpuRange& r : *ranges) {
    for (int npu = r.first; npu <= r.last; ++npu) in[static_cast<size_t>(npu)] = true;
  }
  return in;
}

}  // namespace orrery
