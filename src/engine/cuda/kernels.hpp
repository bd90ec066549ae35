#pragma once
// Launchers for the backend's own kernels (elementwise_kernels.cu, fused_mlp_kernel.cu).
// Buffers are raw device pointers; element types are named by ElemType so that the host
// code (compiled by g++) needs no CUDA half type. Every launcher checks its launch.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "model/mlp.hpp"

namespace ttlpred::cuda::detail {

enum class ElemType : std::uint8_t { F32, F16, I8 };

// Where the first layer's input comes from: dense features plus embedding rows.
struct GatherArgs {
  const float* dense = nullptr;         // batch x dense_inputs
  const std::uint32_t* cats = nullptr;  // batch x n_cat
  std::uint32_t dense_inputs = 0, n_cat = 0;
  const float* tables = nullptr;
  const std::uint32_t* table_offset = nullptr;
  const std::uint32_t* dim = nullptr;
  const std::uint32_t* cardinality = nullptr;
  const std::uint32_t* column_table = nullptr;      // per column past the dense ones
  const std::uint32_t* column_component = nullptr;
  std::uint32_t in = 0, in_pad = 0;     // first layer's width, and padded (zeros past `in`)
};

// How a value is stored as int8: s8 = clamp(rint(v * inv_scale), lo, hi), the affine grid
// of cuda_pack.hpp's Int8Grid (ignored for f16 / f32 outputs).
struct Int8Out {
  float inv_scale = 1.0f, lo = -127.0f, hi = 127.0f;
};

// X0[b][c] for c < in_pad, written as `out_type`. Category indices are in range: the host
// checked them (model/model_input.hpp) before the copy.
void launch_gather(const GatherArgs& g, std::size_t batch, ElemType out_type, Int8Out q, void* out,
                   cudaStream_t stream);

// Embeddings folded through layer 0 (cuda_pack.hpp's PackedEmbeddings::folded): the int8
// path's layer 0 adds folded[offset[j] + cats[b][j] * n_pad + n] for each j before its
// activation, as the CPU's fused plans do.
struct FoldedArgs {
  const float* folded = nullptr;
  const std::uint64_t* offset = nullptr;  // per embedding
  const std::uint32_t* cats = nullptr;    // batch x n_cat
  std::uint32_t n_cat = 0;                // 0: nothing folded
};

// int8 path without the fused cuBLASLt epilogue: acc (int32, batch x n_pad) ->
// act(acc * in_scale * w_scale[n] + bias[n] + folded) written as out_type (int8 by `q`, or f16/f32).
void launch_requant(const std::int32_t* acc, std::size_t batch, std::uint32_t n_pad, float in_scale,
                    const float* w_scale, const float* bias, const FoldedArgs& folded, Activation act,
                    ElemType out_type, Int8Out q, void* out, cudaStream_t stream);

// LeakyReLU in place (cuBLASLt has no LeakyReLU epilogue).
void launch_leaky_relu_inplace(void* x, ElemType type, std::size_t count, cudaStream_t stream);

// The last layer (narrow: out is 1 for a TTL model): y[b][o] = act(sum_k x[b][k] * w[o][k] +
// bias[o]), one warp per row, fp32 accumulate. x is batch x k_pad of x_type (int8 values are
// multiplied by x_scale), w is out x k_pad fp32.
void launch_final_layer(const void* x, ElemType x_type, float x_scale, std::size_t batch, std::uint32_t k_pad,
                        const float* w, const float* bias, std::uint32_t out, Activation act, float* y,
                        cudaStream_t stream);

// The whole MLP in one kernel (fp16 WMMA, fp32 accumulate). Hidden layers use fp16 weights
// (out_pad x in_pad) and fp32 bias; the last layer runs as in launch_final_layer.
inline constexpr int kFusedMaxHidden = 16;
inline constexpr int kFusedWarps = 8;
struct FusedLayer {
  const void* weight_f16 = nullptr;
  const float* bias = nullptr;
  std::uint32_t in_pad = 0, out_pad = 0;
  Activation act = Activation::Relu;
};
struct FusedArgs {
  GatherArgs gather;
  int hidden = 0;
  FusedLayer layers[kFusedMaxHidden];
  const float* final_w = nullptr;
  const float* final_bias = nullptr;
  std::uint32_t final_in_pad = 0, final_out = 0;
  Activation final_act = Activation::None;
  float* out = nullptr;
  std::uint32_t max_width_pad = 0;  // widest activation (first input included)
};
// 64, 128 or 256 when every hidden layer has that (padded) width and the first input is no
// wider: the kernel specialized for it applies; 0: the general kernel.
std::uint32_t fused_uniform_width(const FusedArgs& a);
// Shared memory one block needs for `row_tiles` tiles of 16 rows.
std::size_t fused_smem_bytes(std::uint32_t max_width_pad, int row_tiles);
// Raises the dynamic shared memory limit of the kernel for (row_tiles: 1, 2 or 4; width).
void fused_prepare(int row_tiles, std::uint32_t width, std::size_t smem_bytes);
void launch_fused(const FusedArgs& a, std::size_t batch, int row_tiles, std::uint32_t width, cudaStream_t stream);

}  // namespace ttlpred::cuda::detail
