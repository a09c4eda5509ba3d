#include "et_feeder/llm_copies.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "et_feeder/llm_compute.h"
#include "et_feeder/llm_internal.h"
#include "et_feeder/manifest.h"
#include "et_feeder/trace.h"
#include "et_feeder/writer.h"

namespace orrery {
namespace et {

namespace {

using ChakraProtoMsg::Node;

// Where NPU `npu` of the full step is in the copies: its copy and copy-local rank.
struct CopyRank {
  int64_t copy;
  int64_t rank;
};
CopyRank CopyRankOf(const LlmConfig& c, const LlmCopyLayout& l, int64_t npu) {
  const int64_t replicas = Replicas(c);  // data-parallel replicas x context-parallel ranks
  const int64_t stage = npu / (replicas * c.tp);
  const int64_t replica = (npu / c.tp) % replicas;
  const int64_t t = npu % c.tp;
  return CopyRank{replica / l.unit, (stage * l.unit + replica % l.unit) * c.tp + t};
}

// A send's destination or a receive's source, renumbered in place (whichever integer encoding
// the writer used).
void RenumberPeer(Node* node, const char* attr, const LlmConfig& c, const LlmCopyLayout& l) {
  for (ChakraProtoMsg::AttributeProto& a : *node->mutable_attr()) {
    if (a.name() != attr) continue;
    const int64_t peer = a.has_int32_val() ? a.int32_val() : a.int64_val();
    const CopyRank at = CopyRankOf(c, l, peer);
    ORRERY_CHECK(at.copy == 0, "a pipeline peer outside its copy");
    if (a.has_int32_val()) {
      a.set_int32_val(static_cast<int32_t>(at.rank));
    } else {
      a.set_int64_val(at.rank);
    }
  }
}

// Removes <prefix>.<k>.et for k = from, from + 1, ... up to the first missing one: an earlier
// set's files past the new one's, which a run or ASTRA-sim would otherwise read.
int64_t RemoveRankFilesFrom(const std::string& prefix, int64_t from) {
  int64_t removed = 0;
  while (unlink(RankTracePath(prefix, static_cast<int>(from + removed)).c_str()) == 0) ++removed;
  return removed;
}

Status WriteGroupsJson(const std::string& path, const std::vector<LlmGroup>& groups) {
  std::ofstream f(path);
  f << llm_internal::GroupsJson(groups);
  f.close();
  if (!f) return Status::Error(path + ": cannot write the communicator groups");
  return Status::Ok();
}

}  // namespace

LlmCopyLayout CopyLayoutOf(const LlmConfig& c) {
  LlmCopyLayout l;
  // A copy holds the replicas a group spans inside the data-parallel ones: an expert-parallel
  // group's ep, or a context-parallel group's cp (Replicas: dp x cp, the cp ranks of a replica
  // consecutive).
  l.unit = c.experts > 0 ? c.ep : c.cp;
  l.copies = Replicas(c) / l.unit;
  l.interleave = l.unit * c.tp;
  l.ranks = c.pp * l.interleave;
  return l;
}

std::vector<LlmGroup> CopyGroupsOf(const LlmConfig& c, std::vector<int64_t>* spanning) {
  const LlmCopyLayout l = CopyLayoutOf(c);
  std::vector<LlmGroup> out;
  for (const LlmGroup& g : LlmGroups(c)) {
    LlmGroup local{g.id, {}};
    bool elsewhere = false;
    for (int64_t npu : g.ranks) {
      const CopyRank at = CopyRankOf(c, l, npu);
      if (at.copy == 0) {
        local.ranks.push_back(at.rank);
      } else {
        elsewhere = true;
      }
    }
    if (local.ranks.empty()) continue;  // another copy's own group
    std::sort(local.ranks.begin(), local.ranks.end());
    if (elsewhere && spanning != nullptr) spanning->push_back(g.id);
    out.push_back(std::move(local));
  }
  return out;
}

std::vector<Node> BuildLlmCopyRank(const LlmConfig& c, int64_t rank) {
  const LlmCopyLayout l = CopyLayoutOf(c);
  std::vector<Node> nodes = BuildLlmRank(c, l.Npu(0, rank));
  for (Node& n : nodes) {
    switch (n.type()) {
      case ChakraProtoMsg::COMM_SEND_NODE:
        RenumberPeer(&n, "comm_dst", c, l);
        break;
      case ChakraProtoMsg::COMM_RECV_NODE:
        RenumberPeer(&n, "comm_src", c, l);
        break;
      case ChakraProtoMsg::METADATA_NODE:
        if (n.name() == "process_group:init") {
          n.mutable_inputs()->set_values(ProcessGroupsInputs(CopyGroupsOf(c, nullptr)));
        }
        break;
      default:
        break;
    }
  }
  return nodes;
}

Status WriteLlmAllRanks(const LlmConfig& config, const std::string& prefix, size_t* max_nodes) {
  Status s = WriteLlmWorkload(config, prefix, max_nodes);
  if (!s.ok()) return s;
  RemoveRankFilesFrom(prefix, ShapeOf(config).npus);
  unlink(ManifestPath(prefix).c_str());
  return Status::Ok();
}

Status WriteLlmCopies(const LlmConfig& config, const std::string& prefix, size_t* max_nodes,
                      int64_t* files) {
  const LlmCopyLayout l = CopyLayoutOf(config);
  if (l.copies == 1) {
    if (files != nullptr) *files = ShapeOf(config).npus;
    return WriteLlmAllRanks(config, prefix, max_nodes);
  }
  size_t most = 0;
  for (int64_t r = 0; r < l.ranks; ++r) {
    const std::vector<Node> nodes = BuildLlmCopyRank(config, r);
    most = std::max(most, nodes.size());
    Status s = WriteTraceFile(RankTracePath(prefix, static_cast<int>(r)), nodes);
    if (!s.ok()) return s;
  }
  RemoveRankFilesFrom(prefix, l.ranks);
  std::vector<int64_t> spanning;
  Status s = WriteGroupsJson(prefix + ".comm_groups.json", CopyGroupsOf(config, &spanning));
  if (!s.ok()) return s;
  TraceManifest m;
  m.npus = static_cast<int>(l.copies * l.ranks);
  m.copies = static_cast<int>(l.copies);
  m.interleave = static_cast<int>(l.interleave);
  m.data_parallel_groups = "world";
  for (int64_t id : spanning) m.data_parallel_groups += "," + std::to_string(id);
  std::ostringstream comment;
  comment << "Written by orrery generate-llm: " << m.npus << " NPUs as " << m.copies
          << " data-parallel copies of the " << l.ranks << " rank files " << prefix << ".0.et .. "
          << prefix << "." << l.ranks - 1 << ".et\n"
          << "(copy-local ranks; copy c's rank r runs on NPU (r / " << m.interleave << ")·"
          << m.interleave << "·" << m.copies << " + c·" << m.interleave << " + r mod "
          << m.interleave << ", Megatron-LM's layout).\n"
          << "Run it with --workload-configuration=" << prefix
          << "; generate-llm --all-ranks writes one file per NPU instead (for ASTRA-sim).";
  s = WriteTraceManifest(ManifestPath(prefix), m, comment.str());
  if (!s.ok()) return s;
  if (max_nodes != nullptr) *max_nodes = most;
  if (files != nullptr) *files = l.ranks;
  return Status::Ok();
}

}  // namespace et
}  // namespace orrery
