// The AMX kernel set on the portable model of its instructions (amx_tiles_emulated.hpp) and
// of the AVX-512 ones (vec16_emulated.hpp), compiled without any instruction-set flag: the
// blocks of the real set, run on any host, so that every host's tests check them
// (CompileOptions::emulated).
#include "engine/arch/amx/amx_gemms.hpp"
#include "engine/arch/amx/amx_tiles_emulated.hpp"
#include "engine/arch/avx512/vec16_emulated.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {
namespace {
using G = AmxGemms<AmxEmulated, Vec16Emulated>;
constexpr GemmFn bf16_gemm_32x32c2__amx_emulated = G::gemm_bf16;
constexpr GemmFn qu8s8_gemm_32x32c4__amx_emulated = G::gemm_qs8;
}  // namespace

const KernelSet& avx512amx_emulated_kernels() {
  static const KernelSet set = extend_kernel_set(avx512bf16_emulated_kernels(),
                                                 {TTLPRED_GEMM(BF16Tiles, bf16_gemm_32x32c2__amx_emulated),
                                                  TTLPRED_GEMM(QS8Tiles, qu8s8_gemm_32x32c4__amx_emulated)});
  return set;
}

}  // namespace ttlpred::engine::detail
