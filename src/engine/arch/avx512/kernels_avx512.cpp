// The AVX-512 kernel set (F, BW, VL): 512-bit tiles for every weight format; the int8 dot
// products go through vpmaddubsw, so activations keep 7 bits as on AVX2. Row quantizers are
// AVX2's (every AVX-512 host has AVX2; they are not the hot part).
#include "engine/arch/avx2/kernels_avx2.hpp"
#include "engine/kernels.hpp"
#include "engine/arch/avx512/tiles_avx512.hpp"
#include "engine/arch/avx512/vec16_native.hpp"

namespace ttlpred::engine::detail {
namespace {
using T = Avx512Tiles<Vec16Native>;
constexpr GemmFn f32_gemm_8x32__avx512f = T::gemm_f32;
constexpr GemmFn f16_gemm_8x32__avx512f = T::gemm_f16;
constexpr GemmFn bf16_gemm_8x32__avx512f = T::gemm_bf16;
constexpr GemmFn qu8s8_gemm_8x32c4__avx512bw = T::gemm_qs8<T::DotBw>;
constexpr GemmFn f16_sp24_gemm_8x32__avx512f = T::gemm_f16_sp24;
constexpr GemmFn qu8s8_sp24_gemm_8x32c8__avx512bw = T::gemm_qs8_sp24<T::DotBw>;
}  // namespace

const KernelSet& avx512_kernels() {
  static const KernelSet set = make_kernel_set(nullptr, {TTLPRED_BASE_GEMMS(8x32, avx512f, avx512f, avx512bw)},
                                               quantize_dynamic_avx2, quantize_static_avx2, 127.0f);
  return set;
}

}  // namespace ttlpred::engine::detail
