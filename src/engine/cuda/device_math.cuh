#pragma once
// Device helpers shared by the elementwise kernels and the fused kernel.
#include <cuda_fp16.h>

#include <cstdint>

#include "engine/cuda/kernels.hpp"

namespace ttlpred::cuda::detail {

__device__ __forceinline__ float activate(float x, Activation act) {
  if (act == Activation::Relu) return x > 0.0f ? x : 0.0f;
  if (act == Activation::LeakyRelu) return x > 0.0f ? x : x * kLeakyReluSlope;
  return x;
}

__device__ __forceinline__ float warp_sum(float s) {
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;
}

// First-layer input value (row, col): a dense feature, an embedding component (an index past
// the table reads the OOV row 0), or 0 in the padding.
__device__ __forceinline__ float gather_value(const GatherArgs& g, std::size_t row, std::uint32_t col) {
  if (col < g.dense_inputs) return g.dense[row * g.dense_inputs + col];
  if (col >= g.in) return 0.0f;
  const std::uint32_t j = g.column_table[col - g.dense_inputs];
  std::uint32_t idx = g.cats[row * g.n_cat + j];
  if (idx >= g.cardinality[j]) idx = 0;
  return g.tables[g.table_offset[j] + static_cast<std::size_t>(idx) * g.dim[j] + g.column_component[col - g.dense_inputs]];
}

__device__ __forceinline__ void store_as(void* out, std::size_t i, ElemType t, float v, float inv_scale) {
  if (t == ElemType::F32) {
    static_cast<float*>(out)[i] = v;
  } else if (t == ElemType::F16) {
    static_cast<__half*>(out)[i] = __float2half_rn(v);
  } else {
    const float q = fminf(fmaxf(rintf(v * inv_scale), -127.0f), 127.0f);
    static_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(q);
  }
}

__device__ __forceinline__ float load_as(const void* x, std::size_t i, ElemType t, float scale) {
  if (t == ElemType::F32) return static_cast<const float*>(x)[i];
  if (t == ElemType::F16) return __half2float(static_cast<const __half*>(x)[i]);
  return static_cast<float>(static_cast<const std::int8_t*>(x)[i]) * scale;
}

}  // namespace ttlpred::cuda::detail
