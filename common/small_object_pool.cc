#include "common/small_object_pool.h"

#include <new>

namespace orrery {

namespace {

constexpr std::size_t kGranule = 16;
constexpr std::size_t kClasses = 32;  // up to 512 bytes

struct FreeBlock {
  FreeBlock* next;
};

struct ThreadPool {
  FreeBlock* free[kClasses] = {};
  ~ThreadPool() {
    for (FreeBlock*& head : free) {
      while (head != nullptr) {
        FreeBlock* next = head->next;
        ::operator delete(head);
        head = next;
      }
    }
  }
};

thread_local ThreadPool pool;

// Size class c holds blocks of (c + 1) * kGranule bytes; kClasses for larger objects.
std::size_t ClassOf(std::size_t size) {
  const std::size_t c = (size + kGranule - 1) / kGranule;
  return c == 0 ? 0 : (c <= kClasses ? c - 1 : kClasses);
}

}  // namespace

void* PoolAllocate(std::size_t size) {
  const std::size_t c = ClassOf(size);
  if (c == kClasses) return ::operator new(size);
  if (FreeBlock* b = pool.free[c]) {
    pool.free[c] = b->next;
    return b;
  }
  return ::operator new((c + 1) * kGranule);
}

void PoolFree(void* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  const std::size_t c = ClassOf(size);
  if (c == kClasses) {
    ::operator delete(p);
    return;
  }
  FreeBlock* b = static_cast<FreeBlock*>(p);
  b->next = pool.free[c];
  pool.free[c] = b;
}

}  // namespace orrery
