// fp32 / fp16 / bf16 weight GEMM for AVX2+FMA(+F16C): fp32 activations, weights widened on
// load, fused epilogue. Tile: up to 4 rows x 16 columns per panel, 8 ymm accumulators.
#include "engine/arch/avx2/common_avx2.hpp"
#include "engine/arch/avx2/kernels_avx2.hpp"

namespace ttlpred::engine::detail {
namespace {

struct F32W {
  using T = float;
  static void load16(const float* p, __m256& lo, __m256& hi) {
    lo = _mm256_loadu_ps(p);
    hi = _mm256_loadu_ps(p + 8);
  }
};
struct F16W {
  using T = std::uint16_t;
  static void load16(const std::uint16_t* p, __m256& lo, __m256& hi) {
    lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)));
  }
};
struct BF16W {
  using T = std::uint16_t;
  // Columns are interleaved at packing (bf16_slot): each 32-bit lane holds column i in its
  // low half and column 8+i in its high half, and a bf16 is the top half of a float.
  static void load16(const std::uint16_t* p, __m256& lo, __m256& hi) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    lo = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    hi = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
  }
};

// KC > 0 makes the input width a compile-time constant (fully known trip count); 0 = any.
template <class W, int KC>
struct FloatTile {
  template <int MR, int NP>
  struct T {
    static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
      const std::uint32_t K = KC > 0 ? static_cast<std::uint32_t>(KC) : L.in;
      const float* x[MR];
      row_ptrs(c, m0, x);
      const typename W::T* w[NP];
      panel_ptrs(L.weights, p0, std::size_t{K} * kPanel, w);
      __m256 acc[MR][NP][2];
      zero_tile(acc, _mm256_setzero_ps());
      for (std::uint32_t k = 0; k < K; ++k) {
        __m256 xb[MR];
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) xb[r] = _mm256_broadcast_ss(x[r] + k);
        #pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) {
          __m256 lo, hi;
          W::load16(w[j] + std::size_t{k} * kPanel, lo, hi);
          #pragma GCC unroll 16
          for (int r = 0; r < MR; ++r) {
            acc[r][j][0] = _mm256_fmadd_ps(lo, xb[r], acc[r][j][0]);
            acc[r][j][1] = _mm256_fmadd_ps(hi, xb[r], acc[r][j][1]);
          }
        }
      }
      finish_tile(L, c, m0, p0, acc);
    }
  };
};

template <class W>
void gemm(const PackedLayer& L, const LayerCall& c) {
  drive_by_width<FloatTile, W>(L, c, L.in);
}

}  // namespace

void f32_gemm_4x16__avx2_fma(const PackedLayer& L, const LayerCall& c) { gemm<F32W>(L, c); }
void f16_gemm_4x16__avx2_f16c(const PackedLayer& L, const LayerCall& c) { gemm<F16W>(L, c); }
void bf16_gemm_4x16__avx2_fma(const PackedLayer& L, const LayerCall& c) { gemm<BF16W>(L, c); }

}  // namespace ttlpred::engine::detail
