#include "common/flat_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

namespace orrery {
namespace {

// A deliberately poor hash, so probe chains collide and wrap around the table.
struct Weak {
  size_t operator()(int k) const { return static_cast<size_t>(k % 7); }
};

TEST(FlatMapTest, BehavesLikeStdMapUnderRandomInsertsAndErases) {
  FlatMap<int, int, Weak> m;
  std::map<int, int> ref;
  std::mt19937 rng(3);
  for (int step = 0; step < 200000; ++step) {
    const int k = static_cast<int>(rng() % 500);
    switch (rng() % 3) {
      case 0:
        m.FindOrInsert(k) += 1;
        ref[k] += 1;
        break;
      case 1:
        if (step % 2 == 0) {
          ASSERT_EQ(m.Erase(k), ref.erase(k) == 1) << "key " << k;
        } else {
          size_t at = 0;
          const bool present = m.Find(k, &at) != nullptr;
          ASSERT_EQ(present, ref.erase(k) == 1) << "key " << k;
          if (present) m.EraseAt(at);
        }
        break;
      default: {
        const int* v = step % 2 == 0 ? m.Find(k) : std::as_const(m).Find(k);
        auto it = ref.find(k);
        ASSERT_EQ(v != nullptr, it != ref.end()) << "key " << k;
        if (v != nullptr) {
          ASSERT_EQ(*v, it->second);
        }
      }
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  std::map<int, int> seen;
  m.ForEach([&](int k, int v) { seen[k] = v; });
  EXPECT_EQ(seen, ref);
}

TEST(FlatMapTest, FindOrInsertDefaultConstructs) {
  FlatMap<int, int, std::hash<int>> m;
  EXPECT_EQ(m.Find(4), nullptr);
  EXPECT_EQ(m.FindOrInsert(4), 0);
  m.FindOrInsert(4) = 9;
  ASSERT_NE(m.Find(4), nullptr);
  EXPECT_EQ(*m.Find(4), 9);
  EXPECT_TRUE(m.Erase(4));
  EXPECT_FALSE(m.Erase(4));
  EXPECT_EQ(m.FindOrInsert(4), 0);  // re-inserted fresh
}

}  // namespace
}  // namespace orrery
