// One data-parallel copy's files (llm_copies.h) against the full step: every NPU of every copy
// runs copy 0's program of its rank, with its peers and its groups renumbered, for every kind of
// step generate-llm writes.
#include "et_feeder/llm_copies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "et_feeder/llm_workload.h"

namespace orrery {
namespace et {
namespace {

using ChakraProtoMsg::Node;

LlmConfig Config(const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"--layers",     "8",   "--hidden", "512", "--heads", "8",
                                   "--seq-length", "256", "--vocab",  "1000"};
  args.insert(args.end(), flags.begin(), flags.end());
  StatusOr<LlmConfig> c = LlmConfigFromFlags(args);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : LlmConfig();
}

// Renumbers `n` (a node of NPU `npu`, in the full step's NPUs) into copy-local terms: its peer
// through `local`, its group through `group_of` (full id -> copy 0's id of the same role).
Node Renumbered(Node n, const std::map<int64_t, int64_t>& local,
                const std::map<std::string, std::string>& group_of) {
  for (ChakraProtoMsg::AttributeProto& a : *n.mutable_attr()) {
    if (a.name() == "comm_dst" || a.name() == "comm_src") {
      const int64_t peer = a.has_int32_val() ? a.int32_val() : a.int64_val();
      EXPECT_EQ(local.count(peer), 1u) << "peer " << peer << " outside the NPU's copy";
      if (a.has_int32_val()) {
        a.set_int32_val(static_cast<int32_t>(local.at(peer)));
      } else {
        a.set_int64_val(local.at(peer));
      }
    } else if (a.name() == "pg_name") {
      EXPECT_EQ(group_of.count(a.string_val()), 1u) << "group " << a.string_val();
      a.set_string_val(group_of.at(a.string_val()));
    }
  }
  return n;
}

void ExpectCopiesAreCopy0(const LlmConfig& c, const std::string& what) {
  const LlmCopyLayout l = CopyLayoutOf(c);
  ASSERT_EQ(l.copies * l.ranks, ShapeOf(c).npus) << what;
  // Every NPU is one copy's rank, once.
  std::set<int64_t> npus;
  for (int64_t k = 0; k < l.copies; ++k) {
    for (int64_t r = 0; r < l.ranks; ++r) npus.insert(l.Npu(k, r));
  }
  ASSERT_EQ(static_cast<int64_t>(npus.size()), ShapeOf(c).npus) << what;
  ASSERT_EQ(*npus.rbegin(), ShapeOf(c).npus - 1) << what;
  // Copy k's groups in copy 0's terms: a group inside copy k is the copy-0 group whose members
  // are its members moved to copy 0; a group spanning the copies stays itself.
  const std::vector<LlmGroup> groups = LlmGroups(c);
  std::vector<int64_t> spanning;
  CopyGroupsOf(c, &spanning);
  for (int64_t k = 0; k < l.copies; ++k) {
    std::map<int64_t, int64_t> local;  // copy k's NPU -> copy-local rank
    for (int64_t r = 0; r < l.ranks; ++r) local[l.Npu(k, r)] = r;
    std::map<std::vector<int64_t>, int64_t> copy0_group;  // copy-local members -> copy 0's id
    for (const LlmGroup& g : groups) {
      std::vector<int64_t> m;
      for (int64_t npu : g.ranks) {
        for (int64_t r = 0; r < l.ranks; ++r) {
          if (l.Npu(0, r) == npu) m.push_back(r);
        }
      }
      if (m.size() == g.ranks.size()) copy0_group[m] = g.id;
    }
    std::map<std::string, std::string> group_of;
    for (const LlmGroup& g : groups) {
      if (std::find(spanning.begin(), spanning.end(), g.id) != spanning.end()) {
        group_of[std::to_string(g.id)] = std::to_string(g.id);
        continue;
      }
      std::vector<int64_t> m;
      for (int64_t npu : g.ranks) {
        if (local.count(npu)) m.push_back(local.at(npu));
      }
      if (m.size() != g.ranks.size()) continue;  // another copy's
      ASSERT_EQ(copy0_group.count(m), 1u) << what << ": copy " << k << "'s group " << g.id;
      group_of[std::to_string(g.id)] = std::to_string(copy0_group.at(m));
    }
    for (int64_t r = 0; r < l.ranks; ++r) {
      const std::vector<Node> full = BuildLlmRank(c, l.Npu(k, r));
      const std::vector<Node> copy = BuildLlmCopyRank(c, r);
      ASSERT_EQ(full.size(), copy.size()) << what << ": copy " << k << " rank " << r;
      for (size_t i = 0; i < full.size(); ++i) {
        if (full[i].type() == ChakraProtoMsg::METADATA_NODE) continue;
        ASSERT_EQ(Renumbered(full[i], local, group_of).DebugString(), copy[i].DebugString())
            << what << ": copy " << k << " rank " << r << " node " << i;
      }
    }
  }
}

TEST(LlmCopies, EveryCopyRunsCopyZerosProgram) {
  const std::vector<std::vector<std::string>> configs = {
      {"--dp", "4", "--tp", "2", "--pp", "2"},
      {"--dp", "3", "--tp", "2", "--pp", "2", "--micro-batches", "4"},
      {"--dp", "4", "--tp", "2", "--pp", "2", "--sequence-parallel", "--distributed-optimizer"},
      {"--dp", "2", "--tp", "2", "--pp", "2", "--virtual-stages", "2", "--micro-batches", "4"},
      {"--dp", "4", "--pp", "4", "--grad-sync", "layer", "--comm-streams", "2", "--schedule",
       "gpipe", "--recompute", "full"},
      {"--dp", "4", "--tp", "2", "--cp", "2", "--pp", "2", "--sequence-parallel"},
      {"--dp", "4", "--tp", "2", "--sequence-parallel", "--experts", "4", "--ep", "2",
       "--moe-top-k", "2"},
      {"--dp", "2", "--tp", "2", "--pp", "4", "--first-stage-layers", "1", "--last-stage-layers",
       "1"},
  };
  for (const auto& flags : configs) {
    std::string what;
    for (const std::string& f : flags) what += f + " ";
    ExpectCopiesAreCopy0(Config(flags), what);
  }
}

TEST(LlmCopies, CopyZerosGroupsAreItsOwnOrSpanEveryCopy) {
  const LlmConfig c = Config({"--dp", "4", "--tp", "2", "--pp", "2"});
  std::vector<int64_t> spanning;
  const std::vector<LlmGroup> groups = CopyGroupsOf(c, &spanning);
  // Tensor-parallel groups 1 (stage 0, replica 0) and 5 (stage 1, replica 0); data-parallel
  // groups 9-12 (one per stage and tp rank), each the copy's one member.
  std::map<int64_t, std::vector<int64_t>> of;
  for (const LlmGroup& g : groups) of[g.id] = g.ranks;
  EXPECT_EQ(of.at(1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(of.at(5), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(of.at(9), (std::vector<int64_t>{0}));
  EXPECT_EQ(of.at(12), (std::vector<int64_t>{3}));
  EXPECT_EQ(spanning, (std::vector<int64_t>{9, 10, 11, 12}));
  EXPECT_EQ(of.count(2), 0u);  // replica 1's tensor-parallel group is copy 1's
  const LlmCopyLayout l = CopyLayoutOf(c);
  EXPECT_EQ(l.copies, 4);
  EXPECT_EQ(l.ranks, 4);
  EXPECT_EQ(l.interleave, 2);
  // Megatron-LM's layout: NPU = stage·dp·tp + replica·tp + t.
  EXPECT_EQ(l.Npu(3, 3), 1 * 8 + 3 * 2 + 1);
}

}  // namespace
}  // namespace et
}  // namespace orrery
