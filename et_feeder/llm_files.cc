// generate-llm's files (declared in llm_workload.h): every rank's trace and the communicator
// groups beside them.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "et_feeder/llm_internal.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {

using ChakraProtoMsg::Node;

std::string ProcessGroupsInputs(const std::vector<LlmGroup>& groups) {
  std::ostringstream pgs;
  pgs << "[[";
  for (size_t i = 0; i < groups.size(); ++i) {
    pgs << (i ? ", " : "") << "{\"pg_name\": \"" << groups[i].id << "\", \"ranks\": [";
    for (size_t j = 0; j < groups[i].ranks.size(); ++j) {
      pgs << (j ? ", " : "") << groups[i].ranks[j];
    }
    pgs << "]}";
  }
  pgs << "]]";
  return pgs.str();
}

std::string llm_internal::GroupsJson(const std::vector<LlmGroup>& groups) {
  std::ostringstream out;
  out << "{";
  for (size_t i = 0; i < groups.size(); ++i) {
    out << (i ? ",\n " : "\n ") << "\"" << groups[i].id << "\": [";
    for (size_t j = 0; j < groups[i].ranks.size(); ++j)
      out << (j ? ", " : "") << groups[i].ranks[j];
    out << "]";
  }
  out << (groups.empty() ? "}\n" : "\n}\n");
  return out.str();
}

std::string LlmCommGroupsJson(const LlmConfig& config) {
  return llm_internal::GroupsJson(LlmGroups(config));
}

Status WriteLlmWorkload(const LlmConfig& config, const std::string& prefix, size_t* max_nodes) {
  const LlmShape shape = ShapeOf(config);
  size_t most = 0;
  for (int64_t r = 0; r < shape.npus; ++r) {
    const std::vector<Node> nodes = BuildLlmRank(config, r);
    most = std::max(most, nodes.size());
    Status s = WriteTraceFile(RankTracePath(prefix, static_cast<int>(r)), nodes);
    if (!s.ok()) return s;
  }
  const std::string groups = prefix + ".comm_groups.json";
  std::ofstream out(groups);
  out << LlmCommGroupsJson(config);
  out.close();
  if (!out) return Status::Error(groups + ": cannot write the communicator groups");
  if (max_nodes != nullptr) *max_nodes = most;
  return Status::Ok();
}

}  // namespace et
}  // namespace orrery
