#pragma once
// Device helpers shared by the elementwise kernels and the fused kernel.
#include <cuda_fp16.h>

#include <cstdint>

#include "engine/cuda/kernels.hpp"

namespace ttlpred::cuda::detail {

__device__ __forceinline__ float warp_sum(float s) {
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;
}

// First-layer input value (row, col): a dense feature, an embedding component, or 0 in the
// padding. Indices were checked on the host (model/model_input.hpp): one rule, an error.
__device__ __forceinline__ float gather_value(const GatherArgs& g, std::size_t row, std::uint32_t col) {
  if (col < g.dense_inputs) return g.dense[row * g.dense_inputs + col];
  if (col >= g.in) return 0.0f;
  const std::uint32_t j = g.column_table[col - g.dense_inputs];
  const std::uint32_t idx = g.cats[row * g.n_cat + j];
  return g.tables[g.table_offset[j] + static_cast<std::size_t>(idx) * g.dim[j] + g.column_component[col - g.dense_inputs]];
}

__device__ __forceinline__ void store_as(void* out, std::size_t i, ElemType t, float v, Int8Out q) {
  if (t == ElemType::F32) {
    static_cast<float*>(out)[i] = v;
  } else if (t == ElemType::F16) {
    static_cast<__half*>(out)[i] = __float2half_rn(v);
  } else {
    const float s8 = fminf(fmaxf(rintf(v * q.inv_scale), q.lo), q.hi);
    static_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(s8);
  }
}

__device__ __forceinline__ float load_as(const void* x, std::size_t i, ElemType t, float scale) {
  if (t == ElemType::F32) return static_cast<const float*>(x)[i];
  if (t == ElemType::F16) return __half2float(static_cast<const __half*>(x)[i]);
  return static_cast<float>(static_cast<const std::int8_t*>(x)[i]) * scale;
}

}  // namespace ttlpred::cuda::detail
