#include "common/slot_pool.h"

#include <gtest/gtest.h>

#include <vector>

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

// Indices leave in the order they came, through the records' `next`, from any indexable pool.
TEST(IndexFifo, FirstInFirstOut) {
  struct Item {
    uint32_t next = 0;
  };
  std::vector<Item> items(4);
  IndexFifo q;
  EXPECT_TRUE(q.empty());
  q.Push(items, 2);
  q.Push(items, 0);
  EXPECT_EQ(q.Pop(items), 2u);
  q.Push(items, 3);
  EXPECT_EQ(q.Pop(items), 0u);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.Pop(items), 3u);
  EXPECT_TRUE(q.empty());
  q.Push(items, 1);  // an emptied queue starts again
  EXPECT_EQ(q.head, 1u);
  EXPECT_EQ(q.tail, 1u);
  EXPECT_EQ(q.Pop(items), 1u);
}

}  // namespace
}  // namespace orrery
