#include "common/units.h"

#include <gtest/gtest.h>

#include <cmath>

namespace orrery {
namespace {

TEST(UnitsTest, SerializationDelayUsesBinaryGigabytes) {
  // 32768 B over 50 GiB/s = 32768 / (50 * 2^30 / 1e9) ns = 610.3515625 ns.
  const Time t = Bytes(32768) / Bandwidth::FromGiBps(50);
  EXPECT_EQ(t.ps(), 610352);  // rounded to the nearest ps
  EXPECT_EQ(t.WholeNs(), 610);
}

TEST(UnitsTest, DecimalGigabytesForMemory) {
  // 32768 B at 1600 GB/s (decimal) = 20.48 ns.
  EXPECT_EQ((Bytes(32768) / Bandwidth::FromGBps(1600)).ps(), 20480);
}

TEST(UnitsTest, TimeArithmeticAndOrdering) {
  const Time a = Time::FromNs(500);
  const Time b = Time::FromPs(1500);
  EXPECT_EQ((a + b).ps(), 501500);
  EXPECT_LT(b, a);
  EXPECT_EQ((a - b).ps(), 498500);
  EXPECT_EQ(Time::FromPs(1999).TruncatedToNs().ps(), 1000);
  EXPECT_EQ(Time::FromNsDouble(936.25).ps(), 936250);
}

// Simulated time is int64 picoseconds; arithmetic past either end saturates instead of wrapping.
TEST(UnitsTest, TimeSaturatesInsteadOfWrapping) {
  const Time big = Time::FromNs(int64_t{9'000'000'000'000'000});  // 9e18 ps, about 104 days
  EXPECT_FALSE(big.IsInfinite());
  EXPECT_TRUE((big + big).IsInfinite());
  EXPECT_TRUE((big * 2).IsInfinite());
  EXPECT_TRUE(Time::FromNs(int64_t{1} << 60).IsInfinite());
  EXPECT_LT((Time::Zero() - big) - big, Time::Zero());  // saturates low, stays negative
  EXPECT_TRUE((Time::Infinite() + Time::FromNs(1)).IsInfinite());
  EXPECT_TRUE(Time::FromNsDouble(1e300).IsInfinite());
  EXPECT_TRUE(Time::FromNsDouble(std::nan("")).IsInfinite());
  EXPECT_TRUE(Time::FromNsTruncated(1e16).IsInfinite());
  EXPECT_EQ(Time::FromNsTruncated(2.9).ps(), 2000);
  EXPECT_EQ(Time::FromNsDouble(1.5).ps(), 1500);
  // A tiny bandwidth is a very long delay, never a negative or zero one.
  EXPECT_TRUE((Bytes(1 << 20) / Bandwidth::FromGiBps(1e-300)).IsInfinite());
  EXPECT_TRUE((Bytes(1 << 20) / Bandwidth::FromGiBps(1e-12)).IsInfinite());
}

TEST(UnitsTest, HumanReadable) {
  EXPECT_EQ(Time::FromNs(890).ToHuman(), "890 ns");
  EXPECT_EQ(Time::FromNs(56700).ToHuman(), "56.700 us");
  EXPECT_EQ(Time::FromNs(1234000).ToHuman(), "1.234 ms");
  // Whole ns first, as a sys[i] line prints 720772 for it (it had read 720.773 us).
  EXPECT_EQ(Time::FromPs(720'772'600).ToHuman(), "720.772 us");
  EXPECT_EQ(Time::FromPs(890'600).ToHuman(), "890 ns");
}

}  // namespace
}  // namespace orrery
