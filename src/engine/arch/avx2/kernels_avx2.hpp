#pragma once
// Entry points of the AVX2 kernel files, gathered into one KernelSet by kernels_avx2.cpp.
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {

void f32_gemm_4x16__avx2_fma(const PackedLayer& L, const LayerCall& c);
void f16_gemm_4x16__avx2_f16c(const PackedLayer& L, const LayerCall& c);
void bf16_gemm_4x16__avx2_fma(const PackedLayer& L, const LayerCall& c);
void qu8s8_gemm_4x16c4__avx2(const PackedLayer& L, const LayerCall& c);
void f16_sp24_gemm_4x16__avx2_f16c(const PackedLayer& L, const LayerCall& c);
void qu8s8_sp24_gemm_4x16c8__avx2(const PackedLayer& L, const LayerCall& c);
void quantize_dynamic_avx2(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                           std::size_t q_stride, std::size_t cols_padded, float qmax, float* row_scale, float* row_zp);
void quantize_static_avx2(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                          std::size_t q_stride, std::size_t cols_padded, float inv_scale, float zp, float qmax);

}  // namespace ttlpred::engine::detail
