// A limit on the memory `operator new` hands out, for //:orrery_new_limit (tests/cli_test.cc):
// with ORRERY_TEST_NEW_LIMIT_MB=N in the environment, an allocation that would take the bytes
// live past N MiB throws std::bad_alloc, as a real allocation does when the process runs out
// of memory. `ulimit -v` does that for the plain binary, but AddressSanitizer reserves terabytes
// of shadow address space at start (so the process cannot start under the limit) and its own
// operator new reports and exits instead of throwing; this drives the same path under it.
//
// Every form of new and delete is replaced (they are paired, or a sanitizer would see new's
// memory freed by another family's delete), all on malloc and free, which the sanitizers watch.
#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

// The limit in bytes (0: none), read once from the environment.
size_t Limit() {
  static const size_t limit = [] {
    const char* mb = std::getenv("ORRERY_TEST_NEW_LIMIT_MB");
    return mb == nullptr ? size_t{0} : static_cast<size_t>(std::strtoull(mb, nullptr, 10)) << 20;
  }();
  return limit;
}

std::atomic<size_t> live_bytes{0};

// nullptr when the limit or malloc refuses it.
void* Allocate(std::size_t size, std::size_t align) {
  if (size == 0) size = 1;
  const size_t limit = Limit();
  if (limit != 0 && (size > limit || live_bytes.load(std::memory_order_relaxed) > limit - size)) {
    return nullptr;
  }
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(size);
  } else if (posix_memalign(&p, align, size) != 0) {
    p = nullptr;
  }
  if (p != nullptr) live_bytes.fetch_add(malloc_usable_size(p), std::memory_order_relaxed);
  return p;
}

void* AllocateOrThrow(std::size_t size, std::size_t align) {
  void* p = Allocate(size, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void Free(void* p) noexcept {
  if (p == nullptr) return;
  live_bytes.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

constexpr std::size_t kDefault = alignof(std::max_align_t);

}  // namespace

void* operator new(std::size_t n) { return AllocateOrThrow(n, kDefault); }
void* operator new[](std::size_t n) { return AllocateOrThrow(n, kDefault); }
void* operator new(std::size_t n, std::align_val_t a) {
  return AllocateOrThrow(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return AllocateOrThrow(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return Allocate(n, kDefault); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return Allocate(n, kDefault);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return Allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return Allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { Free(p); }
void operator delete[](void* p) noexcept { Free(p); }
void operator delete(void* p, std::size_t) noexcept { Free(p); }
void operator delete[](void* p, std::size_t) noexcept { Free(p); }
void operator delete(void* p, std::align_val_t) noexcept { Free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { Free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { Free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { Free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { Free(p); }
