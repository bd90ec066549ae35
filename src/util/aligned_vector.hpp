#pragma once
// std::vector with 64-byte aligned storage. Eigen's vectorized reductions and matrix-vector
// kernels peel a pointer-alignment-dependent number of leading elements, so the rounding of
// a sum depends on where malloc happened to put the buffer. With every buffer 64-byte
// aligned, the same inputs always give the same bits.
#include <cstddef>
#include <new>
#include <vector>

namespace ttlpred {

template <class T>
struct Aligned64Allocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  Aligned64Allocator() = default;
  template <class U>
  Aligned64Allocator(const Aligned64Allocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t n) noexcept { ::operator delete(p, n * sizeof(T), kAlign); }
  template <class U>
  bool operator==(const Aligned64Allocator<U>&) const noexcept { return true; }
};

template <class T>
using AlignedVector = std::vector<T, Aligned64Allocator<T>>;

}  // namespace ttlpred
