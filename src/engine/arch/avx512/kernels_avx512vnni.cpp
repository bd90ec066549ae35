// The AVX-512 VNNI kernel set: the AVX-512 set with the int8 tiles on vpdpbusd, which sums
// four u8 x s8 products exactly, so activations keep all 8 bits (act_qmax = 255).
#include "engine/arch/avx2/kernels_avx2.hpp"
#include "engine/kernels.hpp"
#include "engine/arch/avx512/tiles_avx512.hpp"
#include "engine/arch/avx512/vec16_native.hpp"

namespace ttlpred::engine::detail {
namespace {
using T = Avx512Tiles<Vec16Native>;
struct DotVnni {
  static __m512i acc(__m512i a, __m512i x, __m512i w) { return Vec16Native::dot_vnni(a, x, w); }
};
constexpr GemmFn qu8s8_gemm_8x32c4__avx512vnni = T::gemm_qs8<DotVnni>;
constexpr GemmFn qu8s8_sp24_gemm_8x32c8__avx512vnni = T::gemm_qs8_sp24<DotVnni>;
}  // namespace

const KernelSet& avx512vnni_kernels() {
  // The AVX-512 set's row quantizers are AVX2's.
  static const KernelSet set = extend_kernel_set(avx512_kernels(), {TTLPRED_VNNI_GEMMS(avx512vnni)}, 255.0f);
  return set;
}

}  // namespace ttlpred::engine::detail
