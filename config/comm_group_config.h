// The communicator-group file (ASTRA-sim's --comm-group-configuration JSON).
//
//   // {"0": [0, 1, 2, 3], "1": [4, 5, 6, 7]}
//   StatusOr<std::map<int, std::vector<int>>> g = LoadCommGroupConfig("groups.json", 8);
//
// Group ids are integers from 1 to kMaxCommGroupId (written as strings, as JSON keys are);
// members are NPU ids in [0, num_npus) without repeats, at least two per group.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace orrery {

// Communicator group ids run from 1 to kMaxCommGroupId (0 is the group of every NPU), wherever
// they are written: a comm-group file, a node's pg_name, a METADATA node, --dp-groups.
inline constexpr int kMaxCommGroupId = 999999999;

// A group id or NPU id as written: 1 to 9 decimal digits (0 to kMaxCommGroupId), or -1.
int ParseDecimalId(std::string_view text);

// `one_member_ok`: groups that may have a single member (with --replicate-trace, the
// data-parallel groups, which span every copy); null = none. `member` says what a member is,
// for messages: "an NPU id" (members in [0, num_npus)), "a rank of job 'a'".
StatusOr<std::map<int, std::vector<int>>> LoadCommGroupConfig(
    const std::string& path, int num_npus, const std::set<int>* one_member_ok = nullptr,
    const std::string& member = "an NPU id");

}  // namespace orrery
