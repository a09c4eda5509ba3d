#include "compute/roofline.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(Roofline, ComputeBoundUsesPeak) {
  // 100 TFLOPS peak, 1000 GB/s. 1e12 ops over 1e9 bytes: intensity 1000 FLOP/B,
  // memory roof 1e12*1000 = 1e15 > peak 1e14 -> compute bound: 1e12 / 1e14 s = 10 ms.
  RooflineParams p{100e12, 1000e9};
  EXPECT_FALSE(MemoryBound(p, 1000000000000ull, 1000000000ull));
  EXPECT_EQ(RooflineTime(p, 1000000000000ull, 1000000000ull), Time::FromNs(10000000));
}

TEST(Roofline, MemoryBoundUsesBandwidthTimesIntensity) {
  // Intensity 2 FLOP/B -> perf = 1e12 * 2 = 2e12 FLOP/s; 4e9 ops -> 2 ms.
  RooflineParams p{100e12, 1000e9};
  EXPECT_TRUE(MemoryBound(p, 4000000000ull, 2000000000ull));
  EXPECT_EQ(RooflineTime(p, 4000000000ull, 2000000000ull), Time::FromNs(2000000));
}

TEST(Roofline, TruncatesToWholeNanoseconds) {
  // 7 ops / 1 byte at 1e9 B/s and 1e18 peak: perf 7e9 -> 1 ns exactly; 10 ops / 3 bytes:
  // perf = 1e9*10/3 -> 10 / 3.333e9 s = 3 ns.
  RooflineParams p{1e18, 1e9};
  EXPECT_EQ(RooflineTime(p, 7, 1), Time::FromNs(1));
  EXPECT_EQ(RooflineTime(p, 10, 3), Time::FromNs(3));
}

TEST(Roofline, AKernelOverheadIsAddedBeforeTruncating) {
  // 10 ops / 3 bytes as above: 3 ns, + 1.5 ns of overhead = 4.5 -> 4 ns (truncating each part
  // alone would give 3 + 1); a skipped node (tensor_size 0) costs nothing still.
  RooflineParams p{1e18, 1e9, 1.5};
  EXPECT_EQ(RooflineTime(p, 10, 3), Time::FromNs(4));
  EXPECT_EQ(RooflineTime(p, 12345, 0), Time::Zero());
}

TEST(Roofline, ZeroTensorSizeCostsNothing) {
  RooflineParams p{100e12, 1000e9};
  EXPECT_EQ(RooflineTime(p, 12345, 0), Time::Zero());
}

TEST(Replay, MicrosecondsToNanosecondsAndZeroIsOneNs) {
  EXPECT_EQ(ReplayTime(125), Time::FromNs(125000));
  EXPECT_EQ(ReplayTime(0), Time::FromNs(1));
}

}  // namespace
}  // namespace orrery
