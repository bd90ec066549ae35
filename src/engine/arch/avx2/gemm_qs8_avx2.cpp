// u8 x s8 GEMM for AVX2 ("c4": each int32 lane sums 4 consecutive inputs of one column).
// vpmaddubsw multiplies u8 activations by s8 weights and adds pairs into int16 with
// saturation; activations are limited to 7 bits on this path (KernelSet::act_qmax = 127) so
// a pair sum never exceeds 2*127*127 = 32258. vpmaddwd by 1 then widens pairs to int32.
#include "engine/arch/avx2/common_avx2.hpp"
#include "engine/arch/avx2/kernels_avx2.hpp"
#include "engine/arch/avx2/qs8_tiles.hpp"

namespace ttlpred::engine::detail {
namespace {

struct MaddubsDot {
  static __m256i acc(__m256i acc, __m256i x4, __m256i w) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x4, w), _mm256_set1_epi16(1)));
  }
};

}  // namespace

void qu8s8_gemm_4x16c4__avx2(const PackedLayer& L, const LayerCall& c) {
  drive_by_width<Qs8Tile, MaddubsDot>(L, c, L.in_padded);
}

void qu8s8_sp24_gemm_4x16c8__avx2(const PackedLayer& L, const LayerCall& c) { drive<Qs8SparseTile<MaddubsDot>::template T>(L, c); }

}  // namespace ttlpred::engine::detail
