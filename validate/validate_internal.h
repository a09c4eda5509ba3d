// What validate's files share inside //validate:validate: the collectives it simulates.
#pragma once

#include <map>
#include <string>

#include "et_feeder/trace.h"

namespace orrery::validate_internal {

struct Collective {
  ChakraProtoMsg::CollectiveCommType type;
};

// The collectives validate simulates, by nccl-tests' name.
const std::map<std::string, Collective>& Collectives();

// For messages: the collectives validate simulates (Collectives(), and all_to_all's other name).
std::string ValidCollectives();

}  // namespace orrery::validate_internal
