#pragma once
// A global operator new that counts, for the tests that prove a hot path does not touch the
// heap. It replaces the allocation functions of the whole test binary, so include this
// header in exactly one source file of a binary; it counts only while `counting`
// is true, so the rest of the binary is unaffected.
//
// Every form whose memory our operator delete frees is replaced (the nothrow forms too:
// std::stable_sort uses them), so that allocation and release always pair up under
// AddressSanitizer. Aligned forms are left to the library (they pair with its aligned delete).
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

// Our delete frees with free() what our new took with malloc(). Where g++ inlines that delete
// into code whose pointer came from `new` (gtest's CreateTest at -O1, the asan preset), it
// takes `new` for the library's and warns of a mismatched free, which cannot happen when both
// are ours; so the warning is off for the one file of a binary that includes this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace ttlpred::test::counting_new {
inline std::atomic<bool> counting{false};
inline std::atomic<std::size_t> allocations{0};


inline void* counted_malloc(std::size_t n) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
inline void* counted_or_throw(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}

// How many allocations `f()` makes: the tests' one way to count.
template <class F>
std::size_t allocations_during(F&& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations.load();
}
}  // namespace ttlpred::test::counting_new

void* operator new(std::size_t n) { return ttlpred::test::counting_new::counted_or_throw(n); }
void* operator new[](std::size_t n) { return ttlpred::test::counting_new::counted_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return ttlpred::test::counting_new::counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return ttlpred::test::counting_new::counted_malloc(n); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
