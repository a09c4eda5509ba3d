#include "config/comm_group_config.h"

#include "config/test_files.h"
#include "gtest/gtest.h"

namespace orrery {
namespace {

TEST(CommGroupConfigTest, LoadsGroups) {
  StatusOr<std::map<int, std::vector<int>>> g = LoadCommGroupConfig(
      WriteTestFile("groups.json", R"({"1": [0, 1, 2, 3], "7": [7, 4, 5, 6]})"), 8);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ(g->at(1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(g->at(7), (std::vector<int>{7, 4, 5, 6}));  // order as written
}

TEST(CommGroupConfigTest, ReportsEveryBadGroupAndMember) {
  const std::string path = WriteTestFile("groups_bad.json", R"({
  "1": [0, 8],
  "2": [3, 3],
  "-1": [0, 1],
  "x": [0, 1],
  "3": [5],
  "4": 5,
  "5": ["2", 1],
  "1": [0, 1]
})");
  StatusOr<std::map<int, std::vector<int>>> g = LoadCommGroupConfig(path, 8);
  ASSERT_FALSE(g.ok());
  const std::vector<std::string>& p = g.status().problems();
  ASSERT_EQ(p.size(), 8u) << g.status().message();
  EXPECT_EQ(p[0], path + ":2: group 1, member 2, is '8'; expected an NPU id in [0, 8)");
  EXPECT_EQ(p[1], path + ":3: group 2 lists NPU 3 more than once; expected each member once");
  EXPECT_EQ(p[2], path +
                      ":4: group id is '-1'; expected an integer from 1 to 999999999 written as "
                      "a JSON key, e.g. \"1\"");
  EXPECT_EQ(p[3], path +
                      ":5: group id is 'x'; expected an integer from 1 to 999999999 written as a "
                      "JSON key, e.g. \"1\"");
  EXPECT_EQ(p[4], path + ":6: group 3 has 1 member; expected at least 2 NPUs");
  EXPECT_EQ(p[5], path + ":7: group 4 is '5'; expected a list of NPU ids, e.g. [0, 1, 2, 3]");
  EXPECT_EQ(p[6], path + ":8: group 5, member 1, is '2'; expected an NPU id in [0, 8)");
  EXPECT_EQ(p[7], path + ":9: group 1 is defined more than once");
}

// With --replicate-trace, a data-parallel group of one rank spans the copies: the groups it
// names may have one member, the others still need two.
TEST(CommGroupConfigTest, OneMemberGroupsWhereAllowed) {
  const std::string path =
      WriteTestFile("groups_one.json", R"({"1": [0, 1], "2": [0], "3": [1], "4": [2]})");
  const std::set<int> dp = {2, 3};
  StatusOr<std::map<int, std::vector<int>>> g = LoadCommGroupConfig(path, 4, &dp);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(g.status().problems().size(), 1u) << g.status().message();
  EXPECT_EQ(g.status().problems()[0],
            path +
                ":1: group 4 has 1 member; expected at least 2 NPUs (or 1, for a "
                "data-parallel group --dp-groups names: it spans the copies of the trace)");
  const std::set<int> all = {2, 3, 4};
  g = LoadCommGroupConfig(path, 4, &all);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)[2], std::vector<int>{0});
  // 999999999 is the largest id; one more digit is refused.
  g = LoadCommGroupConfig(WriteTestFile("groups_big.json", R"({"999999999": [0, 1]})"), 4);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->count(999999999), 1u);
  EXPECT_FALSE(
      LoadCommGroupConfig(WriteTestFile("groups_bigger.json", R"({"1000000000": [0, 1]})"), 4)
          .ok());
}

TEST(CommGroupConfigTest, FileErrors) {
  const std::string missing = ::testing::TempDir() + "/no_groups.json";
  StatusOr<std::map<int, std::vector<int>>> g = LoadCommGroupConfig(missing, 8);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find(missing + ": cannot open the file"), std::string::npos);
  StatusOr<std::map<int, std::vector<int>>> list =
      LoadCommGroupConfig(WriteTestFile("groups_list.json", "[[0, 1]]"), 8);
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find("the top level is a list"), std::string::npos);
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(CommGroupConfigTest, GroupZeroIsReservedForAllNpus) {
  const std::string path = WriteTestFile("groups_zero.json", R"({"0": [0, 1]})");
  StatusOr<std::map<int, std::vector<int>>> g = LoadCommGroupConfig(path, 4);
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(g.status().problems().size(), 1u);
  EXPECT_NE(g.status().problems()[0].find(path + ":1: group id is '0', which is reserved"),
            std::string::npos)
      << g.status().message();
}

}  // namespace
}  // namespace orrery
