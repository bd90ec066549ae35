// The AVX-512 BF16 kernel set: the VNNI set with the bf16 variant on vdpbf16ps, which
// multiplies pairs of bf16 weights by pairs of bf16 activations (the plan packs BF16Pairs
// for this ISA); the other float formats keep the AVX-512 F tiles.
#include "engine/arch/avx512/tiles_avx512.hpp"
#include "engine/arch/avx512/vec16_native.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {
namespace {
constexpr GemmFn bf16_gemm_8x32c2__avx512bf16 = Avx512Tiles<Vec16Native>::gemm_bf16_pairs;
}  // namespace

const KernelSet& avx512bf16_kernels() {
  static const KernelSet set =
      extend_kernel_set(avx512vnni_kernels(), {TTLPRED_GEMM(BF16Pairs, bf16_gemm_8x32c2__avx512bf16)});
  return set;
}

}  // namespace ttlpred::engine::detail
