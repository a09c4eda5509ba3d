// An open-addressing hash map for hot paths: linear probing, backward-shift deletion (no
// tombstones), power-of-two capacity kept at most half full. Values live in the table, so
// pointers from Find/FindOrInsert stay valid only until the next insertion or erase.
//
//   FlatMap<Key, Value, KeyHash> m;
//   Value& v = m.FindOrInsert(k);   // default-constructs when absent
//   if (Value* p = m.Find(k)) ...
//   m.Erase(k);
//   size_t at; Value& w = m.FindOrInsert(k, &at); ... m.EraseAt(at);   // no second probe
//
// Iteration order depends on the hash; callers that report must sort (see ForEach).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace orrery {

template <typename K, typename V, typename Hash>
class FlatMap {
 public:
  FlatMap() : cells_(16) {}

  V* Find(const K& k, size_t* at = nullptr) {
    const size_t mask = cells_.size() - 1;
    for (size_t i = Home(k);; i = (i + 1) & mask) {
      Cell& c = cells_[i];
      if (!c.used) return nullptr;
      if (c.key == k) {
        if (at != nullptr) *at = i;
        return &c.value;
      }
    }
  }

  const V* Find(const K& k) const { return const_cast<FlatMap*>(this)->Find(k); }

  V& FindOrInsert(const K& k, size_t* at = nullptr) {
    if ((used_ + 1) * 2 > cells_.size()) Grow();
    const size_t mask = cells_.size() - 1;
    size_t i = Home(k);
    for (;; i = (i + 1) & mask) {
      Cell& c = cells_[i];
      if (!c.used) break;
      if (c.key == k) {
        if (at != nullptr) *at = i;
        return c.value;
      }
    }
    cells_[i].used = true;
    cells_[i].key = k;
    cells_[i].value = V();
    ++used_;
    if (at != nullptr) *at = i;
    return cells_[i].value;
  }

  // Returns whether k was present.
  bool Erase(const K& k) {
    const size_t mask = cells_.size() - 1;
    size_t i = Home(k);
    for (;; i = (i + 1) & mask) {
      if (!cells_[i].used) return false;
      if (cells_[i].key == k) break;
    }
    EraseAt(i);
    return true;
  }

  // Erases the entry at the index Find or FindOrInsert reported; no insertion or erase may
  // have happened since.
  void EraseAt(size_t i) {
    const size_t mask = cells_.size() - 1;
    size_t j = i;
    while (true) {
      j = (j + 1) & mask;
      if (!cells_[j].used) break;
      const size_t home = Home(cells_[j].key);
      // Cell j may move into the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        cells_[i] = std::move(cells_[j]);
        i = j;
      }
    }
    cells_[i].used = false;
    cells_[i].value = V();
    --used_;
  }

  size_t size() const { return used_; }

  template <typename F>
  void ForEach(F&& f) const {
    for (const Cell& c : cells_) {
      if (c.used) f(c.key, c.value);
    }
  }

 private:
  struct Cell {
    K key{};
    V value{};
    bool used = false;
  };

  size_t Home(const K& k) const {
    // Fibonacci mixing on top of the caller's hash spreads weak hashes over the table.
    const uint64_t h = static_cast<uint64_t>(Hash()(k)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> (64 - bits_));
  }

  void Grow() {
    std::vector<Cell> old;
    old.swap(cells_);
    cells_.assign(old.size() * 2, Cell());
    ++bits_;
    used_ = 0;
    const size_t mask = cells_.size() - 1;
    for (Cell& c : old) {
      if (!c.used) continue;
      size_t i = Home(c.key);
      while (cells_[i].used) i = (i + 1) & mask;
      cells_[i] = std::move(c);
      ++used_;
    }
  }

  std::vector<Cell> cells_;
  int bits_ = 4;
  size_t used_ = 0;
};

}  // namespace orrery
