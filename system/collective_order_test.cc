// Members of a group must issue the same collectives in the same order.
#include "system/collective_order.h"

#include <gtest/gtest.h>

#include <string>

namespace orrery {
namespace {

const CollectiveSignature kAr{CollectiveType::kAllReduce, 1024, -1, {}};

TEST(CollectiveOrderTest, SameSequencesPass) {
  CollectiveOrder order;
  for (int k = 0; k < 3; ++k) {
    for (int npu = 0; npu < 4; ++npu) {
      EXPECT_TRUE(order.Record(npu, 0, 4, kAr, "node " + std::to_string(k)).ok());
    }
  }
  // Members may run ahead of one another.
  EXPECT_TRUE(order.Record(2, 5, 2, kAr, "a").ok());
  EXPECT_TRUE(order.Record(2, 5, 2, {CollectiveType::kBarrier, 0, -1, {}}, "b").ok());
  EXPECT_TRUE(order.Record(3, 5, 2, kAr, "a").ok());
  EXPECT_TRUE(order.Record(3, 5, 2, {CollectiveType::kBarrier, 77, -1, {}}, "b").ok());  // no size
}

// A world collective limited to some dimensions by involved_dim on one NPU but not on another
// would run different phases on each: a mismatch, named with both dimension sets.
TEST(CollectiveOrderTest, DifferentInvolvedDimensionsAreAMismatch) {
  CollectiveOrder order;
  ASSERT_TRUE(order.Record(0, 0, 2, kAr, "node 4 'ar'").ok());
  const CollectiveSignature only_second{CollectiveType::kAllReduce, 1024, -1, {false, true}};
  Status s = order.Record(1, 0, 2, only_second, "node 4 'ar'");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("collective #1 of NPU 1 is node 4 'ar' (all-reduce of 1024 B, on "
                             "dimension(s) 1 (involved_dim)), but that of NPU 0 is node 4 'ar' "
                             "(all-reduce of 1024 B)"),
            std::string::npos)
      << s.message();
  CollectiveOrder none;
  ASSERT_TRUE(none.Record(0, 0, 2, only_second, "a").ok());
  s = none.Record(1, 0, 2, {CollectiveType::kAllReduce, 1024, -1, {false, false}}, "a");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("on no dimension (involved_dim all false)"), std::string::npos)
      << s.message();
  // The same dimensions on both: fine.
  CollectiveOrder same;
  EXPECT_TRUE(same.Record(0, 0, 2, only_second, "a").ok());
  EXPECT_TRUE(same.Record(1, 0, 2, only_second, "a").ok());
}

TEST(CollectiveOrderTest, DifferentTypeSizeOrRootNamesBothNpusAndNodes) {
  CollectiveOrder order;
  ASSERT_TRUE(order.Record(0, 0, 2, kAr, "node 4 'ar'").ok());
  Status s = order.Record(1, 0, 2, {CollectiveType::kAllGather, 1024, -1, {}}, "node 9 'ag'");
  ASSERT_FALSE(s.ok());
  for (const char* part : {"NPU 1", "node 9 'ag'", "all-gather of 1024 B", "NPU 0", "node 4 'ar'",
                           "all-reduce of 1024 B", "collective #1", "all NPUs"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in: " << s.message();
  }

  CollectiveOrder sizes;
  ASSERT_TRUE(sizes.Record(3, 2, 2, kAr, "x").ok());
  s = sizes.Record(5, 2, 2, {CollectiveType::kAllReduce, 2048, -1, {}}, "y");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("communicator group 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("2048 B"), std::string::npos) << s.message();

  CollectiveOrder roots;
  ASSERT_TRUE(roots.Record(0, 0, 2, {CollectiveType::kBroadcast, 8, 0, {}}, "x").ok());
  s = roots.Record(1, 0, 2, {CollectiveType::kBroadcast, 8, 1, {}}, "y");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("root NPU 1"), std::string::npos) << s.message();
}

TEST(CollectiveOrderTest, SecondPositionIsComparedWithTheSecond) {
  CollectiveOrder order;
  ASSERT_TRUE(order.Record(0, 0, 3, kAr, "a0").ok());
  ASSERT_TRUE(order.Record(0, 0, 3, {CollectiveType::kReduce, 1024, 0, {}}, "b0").ok());
  ASSERT_TRUE(order.Record(1, 0, 3, kAr, "a1").ok());
  ASSERT_TRUE(order.Record(2, 0, 3, kAr, "a2").ok());
  const Status s = order.Record(2, 0, 3, {CollectiveType::kReduce, 1024, 2, {}}, "b2");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("collective #2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("b0"), std::string::npos) << s.message();
  EXPECT_TRUE(order.Record(1, 0, 3, {CollectiveType::kReduce, 1024, 0, {}}, "b1").ok());
}

}  // namespace
}  // namespace orrery
