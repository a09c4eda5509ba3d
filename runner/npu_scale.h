// Per-NPU compute speed factors (--npu-compute-scale): stragglers and heterogeneous machines.
//
//   StatusOr<std::vector<double>> f = ParseNpuScales("3:1.5,8-15:0.5", /*num_npus=*/16);
//   // f = {1, 1, 1, 1.5, 1, 1, 1, 1, 0.5, ..., 0.5}
//
// A comma list of <npus>:<factor>, where <npus> is one NPU id or an inclusive range "a-b". The
// factor (> 0, at most 1e6 as --compute-scale) multiplies that NPU's compute durations (on top
// of --compute-scale): 2 means twice as slow. Later items override earlier ones. Empty means
// every NPU at 1; an empty item (a comma at either end, or two in a row) is an error.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace orrery {

StatusOr<std::vector<double>> ParseNpuScales(const std::string& spec, int num_npus);

// One NPU id ("3") or an inclusive range ("8-15", first <= last), ids of 1 to 9 digits, spaces
// around them allowed: true with the range in `first`..`last`. Shared by --npu-compute-scale and
// ParseNpuRanges.
bool ParseNpuRange(const std::string& text, int* first, int* last);

struct NpuRange {
  int first = 0;
  int last = 0;  // inclusive
};

// "0-7,16-23", "3", or "4-5,0-1": NPU ids and ranges, in the order written (repeats kept), each
// checked against [0, num_npus - 1] before anything is expanded, so "0-999999999" costs nothing.
// Every bad item is named: "<what> item is '<item>'; expected <expected>" for the syntax, and
// "<what> '<text>' names NPU <id> [(in '<range>')]; expected NPU ids in [0, <num_npus - 1>]
// (<bound>)" past the end, `bound` saying where the limit comes from ("the network's NPUs").
StatusOr<std::vector<NpuRange>> ParseNpuRanges(const std::string& text, const std::string& what,
                                               const std::string& expected, int num_npus,
                                               const std::string& bound);

// The list as a set of `num_npus` NPUs, true for each listed (repeats allowed); `flag`
// names the option in the messages, which also name ids past the machine with the valid range.
//
//   StatusOr<std::vector<bool>> s = ParseNpuSet("1,4-5", 8, "--timeline-npus");
//   // *s = {false, true, false, false, true, true, false, false}
StatusOr<std::vector<bool>> ParseNpuSet(const std::string& spec, int num_npus,
                                        const std::string& flag);

}  // namespace orrery
