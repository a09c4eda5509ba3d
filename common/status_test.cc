#include "common/status.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(StatusTest, InvalidNamesWhereWhatBadAndValid) {
  const Status s = Status::Invalid("net.yml", "key 'bandwidth'[0]", "-5", "a number > 0");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "net.yml: key 'bandwidth'[0] is '-5'; expected a number > 0");
}

TEST(StatusTest, MergeKeepsEveryProblem) {
  Status s;
  EXPECT_TRUE(s.ok());
  s.Merge(Status::Error("a"));
  s.Merge(Status::Error("b"));
  EXPECT_EQ(s.problems().size(), 2u);
  EXPECT_EQ(s.WithContext("f").message(), "f: a\nf: b");
}

TEST(StatusTest, StatusOrHoldsValueOrError) {
  StatusOr<int> v = 7;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 7);
  StatusOr<int> e = Status::Error("bad");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "bad");
}

// Control bytes quoted from broken inputs are shown escaped; line breaks and UTF-8 stay.
TEST(StatusTest, MessagesEscapeControlBytes) {
  Status s = Status::Error("t.topo:3: unknown statement '\x01\x7f\x1b[31m'");
  s.Add("second line, caf\xc3\xa9\tok");
  EXPECT_EQ(s.message(),
            "t.topo:3: unknown statement '\\x01\\x7f\\x1b[31m'\nsecond line, caf\xc3\xa9\tok");
}

TEST(StatusTest, DidYouMeanFindsCloseKey) {
  const std::vector<std::string> keys = {"endpoint-delay", "local-mem-bw", "peak-perf"};
  EXPECT_EQ(DidYouMean("endpiont-delay", keys), "endpoint-delay");
  EXPECT_EQ(DidYouMean("local_mem_bw", keys), "local-mem-bw");
  EXPECT_EQ(DidYouMean("zzzzzzzzzzzzzzzzzz", keys), "");
  // Short words: a suggestion keeps at least half the letters ("gird" -> "grid"), so nothing
  // is offered for "", "0" or "foo".
  const std::vector<std::string> names = {"dimensions", "torus", "mesh", "dgx",
                                          "custom",     "grid",  "pods"};
  EXPECT_EQ(DidYouMean("gird", names), "grid");
  EXPECT_EQ(DidYouMean("Torus", names), "torus");
  EXPECT_EQ(DidYouMean("", names), "");
  EXPECT_EQ(DidYouMean("0", names), "");
  EXPECT_EQ(DidYouMean("foo", names), "");
}

TEST(Trim, DropsWhitespaceAroundOnly) {
  EXPECT_EQ(Trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(Trim(" \t "), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("x"), "x");
}

}  // namespace
TEST(ParseWholeNumber, DigitsOnlyUpToTheLimit) {
  EXPECT_EQ(ParseWholeNumber("0", 10), std::optional<uint64_t>(0));
  EXPECT_EQ(ParseWholeNumber("10", 10), std::optional<uint64_t>(10));
  EXPECT_EQ(ParseWholeNumber("11", 10), std::nullopt);
  EXPECT_EQ(ParseWholeNumber("18446744073709551615", UINT64_MAX),
            std::optional<uint64_t>(UINT64_MAX));
  EXPECT_EQ(ParseWholeNumber("18446744073709551616", UINT64_MAX), std::nullopt);
  EXPECT_EQ(ParseWholeNumber("9223372036854775808", INT64_MAX), std::nullopt);
  for (const char* bad : {"", "-1", "+1", " 1", "1.0", "1e3", "0x10", "one"}) {
    EXPECT_EQ(ParseWholeNumber(bad, 100), std::nullopt) << bad;
  }
}

}  // namespace orrery
