// Free lists for small objects made and destroyed by the million: a stream per chunk and an
// algorithm per phase of it. A class derived from PoolAllocated takes its memory from lists
// kept per thread and per 16-byte size class, and gives it back there, not to malloc (whose
// per-size caches hold a handful of blocks: a collective's 16 streams made at once and ended
// later overflow them). Blocks are returned to the system when the thread ends.
//
//   class Stream : public PoolAllocated { ... };
//   auto* s = new Stream(...);  // from this thread's free list when it has one
//   delete s;                   // back onto the list
//
// Small vectors made as often (a chunk's phases, a phase's queue of messages) take theirs from
// the same lists through PoolAllocator:
//
//   PoolVector<PhaseSpec> phases;
//
// Blocks over 512 bytes go to ::operator new as usual. Every block is aligned to 16 bytes. A
// reused block hides a use after free from AddressSanitizer: to hunt one, make PoolAllocate
// and PoolFree call ::operator new and delete.
#pragma once

#include <cstddef>
#include <vector>

namespace orrery {

void* PoolAllocate(std::size_t bytes);
void PoolFree(void* p, std::size_t bytes) noexcept;

class PoolAllocated {
 public:
  static void* operator new(std::size_t size) { return PoolAllocate(size); }
  static void operator delete(void* p, std::size_t size) noexcept { PoolFree(p, size); }
};

template <typename T>
struct PoolAllocator {
  static_assert(alignof(T) <= 16, "pool blocks are aligned to 16 bytes");
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: converting, as the standard's
  T* allocate(std::size_t n) { return static_cast<T*>(PoolAllocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { PoolFree(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const {
    return false;
  }
};

template <typename T>
using PoolVector = std::vector<T, PoolAllocator<T>>;

}  // namespace orrery
