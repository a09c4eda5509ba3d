#include "common/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace orrery {
namespace {

struct Recorder : EventTarget {
  Simulation* sim = nullptr;
  std::vector<std::pair<int64_t, uint64_t>> seen;
  void OnEvent(uint64_t arg) override { seen.emplace_back(sim->now().ps(), arg); }
};

TEST(EventQueueTest, OrdersByTimeThenInsertion) {
  Simulation sim;
  Recorder r;
  r.sim = &sim;
  sim.Schedule(Time::FromNs(5), &r, 1);
  sim.Schedule(Time::FromNs(1), &r, 2);
  sim.Schedule(Time::FromNs(5), &r, 3);
  sim.Schedule(Time::FromNs(1), &r, 4);
  sim.Run();
  const std::vector<std::pair<int64_t, uint64_t>> want = {
      {1000, 2}, {1000, 4}, {5000, 1}, {5000, 3}};
  EXPECT_EQ(r.seen, want);
  EXPECT_EQ(sim.events_processed(), 4u);
}

TEST(EventQueueTest, ManyRandomEventsComeOutSorted) {
  Simulation sim;
  Recorder r;
  r.sim = &sim;
  std::mt19937_64 rng(42);
  for (uint64_t i = 0; i < 10000; ++i) sim.Schedule(Time::FromPs(rng() % 1000), &r, i);
  sim.Run();
  ASSERT_EQ(r.seen.size(), 10000u);
  for (size_t i = 1; i < r.seen.size(); ++i) {
    ASSERT_LE(r.seen[i - 1].first, r.seen[i].first);
    if (r.seen[i - 1].first == r.seen[i].first) {
      ASSERT_LT(r.seen[i - 1].second, r.seen[i].second);  // insertion order among ties
    }
  }
}

// Handlers that schedule more events, at random delays including zero and repeated times, checked
// against a reference that sorts by (time, order of scheduling).
struct Spawner : EventTarget {
  Simulation* sim = nullptr;
  std::mt19937_64 rng{7};
  uint64_t next_id = 0;
  std::vector<std::pair<int64_t, uint64_t>> scheduled;  // (time, id) in scheduling order
  std::vector<std::pair<int64_t, uint64_t>> seen;
  int budget = 200000;
  void Spawn(int64_t at_ps) {
    scheduled.emplace_back(at_ps, next_id);
    sim->Schedule(Time::FromPs(at_ps), this, next_id++);
  }
  void OnEvent(uint64_t arg) override {
    seen.emplace_back(sim->now().ps(), arg);
    const int children = budget > 0 ? static_cast<int>(rng() % 3) : 0;
    for (int i = 0; i < children; ++i, --budget) {
      // Few distinct delays (synchronised traffic) mixed with many distinct ones.
      const uint64_t r = rng() % 10;
      const int64_t delay = r < 3   ? 0
                            : r < 7 ? static_cast<int64_t>(r) * 1000
                                    : static_cast<int64_t>(rng() % 1000000);
      Spawn(sim->now().ps() + delay);
    }
  }
};

TEST(EventQueueTest, InterleavedSchedulingMatchesAStableSortByTime) {
  Simulation sim;
  Spawner s;
  s.sim = &sim;
  for (int i = 0; i < 500; ++i) s.Spawn(static_cast<int64_t>(s.rng() % 5000));
  sim.Run();
  ASSERT_GT(s.seen.size(), 100000u);
  ASSERT_EQ(s.seen.size(), s.scheduled.size());
  // Every event runs after the one that scheduled it, so a global stable sort of the schedule
  // by time is the order a correct queue must produce.
  std::vector<std::pair<int64_t, uint64_t>> want = s.scheduled;
  std::stable_sort(want.begin(), want.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  EXPECT_EQ(s.seen, want);
  EXPECT_EQ(sim.pending_events(), 0u);
}

struct Chain : EventTarget {
  Simulation* sim = nullptr;
  int remaining = 0;
  void OnEvent(uint64_t) override {
    if (--remaining > 0) sim->ScheduleAfter(Time::FromNs(3), this);
  }
};

// An event that would land past the end of simulated time is not queued: the run stops there
// and says so, and a later Run() does not resume it.
TEST(EventQueueTest, SchedulingPastTheEndOfTimeStopsTheRun) {
  Simulation sim;
  Recorder r;
  r.sim = &sim;
  sim.Schedule(Time::FromNs(1), &r, 1);
  sim.Schedule(Time::FromNs(3), &r, 3);
  sim.Run(Time::FromNs(2));
  EXPECT_FALSE(sim.time_overflowed());
  sim.ScheduleAfter(Time::Infinite(), &r, 2);
  EXPECT_TRUE(sim.time_overflowed());
  sim.Run();
  sim.Run();
  const std::vector<std::pair<int64_t, uint64_t>> want = {{1000, 1}};
  EXPECT_EQ(r.seen, want);
  EXPECT_EQ(sim.pending_events(), 1u);  // the event at 3 ns never ran
}

TEST(EventQueueTest, HandlersScheduleMoreAndRunStopsAtLimit) {
  Simulation sim;
  Chain c;
  c.sim = &sim;
  c.remaining = 10;
  sim.ScheduleAfter(Time::FromNs(3), &c);
  sim.Run(Time::FromNs(15));
  EXPECT_EQ(sim.now().WholeNs(), 15);
  EXPECT_EQ(c.remaining, 5);
  sim.Run();
  EXPECT_EQ(sim.now().WholeNs(), 30);
  EXPECT_EQ(c.remaining, 0);
}

}  // namespace
}  // namespace orrery
