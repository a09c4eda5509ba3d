#include "common/event_queue.h"

#include <gtest/gtest.h>

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

struct Chain : EventTarget {
  Simulation* sim = nullptr;
  int remaining = 0;
  void OnEvent(uint64_t) override {
    if (--remaining > 0) sim->ScheduleAfter(Time::FromNs(3), this);
  }
};

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
