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
}  // namespace

const KernelSet& avx512_emulated_kernels() {
  static const KernelSet set = {
      {T::gemm_f32, T::gemm_f16, T::gemm_bf16, T::gemm_qs8<T::DotBw>, T::gemm_f16_sp24, T::gemm_qs8_sp24<T::DotBw>},
      {"f32_gemm_8x32__avx512f_emulated", "f16_gemm_8x32__avx512f_emulated", "bf16_gemm_8x32__avx512f_emulated",
       "qu8s8_gemm_8x32c4__avx512bw_emulated", "f16_sp24_gemm_8x32__avx512f_emulated",
       "qu8s8_sp24_gemm_8x32c8__avx512bw_emulated"},
      scalar_kernels().quantize_dynamic,
      scalar_kernels().quantize_static,
      127.0f,
  };
  return set;
}

const KernelSet& avx512vnni_emulated_kernels() {
  const KernelSet& base = avx512_emulated_kernels();
  static const KernelSet set = {
      {base.gemm[0], base.gemm[1], base.gemm[2], T::gemm_qs8<DotVnni>, base.gemm[4], T::gemm_qs8_sp24<DotVnni>},
      {base.gemm_name[0], base.gemm_name[1], base.gemm_name[2], "qu8s8_gemm_8x32c4__avx512vnni_emulated",
       base.gemm_name[4], "qu8s8_sp24_gemm_8x32c8__avx512vnni_emulated"},
      base.quantize_dynamic,
      base.quantize_static,
      255.0f,
  };
  return set;
}

const KernelSet& avx512bf16_emulated_kernels() {
  const KernelSet& base = avx512vnni_emulated_kernels();
  static const KernelSet set = [&] {
    KernelSet s = base;
    s.gemm[static_cast<int>(WeightFormat::BF16Pairs)] = T::gemm_bf16_pairs;
    s.gemm_name[static_cast<int>(WeightFormat::BF16Pairs)] = "bf16_gemm_8x32c2__avx512bf16_emulated";
    return s;
  }();
  return set;
}

}  // namespace ttlpred::engine::detail
