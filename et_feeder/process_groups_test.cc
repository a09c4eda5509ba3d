// ParseProcessGroups: PyTorch's process_group:init inputs in both forms (a Python list of dicts;
// Chakra's converter's list of one JSON string), and what it refuses.
#include "et_feeder/process_groups.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orrery {
namespace et {
namespace {

std::vector<ProcessGroupSpec> Parsed(const std::string& values, int ranks) {
  StatusOr<std::vector<ProcessGroupSpec>> g = ParseProcessGroups(values, ranks);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? *g : std::vector<ProcessGroupSpec>{};
}

TEST(ProcessGroups, PythonListOfDicts) {
  const auto g = Parsed(
      "[{'pg_name': '0', 'pg_desc': 'default_pg', 'backend_config': 'cuda:nccl', 'pg_size': 4, "
      "'ranks': []}, {'pg_name': '3', 'pg_desc': 'undefined', 'pg_size': 2, 'ranks': [1, 3]}]",
      4);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].pg, 0);
  EXPECT_EQ(g[0].ranks, (std::vector<int>{0, 1, 2, 3}));  // empty: every rank
  EXPECT_EQ(g[1].pg, 3);
  EXPECT_EQ(g[1].ranks, (std::vector<int>{1, 3}));
}

TEST(ProcessGroups, ChakraConvertersJsonString) {
  const auto g = Parsed(
      "['[{\"pg_name\": \"7\", \"ranks\": [0, 2], \"pg_desc\": \"x\"}, {\"ranks\": (1, 3), "
      "\"pg_name\": \"8\"}]']",
      4);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].pg, 7);
  EXPECT_EQ(g[0].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(g[1].pg, 8);  // keys in any order, a tuple of ranks
  EXPECT_EQ(g[1].ranks, (std::vector<int>{1, 3}));
}

TEST(ProcessGroups, HashedNamesAndOtherMetadataArePassedOver) {
  EXPECT_TRUE(Parsed("[{'pg_name': '7a3f', 'ranks': [0]}]", 2).empty());
  EXPECT_TRUE(Parsed("[{'other': 1}, 'text', (1, 2)]", 2).empty());
  // A group described inside another's dict is part of that one.
  const auto g = Parsed("[{'pg_name': '2', 'ranks': [0, 1], 'sub': {'pg_name': '5'}}]", 2);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].pg, 2);
}

TEST(ProcessGroups, BadRanksAndBrokenTextAreRefused) {
  StatusOr<std::vector<ProcessGroupSpec>> r =
      ParseProcessGroups("[{'pg_name': '1', 'ranks': [0, 9]}]", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("9"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("[0, 3]"), std::string::npos) << r.status().message();

  r = ParseProcessGroups("[{'pg_name': '1', 'ranks': 5}]", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'ranks' 5"), std::string::npos) << r.status().message();

  r = ParseProcessGroups("[{'pg_name': '1', 'ranks': [0]", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not closed"), std::string::npos) << r.status().message();

  r = ParseProcessGroups("[{'pg_name': '99999999999', 'ranks': [0]}]", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a communicator group number"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace et
}  // namespace orrery
