#include "runner/npu_scale.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(NpuScaleTest, EmptyMeansNominal) {
  StatusOr<std::vector<double>> f = ParseNpuScales("", 4);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (std::vector<double>{1, 1, 1, 1}));
}

TEST(NpuScaleTest, SinglesAndRangesLaterOverridesEarlier) {
  StatusOr<std::vector<double>> f = ParseNpuScales("1-3:0.5,2:2.5", 5);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(*f, (std::vector<double>{1, 0.5, 2.5, 0.5, 1}));
}

TEST(NpuScaleTest, EveryBadItemIsReported) {
  StatusOr<std::vector<double>> f = ParseNpuScales("4:2,1:0,x:1,2,3-1:1,0:abc", 4);
  ASSERT_FALSE(f.ok());
  const std::vector<std::string>& p = f.status().problems();
  ASSERT_EQ(p.size(), 6u) << f.status().message();
  EXPECT_NE(p[0].find("'4' in '4:2' is not NPU ids in [0, 3]"), std::string::npos) << p[0];
  EXPECT_NE(p[1].find("factor '0' in '1:0' is not a number > 0"), std::string::npos) << p[1];
  EXPECT_NE(p[2].find("'x'"), std::string::npos) << p[2];
  EXPECT_NE(p[3].find("item '2' has no ':'"), std::string::npos) << p[3];
  EXPECT_NE(p[4].find("'3-1'"), std::string::npos) << p[4];
  EXPECT_NE(p[5].find("factor 'abc'"), std::string::npos) << p[5];
}

TEST(NpuRangeTest, OneIdOrAnInclusiveRange) {
  int first = -1, last = -1;
  ASSERT_TRUE(ParseNpuRange("3", &first, &last));
  EXPECT_EQ(first, 3);
  EXPECT_EQ(last, 3);
  ASSERT_TRUE(ParseNpuRange(" 8 - 15 ", &first, &last));
  EXPECT_EQ(first, 8);
  EXPECT_EQ(last, 15);
  for (const char* bad : {"", "-", "-1", "1-", "3-1", "a", "1.5", "1234567890", "1-2-3"}) {
    EXPECT_FALSE(ParseNpuRange(bad, &first, &last)) << bad;
  }
}

TEST(NpuRangesTest, IdsAndRangesInOrderAndEveryBadItemNamed) {
  StatusOr<std::vector<NpuRange>> l = ParseNpuRanges("4-5, 0 ,1,0", "npus", "ids", 8, "eight");
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 4u);
  EXPECT_EQ((*l)[0].first, 4);
  EXPECT_EQ((*l)[0].last, 5);
  EXPECT_EQ((*l)[3].first, 0);
  EXPECT_EQ((*l)[3].last, 0);
  l = ParseNpuRanges("2,x,,3-1,8,6-9", "npus", "ids and ranges", 8, "eight");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(),
            "npus item is 'x'; expected ids and ranges\n"
            "npus item is empty; expected ids and ranges\n"
            "npus item is '3-1'; expected ids and ranges\n"
            "npus '2,x,,3-1,8,6-9' names NPU 8; expected NPU ids in [0, 7] (eight)\n"
            "npus '2,x,,3-1,8,6-9' names NPU 9 (in '6-9'); expected NPU ids in [0, 7] (eight)");
}

// A range was expanded id by id before its end was checked: 0-999999999 took 4 GB (or threw
// std::bad_alloc) before its error. Now the end is checked first, whatever the range's size.
TEST(NpuRangesTest, AHugeRangeIsRefusedBeforeItIsExpanded) {
  StatusOr<std::vector<NpuRange>> l =
      ParseNpuRanges("0-999999999", "npus", "ids", 16, "the network's NPUs");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(),
            "npus '0-999999999' names NPU 999999999 (in '0-999999999'); expected NPU ids in "
            "[0, 15] (the network's NPUs)");
  StatusOr<std::vector<bool>> s = ParseNpuSet("0-3,0-999999999", 16, "--timeline-npus");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "--timeline-npus '0-3,0-999999999' names NPU 999999999 (in '0-999999999'); "
            "expected NPU ids in [0, 15] (the network's NPUs)");
}

TEST(NpuScaleTest, EmptyItemsAreRefusedAtEitherEnd) {
  for (const char* spec : {"1:2,", ",1:2", "1:2,,0:3", "1:2, "}) {
    StatusOr<std::vector<double>> f = ParseNpuScales(spec, 4);
    ASSERT_FALSE(f.ok()) << spec;
    EXPECT_EQ(f.status().message(),
              std::string("--npu-compute-scale: '") + spec +
                  "' has an empty item (a comma at the start or end, or two in a row); expected "
                  "<npus>:<factor> items separated by commas, e.g. 3:1.5,8-15:0.5");
  }
  StatusOr<std::vector<double>> f = ParseNpuScales(" 1 : 2 , 0-1:3 ", 4);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(*f, (std::vector<double>{3, 3, 1, 1}));
}

// As --compute-scale: a factor past 1e6 would overflow simulated time (int64 picoseconds).
TEST(NpuScaleTest, FactorIsAtMostAMillion) {
  StatusOr<std::vector<double>> f = ParseNpuScales("0:1e6", 2);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(*f, (std::vector<double>{1e6, 1}));
  f = ParseNpuScales("1:1.000001e6", 2);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            "--npu-compute-scale: factor '1.000001e6' in '1:1.000001e6' is not a number > 0 and "
            "<= 1e6 (1 = nominal speed, 2 = twice as slow)");
}

TEST(NpuSetTest, IdsAndRangesWithinTheMachine) {
  StatusOr<std::vector<bool>> s = ParseNpuSet("1,4-5,5", 8, "--timeline-npus");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(*s, (std::vector<bool>{false, true, false, false, true, true, false, false}));
  s = ParseNpuSet("2,x", 8, "--timeline-npus");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "--timeline-npus item is 'x'; expected NPU ids in [0, 7] and ranges first-last, e.g. "
            "0-7,64");
  s = ParseNpuSet("0,6-9", 8, "--timeline-npus");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "--timeline-npus '0,6-9' names NPU 9 (in '6-9'); expected NPU ids in [0, 7] (the "
            "network's NPUs)");
  EXPECT_FALSE(ParseNpuSet("", 8, "--timeline-npus").ok());
}

}  // namespace
}  // namespace orrery
