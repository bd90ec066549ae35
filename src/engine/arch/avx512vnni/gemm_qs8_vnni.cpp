// AVX-512 VNNI int8 kernels: the same tiles as AVX2 (256-bit vectors, AVX512VL encodings),
// with vpdpbusd doing u8 x s8 -> int32 in one instruction and without vpmaddubsw's int16
// saturation, so activations keep all 8 bits (act_qmax = 255). Float kernels are AVX2's.
#include "engine/arch/avx2/common_avx2.hpp"
#include "engine/arch/avx2/kernels_avx2.hpp"
#include "engine/arch/avx2/qs8_tiles.hpp"

namespace ttlpred::engine::detail {
namespace {

struct VnniDot {
  static __m256i acc(__m256i acc, __m256i x4, __m256i w) { return _mm256_dpbusd_epi32(acc, x4, w); }
};

void gemm_qs8_vnni(const PackedLayer& L, const LayerCall& c) {
  switch (L.in_padded) {
    case 64: drive<Qs8Tile<VnniDot, 64>::template T>(L, c); break;
    case 128: drive<Qs8Tile<VnniDot, 128>::template T>(L, c); break;
    case 256: drive<Qs8Tile<VnniDot, 256>::template T>(L, c); break;
    default: drive<Qs8Tile<VnniDot, 0>::template T>(L, c); break;
  }
}

void gemm_qs8_sp24_vnni(const PackedLayer& L, const LayerCall& c) { drive<Qs8SparseTile<VnniDot>::template T>(L, c); }

}  // namespace

const KernelSet& avx512vnni_kernels() {
  static const KernelSet set = {
      {gemm_f32_avx2, gemm_f16_avx2, gemm_bf16_avx2, gemm_qs8_vnni, gemm_f16_sp24_avx2, gemm_qs8_sp24_vnni},
      {"f32_gemm_4x16__avx2_fma", "f16_gemm_4x16__avx2_f16c", "bf16_gemm_4x16__avx2_fma",
       "qu8s8_gemm_4x16c4__avx512vnni", "f16_sp24_gemm_4x16__avx2_f16c", "qu8s8_sp24_gemm_4x16c8__avx512vnni"},
      quantize_dynamic_avx2,
      quantize_static_avx2,
      255.0f,
  };
  return set;
}

}  // namespace ttlpred::engine::detail
