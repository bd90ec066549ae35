#pragma once
// Shared pieces of the AVX2 kernels: the fused epilogue and the tile driver. Included only by
// files compiled with -mavx2 -mfma -mf16c; everything has internal linkage so that no AVX2
// instruction can leak into a function the scalar path links against (ODR merging of inline
// functions would otherwise pick one compiled with AVX2 flags).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/arch/tile_pointers.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {
namespace {

inline __m256 activate8(__m256 v, Activation act) {
  switch (act) {
    case Activation::None: return v;
    case Activation::Relu: return _mm256_max_ps(v, _mm256_setzero_ps());
    case Activation::LeakyRelu: return _mm256_max_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(kLeakyReluSlope)));
  }
  return v;
}

// Stores 8 values of row m at columns n..n+7, clipped to c.y_cols, as float or requantized u8.
inline void store8(const LayerCall& c, std::size_t m, std::uint32_t n, __m256 v) {
  const std::uint32_t avail = c.y_cols > n ? c.y_cols - n : 0u;
  if (avail == 0) return;
  if (c.out_u8) {
    __m256 s = _mm256_fmadd_ps(v, _mm256_set1_ps(c.out_inv_scale), _mm256_set1_ps(c.out_zp));
    // The (integer) zero point is added inside the FMA, before rounding. Against the
    // scalar round-then-add this differs at exact .5 ties when the zero point is odd (round
    // half to even looks at the sum's parity) and within an ulp of a tie: one code, rarely.
    __m256i q = _mm256_cvtps_epi32(s);
    q = _mm256_max_epi32(q, _mm256_setzero_si256());
    q = _mm256_min_epi32(q, _mm256_set1_epi32(static_cast<int>(c.out_qmax)));
    const __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    const __m128i b8 = _mm_packus_epi16(w16, w16);
    std::uint8_t* dst = static_cast<std::uint8_t*>(c.y) + m * c.y_stride + n;
    if (avail >= 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), b8);
    } else {
      alignas(16) std::uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), b8);
      std::memcpy(dst, tmp, avail);
    }
  } else {
    float* dst = static_cast<float*>(c.y) + m * c.y_stride + n;
    if (avail >= 8) {
      _mm256_storeu_ps(dst, v);
    } else {
      alignas(32) float tmp[8];
      _mm256_store_ps(tmp, v);
      std::memcpy(dst, tmp, avail * sizeof(float));
    }
  }
}

// Bias, folded embeddings, activation, store: the part shared by float and int8 kernels.
inline void finish8(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t n, __m256 v) {
  if (!c.raw) {
    for (std::uint32_t j = 0; j < c.n_folded; ++j)
      v = _mm256_add_ps(v, _mm256_loadu_ps(c.folded[j] + std::size_t{c.cats[m * c.cat_stride + j]} * L.cols_padded() + n));
    v = activate8(v, L.act);
  }
  store8(c, m, n, v);
}

// The epilogue of 8 float sums (bias added), or of 8 int32 sums (dequantized).
inline void finish8_sum(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t n, __m256 acc) {
  if (!c.raw) acc = _mm256_add_ps(acc, _mm256_loadu_ps(L.bias + n));
  finish8(L, c, m, n, acc);
}

inline void finish8_sum(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t n, __m256i acc) {
  __m256 v = _mm256_cvtepi32_ps(acc);
  if (c.row_scale) {
    v = _mm256_fnmadd_ps(_mm256_set1_ps(c.row_zp[m]), _mm256_loadu_ps(L.wsum + n), v);
    v = _mm256_mul_ps(v, _mm256_set1_ps(c.row_scale[m]));
  }
  v = _mm256_fmadd_ps(v, _mm256_loadu_ps(L.col_scale + n), _mm256_loadu_ps(L.bias + n));
  finish8(L, c, m, n, v);
}

// The accumulators of every AVX2 tile: MR rows x NP panels, each panel two 8-column halves.
template <class A, int MR, int NP>
[[gnu::always_inline]] inline void zero_tile(A (&acc)[MR][NP][2], A z) {
  #pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
    #pragma GCC unroll 16
    for (int j = 0; j < NP; ++j) acc[r][j][0] = acc[r][j][1] = z;
}
// The fused epilogue over all of them: float sums, or int32 ones to dequantize.
template <class A, int MR, int NP>
[[gnu::always_inline]] inline void finish_tile(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0, A (&acc)[MR][NP][2]) {
  #pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
    #pragma GCC unroll 16
    for (int j = 0; j < NP; ++j) {
      const std::uint32_t n = (p0 + j) * kPanel;
      finish8_sum(L, c, m0 + r, n, acc[r][j][0]);
      finish8_sum(L, c, m0 + r, n + 8, acc[r][j][1]);
    }
}

// Walks the output in tiles of MR rows x NP panels. Full 4-row tiles go panel by panel so
// that one panel's weights stay in L1 while the rows stream; leftover rows take several
// panels at once so that a single row (batch 1) still keeps 8 accumulators in flight.
template <template <int, int> class Tile>
void drive(const PackedLayer& L, const LayerCall& c) {
  std::size_t m = 0;
  const std::size_t full = c.rows / 4 * 4;
  for (std::uint32_t p = 0; p < L.panels; ++p)
    for (m = 0; m < full; m += 4) Tile<4, 1>::run(L, c, m, p);
  const std::size_t rem = c.rows - full;
  std::uint32_t p = 0;
  if (rem == 3) {
    for (; p < L.panels; ++p) Tile<3, 1>::run(L, c, full, p);
  } else if (rem == 2) {
    for (; p + 2 <= L.panels; p += 2) Tile<2, 2>::run(L, c, full, p);
    for (; p < L.panels; ++p) Tile<2, 1>::run(L, c, full, p);
  } else if (rem == 1) {
    for (; p + 4 <= L.panels; p += 4) Tile<1, 4>::run(L, c, full, p);
    for (; p + 2 <= L.panels; p += 2) Tile<1, 2>::run(L, c, full, p);
    for (; p < L.panels; ++p) Tile<1, 1>::run(L, c, full, p);
  }
}

// drive() over Tile<P, KC>, KC the layer's input width `width` when it is 64, 128 or 256
// (a trip count known at compile time), else over Tile<P, 0> (any width).
template <template <class, int> class Tile, class P>
void drive_by_width(const PackedLayer& L, const LayerCall& c, std::uint32_t width) {
  switch (width) {
    case 64: drive<Tile<P, 64>::template T>(L, c); break;
    case 128: drive<Tile<P, 128>::template T>(L, c); break;
    case 256: drive<Tile<P, 256>::template T>(L, c); break;
    default: drive<Tile<P, 0>::template T>(L, c); break;
  }
}

}  // namespace
}  // namespace ttlpred::engine::detail
