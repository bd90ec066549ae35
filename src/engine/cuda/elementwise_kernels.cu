// The backend's small kernels: first-layer gather (embeddings folded in on the device), int8
// requantization, LeakyReLU, and the narrow last layer. All are memory bound; each thread
// handles one element (or one warp one row), in grid-stride loops.
#include <cuda_fp16.h>

#include <algorithm>

#include "engine/cuda/cuda_check.hpp"
#include "engine/cuda/device_math.cuh"
#include "engine/cuda/kernels.hpp"

namespace ttlpred::cuda::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::size_t>(b, 1, std::size_t{1} << 20));
}

__global__ void gather_kernel(GatherArgs g, std::size_t batch, ElemType out_type, Int8Out q, void* out) {
  const std::size_t total = batch * g.in_pad;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t row = i / g.in_pad;
    const std::uint32_t col = static_cast<std::uint32_t>(i % g.in_pad);
    const float v = gather_value(g, row, col);
    store_as(out, i, out_type, v, q);
  }
}

__global__ void requant_kernel(const std::int32_t* acc, std::size_t batch, std::uint32_t n_pad, float in_scale,
                               const float* w_scale, const float* bias, FoldedArgs f, Activation act,
                               ElemType out_type, Int8Out q, void* out) {
  const std::size_t total = batch * n_pad;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t n = static_cast<std::uint32_t>(i % n_pad);
    const std::size_t row = i / n_pad;
    float v = static_cast<float>(acc[i]) * (in_scale * w_scale[n]) + bias[n];
    for (std::uint32_t j = 0; j < f.n_cat; ++j)
      v += f.folded[f.offset[j] + static_cast<std::size_t>(f.cats[row * f.n_cat + j]) * n_pad + n];
    store_as(out, i, out_type, activate(v, act), q);
  }
}

__global__ void leaky_kernel(void* x, ElemType type, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (type == ElemType::F32) {
      float* p = static_cast<float*>(x);
      p[i] = activate(p[i], Activation::LeakyRelu);
    } else {
      __half* p = static_cast<__half*>(x);
      p[i] = __float2half_rn(activate(__half2float(p[i]), Activation::LeakyRelu));
    }
  }
}

__global__ void final_layer_kernel(const void* x, ElemType x_type, float x_scale, std::size_t batch,
                                   std::uint32_t k_pad, const float* w, const float* bias, std::uint32_t out,
                                   Activation act, float* y) {
  const int lane = threadIdx.x & 31;
  const std::size_t warps_per_grid = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  for (std::size_t row = blockIdx.x * static_cast<std::size_t>(blockDim.x / 32) + threadIdx.x / 32; row < batch;
       row += warps_per_grid) {
    for (std::uint32_t o = 0; o < out; ++o) {
      float s = 0.0f;
      for (std::uint32_t k = lane; k < k_pad; k += 32)
        s += load_as(x, row * k_pad + k, x_type, x_scale) * w[static_cast<std::size_t>(o) * k_pad + k];
      s = warp_sum(s);
      if (lane == 0) y[row * out + o] = activate(s + bias[o], act);
    }
  }
}

}  // namespace

void launch_gather(const GatherArgs& g, std::size_t batch, ElemType out_type, Int8Out q, void* out,
                   cudaStream_t stream) {
  const std::size_t n = batch * g.in_pad;
  gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(g, batch, out_type, q, out);
  TTLPRED_CUDA_CHECK(cudaGetLastError());
}

void launch_requant(const std::int32_t* acc, std::size_t batch, std::uint32_t n_pad, float in_scale,
                    const float* w_scale, const float* bias, const FoldedArgs& folded, Activation act,
                    ElemType out_type, Int8Out q, void* out, cudaStream_t stream) {
  const std::size_t n = batch * n_pad;
  requant_kernel<<<blocks_for(n), kThreads, 0, stream>>>(acc, batch, n_pad, in_scale, w_scale, bias, folded, act,
                                                        out_type, q, out);
  TTLPRED_CUDA_CHECK(cudaGetLastError());
}

void launch_leaky_relu_inplace(void* x, ElemType type, std::size_t count, cudaStream_t stream) {
  leaky_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, type, count);
  TTLPRED_CUDA_CHECK(cudaGetLastError());
}

void launch_final_layer(const void* x, ElemType x_type, float x_scale, std::size_t batch, std::uint32_t k_pad,
                        const float* w, const float* bias, std::uint32_t out, Activation act, float* y,
                        cudaStream_t stream) {
  const std::size_t rows_per_block = kThreads / 32;
  const std::size_t blocks = std::clamp<std::size_t>((batch + rows_per_block - 1) / rows_per_block, 1,
                                                     std::size_t{1} << 20);
  final_layer_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, x_type, x_scale, batch, k_pad, w,
                                                                             bias, out, act, y);
  TTLPRED_CUDA_CHECK(cudaGetLastError());
}

}  // namespace ttlpred::cuda::detail
