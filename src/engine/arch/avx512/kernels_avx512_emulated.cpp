// The AVX-512, AVX-512 VNNI and AVX-512 BF16 kernel sets on the portable model of their instructions
// (vec16_emulated.hpp), compiled without any instruction-set flag: the tiles of the real
// sets, run on any host, so that every host's tests check them (CompileOptions::emulated).
// Row quantizers are the scalar ones.
#include "engine/kernels.hpp"
#include "engine/arch/avx512/tiles_avx512.hpp"
#include "engine/arch/avx512/vec16_emulated.hpp"

namespace ttlpred::engine::detail {
namespace {
using T = Avx512Tiles<Vec16Emulated>;
struct DotVnni {
  static Vec16Emulated::I acc(Vec16Emulated::I a, Vec16Emulated::I x, Vec16Emulated::I w) {
    return Vec16Emulated::dot_vnni(a, x, w);
  }
};
constexpr GemmFn f32_gemm_8x32__avx512f_emulated = T::gemm_f32;
constexpr GemmFn f16_gemm_8x32__avx512f_emulated = T::gemm_f16;
constexpr GemmFn bf16_gemm_8x32__avx512f_emulated = T::gemm_bf16;
constexpr GemmFn qu8s8_gemm_8x32c4__avx512bw_emulated = T::gemm_qs8<T::DotBw>;
constexpr GemmFn f16_sp24_gemm_8x32__avx512f_emulated = T::gemm_f16_sp24;
constexpr GemmFn qu8s8_sp24_gemm_8x32c8__avx512bw_emulated = T::gemm_qs8_sp24<T::DotBw>;
constexpr GemmFn qu8s8_gemm_8x32c4__avx512vnni_emulated = T::gemm_qs8<DotVnni>;
constexpr GemmFn qu8s8_sp24_gemm_8x32c8__avx512vnni_emulated = T::gemm_qs8_sp24<DotVnni>;
constexpr GemmFn bf16_gemm_8x32c2__avx512bf16_emulated = T::gemm_bf16_pairs;
}  // namespace

const KernelSet& avx512_emulated_kernels() {
  static const KernelSet set =
      make_kernel_set(nullptr, {TTLPRED_BASE_GEMMS(8x32, avx512f_emulated, avx512f_emulated, avx512bw_emulated)},
                      scalar_kernels().quantize_dynamic, scalar_kernels().quantize_static, 127.0f);
  return set;
}

const KernelSet& avx512vnni_emulated_kernels() {
  static const KernelSet set =
      extend_kernel_set(avx512_emulated_kernels(), {TTLPRED_VNNI_GEMMS(avx512vnni_emulated)}, 255.0f);
  return set;
}

const KernelSet& avx512bf16_emulated_kernels() {
  static const KernelSet set =
      extend_kernel_set(avx512vnni_emulated_kernels(), {TTLPRED_GEMM(BF16Pairs, bf16_gemm_8x32c2__avx512bf16_emulated)});
  return set;
}

}  // namespace ttlpred::engine::detail
