#include "common/slot_pool.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(SlotPool, ReusesReleasedSlotsLastInFirstOut) {
  SlotPool<int> pool;
  const uint32_t a = pool.Acquire();
  const uint32_t b = pool.Acquire();
  const uint32_t c = pool.Acquire();
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(c, 2u);
  EXPECT_EQ(pool.in_use(), 3u);
  pool[b] = 7;
  pool.Release(a);
  pool.Release(b);
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(pool.Acquire(), b);  // the last released first
  EXPECT_EQ(pool[b], 7);         // a reused slot keeps its contents until overwritten
  EXPECT_EQ(pool.Acquire(), a);
  EXPECT_EQ(pool.Acquire(), 3u);  // none free: a new slot
  EXPECT_EQ(pool.in_use(), 4u);
}

}  // namespace
}  // namespace orrery
