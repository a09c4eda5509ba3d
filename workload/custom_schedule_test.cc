// LoadCustomAlgorithm: per-rank ETs as the system layer's plain schedules.
#include "workload/custom_schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "et_feeder/writer.h"

namespace orrery {
namespace {

using Kind = CustomRankSchedule::Kind;

// A 2-rank exchange: each rank computes 3 us, then sends 4 KiB to the other (tag 7) and receives
// 4 KiB from it; the receive waits for the compute too.
std::string WriteExchange() {
  const std::string prefix = ::testing::TempDir() + "/exchange";
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[r] = {et::MakeCompNode(10, "prep", 3), et::MakeSendNode(11, 1 - r, 4096, 7, {10}),
                et::MakeRecvNode(12, 1 - r, 4096, 7, {10}),
                et::MakeCompNode(13, "zero", 0, {11, 12})};
  }
  EXPECT_TRUE(et::WriteRankFiles(prefix, ranks).ok());
  return prefix;
}

TEST(CustomSchedule, EachRanksNodesBecomeItsSteps) {
  const std::string prefix = WriteExchange();
  StatusOr<std::shared_ptr<const CustomAlgorithm>> a = LoadCustomAlgorithm(prefix);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ((*a)->ranks(), 2);
  EXPECT_EQ((*a)->prefix(), prefix);
  const CustomRankSchedule& s = (*a)->rank(1);
  EXPECT_EQ(s.source, prefix + ".1.et");
  ASSERT_EQ(s.steps.size(), 4u);
  EXPECT_EQ(s.steps[0].kind, Kind::kCompute);
  EXPECT_EQ(s.steps[0].duration, Time::FromNs(3000));
  EXPECT_EQ(s.steps[0].id, 10u);
  EXPECT_EQ(s.steps[1].kind, Kind::kSend);
  EXPECT_EQ(s.steps[1].peer, 0);
  EXPECT_EQ(s.steps[1].bytes, 4096u);
  EXPECT_EQ(s.steps[1].tag, 7);
  EXPECT_EQ(s.steps[2].kind, Kind::kRecv);
  EXPECT_EQ(s.steps[2].peer, 0);
  EXPECT_EQ(s.steps[3].duration, Time::FromNs(1));  // 0 us runs 1 ns, as ASTRA-sim
  EXPECT_EQ(s.parents[3], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(s.children[0], (std::vector<uint32_t>{1, 2}));
  EXPECT_TRUE(s.parents[0].empty());
}

TEST(CustomSchedule, APeerOutsideTheAlgorithmIsNamed) {
  const std::string prefix = ::testing::TempDir() + "/self_send";
  std::vector<std::vector<ChakraProtoMsg::Node>> ranks = {{et::MakeSendNode(1, 0, 64, 0)},
                                                          {et::MakeRecvNode(1, 0, 64, 0)}};
  ASSERT_TRUE(et::WriteRankFiles(prefix, ranks).ok());
  StatusOr<std::shared_ptr<const CustomAlgorithm>> a = LoadCustomAlgorithm(prefix);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find(prefix + ".0.et: node 1"), std::string::npos)
      << a.status().message();
  EXPECT_NE(a.status().message().find("'comm_dst' is 0; valid: another rank"), std::string::npos)
      << a.status().message();
}

}  // namespace
}  // namespace orrery
