// The communicator-group file (ASTRA-sim's --comm-group-configuration JSON).
//
//   // {"0": [0, 1, 2, 3], "1": [4, 5, 6, 7]}
//   StatusOr<std::map<int, std::vector<int>>> g = LoadCommGroupConfig("groups.json", 8);
//
// Group ids are non-negative integers (written as strings, as JSON keys are); members are NPU ids
// in [0, num_npus) without repeats, at least two per group.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace orrery {

StatusOr<std::map<int, std::vector<int>>> LoadCommGroupConfig(const std::string& path,
                                                              int num_npus);

}  // namespace orrery
