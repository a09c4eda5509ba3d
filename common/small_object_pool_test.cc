#include "common/small_object_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

namespace orrery {
namespace {

struct Small : PoolAllocated {
  explicit Small(int v) : value(v) {}
  virtual ~Small() = default;
  int value;
};

// A derived class of another size: `delete` through the base gives back the derived size.
struct Bigger : Small {
  explicit Bigger(int v) : Small(v) { payload.fill(v); }
  std::array<int64_t, 20> payload{};
};

struct Large : PoolAllocated {
  std::array<char, 4096> bytes{};
};

TEST(SmallObjectPool, AFreedBlockIsTheNextOneOfItsSize) {
  auto* a = new Small(1);
  void* where = a;
  delete a;
  auto* b = new Small(2);
  EXPECT_EQ(static_cast<void*>(b), where);
  EXPECT_EQ(b->value, 2);
  delete b;
  // A block of another size class is not handed out for this one.
  std::unique_ptr<Small> big = std::make_unique<Bigger>(7);
  EXPECT_NE(static_cast<void*>(big.get()), where);
  EXPECT_EQ(static_cast<Bigger*>(big.get())->payload[19], 7);
  void* big_at = big.get();
  big.reset();
  auto* again = new Bigger(8);
  EXPECT_EQ(static_cast<void*>(again), big_at);
  delete again;
}

TEST(SmallObjectPool, BlocksAreAlignedAndDistinctWhileAlive) {
  std::vector<Small*> live;
  for (int i = 0; i < 1000; ++i) live.push_back(new Small(i));
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(live[i]) % 16, 0u);
    EXPECT_EQ(live[i]->value, i);
  }
  std::vector<Small*> sorted = live;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  for (Small* s : live) delete s;
}

TEST(SmallObjectPool, LargeObjectsAndVectorsWork) {
  auto* l = new Large;
  l->bytes[4095] = 'x';
  EXPECT_EQ(l->bytes[4095], 'x');
  delete l;
  PoolVector<int> v;
  for (int i = 0; i < 10000; ++i) v.push_back(i);  // grows past the pooled sizes
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), int64_t{0}), int64_t{9999} * 10000 / 2);
  PoolVector<int> w(v.begin(), v.begin() + 3);
  EXPECT_EQ(w, (PoolVector<int>{0, 1, 2}));
}

TEST(SmallObjectPool, EachThreadHasItsOwnLists) {
  auto work = [](int seed, int64_t* sum) {
    std::vector<Small*> live;
    for (int round = 0; round < 50; ++round) {
      for (int i = 0; i < 100; ++i) live.push_back(new Small(seed + i));
      for (Small* s : live) *sum += s->value;
      for (Small* s : live) delete s;
      live.clear();
    }
  };
  int64_t a = 0, b = 0;
  std::thread t1(work, 0, &a), t2(work, 1000, &b);
  t1.join();
  t2.join();
  EXPECT_EQ(a, 50 * (99 * 100 / 2));
  EXPECT_EQ(b, 50 * (1000 * 100 + 99 * 100 / 2));
}

}  // namespace
}  // namespace orrery
