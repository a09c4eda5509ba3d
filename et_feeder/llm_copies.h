// A generated training step as one data-parallel copy and a manifest (et_feeder/manifest.h):
// every replica of a stage runs the same program, so generate-llm writes each distinct program
// once. The files hold copy 0's ranks renumbered from 0 (copy-local ranks: its peers and its
// groups' members), the manifest says how K copies of them lay out on the NPUs as Megatron-LM
// lays out replicas, and which groups span every copy (the data-parallel ones). Running the
// files with the manifest is the run of the full set of files, NPU for NPU.
//
//   LlmCopyLayout l = CopyLayoutOf(config);        // copies, ranks per copy, interleave
//   std::vector<ChakraProtoMsg::Node> r3 = BuildLlmCopyRank(config, 3);
//   Status s = WriteLlmCopies(config, "/tmp/gpt/gpt", &written);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "et_feeder/llm_workload.h"
#include "et_feeder/proto/et_def.pb.h"

namespace orrery {
namespace et {

// How the step's NPUs split into copies. A copy is `unit` consecutive replicas of every stage
// (one replica; ep replicas with experts, since an expert-parallel group spans them; the cp
// ranks of a replica with context parallelism), so that every group is either inside a copy or
// spans every copy alike.
struct LlmCopyLayout {
  int64_t copies = 1;      // dp · cp / unit
  int64_t unit = 1;        // replicas per copy
  int64_t ranks = 0;       // ranks per copy: pp · unit · tp
  int64_t interleave = 1;  // unit · tp: a copy's ranks of one stage sit together
  // The NPU that copy `copy`'s rank `rank` is (Megatron-LM's stage·dp·tp + replica·tp + t).
  int64_t Npu(int64_t copy, int64_t rank) const {
    return (rank / interleave) * interleave * copies + copy * interleave + rank % interleave;
  }
};
LlmCopyLayout CopyLayoutOf(const LlmConfig& config);

// The groups of copy 0 in copy-local ranks, in LlmGroups' order; `spanning` gets the ids of
// those that span every copy (the data-parallel groups).
std::vector<LlmGroup> CopyGroupsOf(const LlmConfig& config, std::vector<int64_t>* spanning);

// Copy 0's rank `rank` (copy-local): BuildLlmRank of its NPU with its peers and its
// process_group:init groups in copy-local ranks.
std::vector<ChakraProtoMsg::Node> BuildLlmCopyRank(const LlmConfig& config, int64_t rank);

// Writes copy 0's files <prefix>.0.et .. <prefix>.<R-1>.et, <prefix>.comm_groups.json (its
// groups, copy-local) and <prefix>.manifest.yaml; with a single copy, the full set of files as
// WriteLlmWorkload and no manifest. Rank files of an earlier set past the new ones, and an
// earlier manifest the new set does not have, are removed so that the prefix reads as written.
// `max_nodes`: the most nodes of a file; `files`: how many rank files were written.
Status WriteLlmCopies(const LlmConfig& config, const std::string& prefix, size_t* max_nodes,
                      int64_t* files);

// The full set, one file per NPU (ASTRA-sim's), and no manifest (an earlier one is removed).
Status WriteLlmAllRanks(const LlmConfig& config, const std::string& prefix, size_t* max_nodes);

}  // namespace et
}  // namespace orrery
