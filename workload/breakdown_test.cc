// The breakdown kept as a run goes (BreakdownAccumulator) equals the one computed from the list
// of intervals afterwards (BreakdownOf), to the picosecond.
#include "workload/breakdown.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

namespace orrery {
namespace {

void ExpectSame(const NpuBreakdown& a, const NpuBreakdown& b) {
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.compute, b.compute);
  EXPECT_EQ(a.cpu, b.cpu);
  EXPECT_EQ(a.communication, b.communication);
  EXPECT_EQ(a.overlapped, b.overlapped);
  EXPECT_EQ(a.exposed, b.exposed);
  EXPECT_EQ(a.memory, b.memory);
  EXPECT_EQ(a.idle, b.idle);
}

// Feeds `activity` to an accumulator as a simulation would: every begin and end in time order.
NpuBreakdown Accumulated(const std::vector<Activity>& activity, Time finish) {
  std::vector<std::tuple<int64_t, bool, Track>> events;  // (time, is begin, track)
  for (const Activity& a : activity) {
    events.emplace_back(a.start.ps(), true, a.track);
    events.emplace_back(a.end.ps(), false, a.track);
  }
  std::stable_sort(events.begin(), events.end(), [](const auto& x, const auto& y) {
    return std::get<0>(x) < std::get<0>(y);  // at one time, as listed
  });
  BreakdownAccumulator acc;
  for (const auto& [t, begin, track] : events) {
    if (begin) {
      acc.Begin(track, Time::FromPs(t));
    } else {
      acc.End(track, Time::FromPs(t));
    }
  }
  return acc.Result(finish);
}

TEST(Breakdown, AHandWorkedCase) {
  // GPU [0, 10) and [10, 20); communication [5, 15) and a receive [12, 30); memory [40, 50).
  const std::vector<Activity> a = {
      {0, Track::kGpu, Time::FromNs(0), Time::FromNs(10)},
      {1, Track::kGpu, Time::FromNs(10), Time::FromNs(20)},
      {2, Track::kComm, Time::FromNs(5), Time::FromNs(15)},
      {3, Track::kRecv, Time::FromNs(12), Time::FromNs(30)},
      {4, Track::kMemory, Time::FromNs(40), Time::FromNs(50)},
  };
  const NpuBreakdown b = Accumulated(a, Time::FromNs(60));
  EXPECT_EQ(b.compute, Time::FromNs(20));
  EXPECT_EQ(b.communication, Time::FromNs(25));  // [5, 30)
  EXPECT_EQ(b.overlapped, Time::FromNs(15));     // [5, 20)
  EXPECT_EQ(b.exposed, Time::FromNs(10));
  EXPECT_EQ(b.memory, Time::FromNs(10));
  EXPECT_EQ(b.idle, Time::FromNs(20));  // [30, 40) and [50, 60)
  ExpectSame(b, BreakdownOf(a, Time::FromNs(60)));
}

// The mean of each field, rounded down to the picosecond, even where the sum of the NPUs' times
// would pass the largest time (int64 picoseconds).
TEST(Breakdown, MeanOfEveryFieldWithoutOverflow) {
  EXPECT_EQ(MeanBreakdown({}).total, Time::Zero());
  std::vector<NpuBreakdown> b(3);
  b[0].compute = Time::FromPs(1);
  b[1].compute = Time::FromPs(2);
  b[2].compute = Time::FromPs(2);  // (1 + 2 + 2) / 3 = 1.67 -> 1
  b[0].idle = Time::FromPs(2);
  b[1].idle = Time::FromPs(2);
  b[2].idle = Time::FromPs(2);  // 6 / 3 = 2 exactly
  const int64_t big = INT64_MAX - 1;
  for (NpuBreakdown& x : b) x.total = Time::FromPs(big);  // the sum is 3 * (2^63 - 2)
  b[2].communication = Time::FromPs(big);                 // (2^63 - 2) / 3
  const NpuBreakdown mean = MeanBreakdown(b);
  EXPECT_EQ(mean.compute, Time::FromPs(1));
  EXPECT_EQ(mean.idle, Time::FromPs(2));
  EXPECT_EQ(mean.total, Time::FromPs(big));
  EXPECT_EQ(mean.communication, Time::FromPs(big / 3));
  EXPECT_EQ(mean.cpu, Time::Zero());
}

TEST(Breakdown, TheRunningSumEqualsTheUnionOfIntervals) {
  std::mt19937_64 rng(7);
  const Track tracks[] = {Track::kCpu, Track::kGpu, Track::kComm, Track::kRecv, Track::kMemory};
  for (int round = 0; round < 200; ++round) {
    std::vector<Activity> a;
    const int n = 1 + static_cast<int>(rng() % 60);
    int64_t finish = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t start = static_cast<int64_t>(rng() % 1000);
      const int64_t length = static_cast<int64_t>(rng() % 4 == 0 ? 0 : rng() % 200);
      a.push_back({static_cast<uint32_t>(i), tracks[rng() % 5], Time::FromPs(start),
                   Time::FromPs(start + length)});
      finish = std::max(finish, start + length);
    }
    ExpectSame(Accumulated(a, Time::FromPs(finish)), BreakdownOf(a, Time::FromPs(finish)));
  }
}

}  // namespace
}  // namespace orrery
