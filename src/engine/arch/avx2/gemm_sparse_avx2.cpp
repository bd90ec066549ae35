// 2:4 structured-sparse fp16 GEMM for AVX2 (the int8 one is in qs8_tiles.hpp). Weights stay
// compressed in memory (half the values plus 2-bit indices) and are expanded in registers:
// each column's inputs are selected with vpermilps, whose index only reads the low 2 bits of
// a lane, so the packed indices need shifts but no masking.
#include "engine/arch/avx2/common_avx2.hpp"
#include "engine/arch/avx2/kernels_avx2.hpp"

namespace ttlpred::engine::detail {
namespace {

template <int MR, int NP>
struct F16SparseTile {
  static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
    const F16SparsePanels<NP> w(L, p0);
    const float* x[MR];
    row_ptrs(c, m0, x);
    const __m256i sh0 = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    const __m256i sh1 = _mm256_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30);
    __m256 acc[MR][NP][2];
    zero_tile(acc, _mm256_setzero_ps());
    for (std::uint32_t g = 0; g < w.groups; ++g) {
      __m256 xg[MR];
      #pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) xg[r] = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(x[r] + 4 * g));
      #pragma GCC unroll 16
      for (int j = 0; j < NP; ++j) {
        const std::uint64_t bits = w.pos[j][g];
        const __m256i blo = _mm256_set1_epi32(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits)));
        const __m256i bhi = _mm256_set1_epi32(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits >> 32)));
        const __m256i i0lo = _mm256_srlv_epi32(blo, sh0), i1lo = _mm256_srlv_epi32(blo, sh1);
        const __m256i i0hi = _mm256_srlv_epi32(bhi, sh0), i1hi = _mm256_srlv_epi32(bhi, sh1);
        const auto* vp = reinterpret_cast<const __m128i*>(w.v[j] + std::size_t{g} * 2 * kPanel);
        const __m256 v0lo = _mm256_cvtph_ps(_mm_loadu_si128(vp)), v0hi = _mm256_cvtph_ps(_mm_loadu_si128(vp + 1));
        const __m256 v1lo = _mm256_cvtph_ps(_mm_loadu_si128(vp + 2)), v1hi = _mm256_cvtph_ps(_mm_loadu_si128(vp + 3));
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          acc[r][j][0] = _mm256_fmadd_ps(v0lo, _mm256_permutevar_ps(xg[r], i0lo), acc[r][j][0]);
          acc[r][j][1] = _mm256_fmadd_ps(v0hi, _mm256_permutevar_ps(xg[r], i0hi), acc[r][j][1]);
          acc[r][j][0] = _mm256_fmadd_ps(v1lo, _mm256_permutevar_ps(xg[r], i1lo), acc[r][j][0]);
          acc[r][j][1] = _mm256_fmadd_ps(v1hi, _mm256_permutevar_ps(xg[r], i1hi), acc[r][j][1]);
        }
      }
    }
    finish_tile(L, c, m0, p0, acc);
  }
};

}  // namespace

void f16_sp24_gemm_4x16__avx2_f16c(const PackedLayer& L, const LayerCall& c) { drive<F16SparseTile>(L, c); }

}  // namespace ttlpred::engine::detail
