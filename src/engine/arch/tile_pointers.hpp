#pragma once
// The pointers every GEMM tile starts from, whatever its instruction set: its MR rows of
// input and its NP panels of packed weights (or of their 2:4 indices). Plain C++, so that
// the AVX2 and AVX-512 tiles share one definition; internal linkage, like the tiles, so
// that each instruction set's file keeps its own copy compiled with its own flags.
#include <cstddef>
#include <cstdint>

#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {
namespace {

// x[r] = input row m0 + r.
template <class T, int MR>
[[gnu::always_inline]] inline void row_ptrs(const LayerCall& c, std::size_t m0, const T* (&x)[MR]) {
  #pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) x[r] = static_cast<const T*>(c.x) + (m0 + r) * c.x_stride;
}

// p[j] = panel p0 + j of the array at `base`, whose panels lie `stride` elements apart.
template <class T, int NP>
[[gnu::always_inline]] inline void panel_ptrs(const void* base, std::uint32_t p0, std::size_t stride, const T* (&p)[NP]) {
  #pragma GCC unroll 16
  for (int j = 0; j < NP; ++j) p[j] = static_cast<const T*>(base) + std::size_t{p0 + j} * stride;
}

// The NP panels from p0 of a 2:4 layer (pack.cpp): per group of G inputs, the G/2 kept
// values of every column and their 2-bit positions (G bits a column, in Pos words).
template <class Value, class Pos, std::uint32_t G, int NP>
struct SparsePanels {
  static constexpr std::size_t kValues = G / 2 * kPanel;                // a group's values
  static constexpr std::size_t kPos = G * kPanel / (8 * sizeof(Pos));  // a group's position words
  static_assert(kPos > 0 && G * kPanel % (8 * sizeof(Pos)) == 0, "a group's positions fill whole Pos words");
  std::uint32_t groups;
  const Value* v[NP];
  const Pos* pos[NP];
  [[gnu::always_inline]] SparsePanels(const PackedLayer& L, std::uint32_t p0) : groups(L.in_padded / G) {
    panel_ptrs(L.weights, p0, std::size_t{groups} * kValues, v);
    panel_ptrs(L.aux, p0, std::size_t{groups} * kPos, pos);
  }
};
// fp16: 2 of every 4 inputs, one 64-bit word of positions a group.
template <int NP>
using F16SparsePanels = SparsePanels<std::uint16_t, std::uint64_t, 4, NP>;
// int8: 4 of every 8 inputs, one code byte a column.
template <int NP>
using Qs8SparsePanels = SparsePanels<std::int8_t, std::uint8_t, 8, NP>;

}  // namespace
}  // namespace ttlpred::engine::detail
