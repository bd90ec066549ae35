// The AVX-512 VNNI kernel set: the AVX-512 set with the int8 tiles on vpdpbusd, which sums
// four u8 x s8 products exactly, so activations keep all 8 bits (act_qmax = 255).
#include "engine/arch/avx2/kernels_avx2.hpp"
#include "engine/kernels.hpp"
#include "engine/arch/avx512/tiles_avx512.hpp"
#include "engine/arch/avx512/vec16_native.hpp"

namespace ttlpred::engine::detail {
namespace {
struct DotVnni {
  static __m512i acc(__m512i a, __m512i x, __m512i w) { return Vec16Native::dot_vnni(a, x, w); }
};
}  // namespace

const KernelSet& avx512vnni_kernels() {
  using T = Avx512Tiles<Vec16Native>;
  const KernelSet& base = avx512_kernels();
  static const KernelSet set = {
      {base.gemm[0], base.gemm[1], base.gemm[2], T::gemm_qs8<DotVnni>, base.gemm[4], T::gemm_qs8_sp24<DotVnni>},
      {base.gemm_name[0], base.gemm_name[1], base.gemm_name[2], "qu8s8_gemm_8x32c4__avx512vnni", base.gemm_name[4],
       "qu8s8_sp24_gemm_8x32c8__avx512vnni"},
      quantize_dynamic_avx2,
      quantize_static_avx2,
      255.0f,
  };
  return set;
}

}  // namespace ttlpred::engine::detail
