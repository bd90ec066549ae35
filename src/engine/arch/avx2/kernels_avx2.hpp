#pragma once
// Entry points of the AVX2 kernel files, gathered into one KernelSet by kernels_avx2.cpp.
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {

void gemm_f32_avx2(const PackedLayer& L, const LayerCall& c);
void gemm_f16_avx2(const PackedLayer& L, const LayerCall& c);
void gemm_bf16_avx2(const PackedLayer& L, const LayerCall& c);
void gemm_qs8_avx2(const PackedLayer& L, const LayerCall& c);
void gemm_f16_sp24_avx2(const PackedLayer& L, const LayerCall& c);
void gemm_qs8_sp24_avx2(const PackedLayer& L, const LayerCall& c);
void quantize_dynamic_avx2(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                           std::size_t q_stride, std::size_t cols_padded, float qmax, float* row_scale, float* row_zp);
void quantize_static_avx2(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                          std::size_t q_stride, std::size_t cols_padded, float inv_scale, float zp, float qmax);

}  // namespace ttlpred::engine::detail
