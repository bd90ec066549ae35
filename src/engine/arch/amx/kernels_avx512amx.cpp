// The AMX kernel set on the instructions (amx_gemms.hpp says what the GEMMs do and why):
// the AVX-512 BF16 set with the bf16 and int8 GEMMs on AMX tiles.
#include "engine/arch/amx/amx_gemms.hpp"
#include "engine/arch/amx/amx_tiles_native.hpp"
#include "engine/arch/avx512/vec16_native.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {
namespace {
using G = AmxGemms<AmxNative, Vec16Native>;
constexpr GemmFn bf16_gemm_32x32c2__amx = G::gemm_bf16;
constexpr GemmFn qu8s8_gemm_32x32c4__amx = G::gemm_qs8;
}  // namespace

const KernelSet& avx512amx_kernels() {
  static const KernelSet set = extend_kernel_set(
      avx512bf16_kernels(), {TTLPRED_GEMM(BF16Tiles, bf16_gemm_32x32c2__amx), TTLPRED_GEMM(QS8Tiles, qu8s8_gemm_32x32c4__amx)});
  return set;
}

}  // namespace ttlpred::engine::detail
