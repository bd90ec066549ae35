#pragma once
// The u8 x s8 tiles (dense "c4" and 2:4 sparse), written once over a `Dot` policy that
// accumulates 4 byte products per int32 lane: AVX2 uses vpmaddubsw + vpmaddwd (7-bit
// activations, see gemm_qs8_avx2.cpp), AVX-512 VNNI a single vpdpbusd (full 8 bits). Each
// including file instantiates them with its own instruction-set flags (internal linkage).
#include "engine/arch/avx2/common_avx2.hpp"

namespace ttlpred::engine::detail {
namespace {

template <class Dot, int KC>
struct Qs8Tile {
  template <int MR, int NP>
  struct T {
    static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
      const std::uint32_t groups = (KC > 0 ? static_cast<std::uint32_t>(KC) : L.in_padded) / 4;
      const std::uint8_t* x[MR];
      row_ptrs(c, m0, x);
      const std::int8_t* w[NP];
      panel_ptrs(L.weights, p0, std::size_t{groups} * kPanel * 4, w);
      __m256i acc[MR][NP][2];
      zero_tile(acc, _mm256_setzero_si256());
      for (std::uint32_t g = 0; g < groups; ++g) {
        __m256i xb[MR];
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          std::int32_t four;
          std::memcpy(&four, x[r] + 4 * g, 4);
          xb[r] = _mm256_set1_epi32(four);
        }
        #pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) {
          const auto* wp = reinterpret_cast<const __m256i*>(w[j] + std::size_t{g} * kPanel * 4);
          const __m256i lo = _mm256_loadu_si256(wp), hi = _mm256_loadu_si256(wp + 1);
          #pragma GCC unroll 16
          for (int r = 0; r < MR; ++r) {
            acc[r][j][0] = Dot::acc(acc[r][j][0], xb[r], lo);
            acc[r][j][1] = Dot::acc(acc[r][j][1], xb[r], hi);
          }
        }
      }
      finish_tile(L, c, m0, p0, acc);
    }
  };
};

// Column code byte (2-bit indices a0 a1 | b0 b1) -> vpshufb control bytes {a0, a1, 4+b0, 4+b1}.
inline __m256i shuffle_control(__m256i code) {
  const __m256i spread = _mm256_or_si256(_mm256_or_si256(code, _mm256_slli_epi32(code, 6)),
                                         _mm256_or_si256(_mm256_slli_epi32(code, 12), _mm256_slli_epi32(code, 18)));
  return _mm256_add_epi32(_mm256_and_si256(spread, _mm256_set1_epi32(0x03030303)), _mm256_set1_epi32(0x04040000));
}

template <class Dot>
struct Qs8SparseTile {
template <int MR, int NP>
struct T {
  static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
    const Qs8SparsePanels<NP> w(L, p0);
    const std::uint8_t* x[MR];
    row_ptrs(c, m0, x);
    __m256i acc[MR][NP][2];
    zero_tile(acc, _mm256_setzero_si256());
    for (std::uint32_t g = 0; g < w.groups; ++g) {
      __m256i xb[MR];
      #pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        long long eight;
        std::memcpy(&eight, x[r] + 8 * g, 8);
        xb[r] = _mm256_set1_epi64x(eight);
      }
      #pragma GCC unroll 16
      for (int j = 0; j < NP; ++j) {
        const std::uint8_t* cp = w.pos[j] + std::size_t{g} * kPanel;
        const __m256i ctl_lo = shuffle_control(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cp))));
        const __m256i ctl_hi =
            shuffle_control(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cp + 8))));
        const auto* wp = reinterpret_cast<const __m256i*>(w.v[j] + std::size_t{g} * kPanel * 4);
        const __m256i wlo = _mm256_loadu_si256(wp), whi = _mm256_loadu_si256(wp + 1);
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const __m256i glo = _mm256_shuffle_epi8(xb[r], ctl_lo), ghi = _mm256_shuffle_epi8(xb[r], ctl_hi);
          acc[r][j][0] = Dot::acc(acc[r][j][0], glo, wlo);
          acc[r][j][1] = Dot::acc(acc[r][j][1], ghi, whi);
        }
      }
    }
    finish_tile(L, c, m0, p0, acc);
  }
};
};

}  // namespace
}  // namespace ttlpred::engine::detail
