// The whole MLP in one launch, for small batches (tiny-cuda-nn style): each block takes
// 16 * ROW_TILES rows, keeps their activations in shared memory from the first layer's gather
// to the last layer's dot products, and runs the hidden layers on fp16 tensor cores (WMMA,
// fp32 accumulate). Eight warps split each layer's 16-wide output tiles.
//
// Weights are not staged in shared memory: at width 256 one 256x256 fp16 layer alone is
// 128 KiB and the 96-256-256-256 stack 304 KiB (over the 227 KiB an SM has), and within a
// block each weight tile is used once per row tile. Instead a warp loads each 16x16 weight
// fragment once from global memory (L2-resident after the first block) and applies it to all
// of its block's ROW_TILES row tiles from registers: the reuse shared memory would give.
#include <cuda_fp16.h>
#include <mma.h>

#include <string>

#include "engine/cuda/cuda_check.hpp"
#include "engine/cuda/device_math.cuh"
#include "engine/cuda/kernels.hpp"

namespace ttlpred::cuda::detail {
namespace {

namespace wmma = nvcuda::wmma;

// Row stride of the activation buffers, in halves: 8 halves (16 bytes) past the width so that
// consecutive rows start in different shared memory banks; rows stay 32-byte aligned for
// WMMA because 16 rows of (width + 8) halves are a multiple of 32 bytes.
__host__ __device__ constexpr std::uint32_t act_stride(std::uint32_t max_width_pad) { return max_width_pad + 8; }

// One hidden layer for this block: buf_in (rows x in_pad) -> buf_out (rows x out_pad).
// KT > 0 is in_pad / 16 (= out_pad / 16) known at compile time: the K loop unrolls fully and
// all of a tile's weight-fragment loads can be in flight at once. KT == 0: run-time widths.
template <int ROW_TILES, int KT>
__device__ __forceinline__ void hidden_layer(const FusedLayer& L, const __half* buf_in, __half* buf_out,
                                             std::uint32_t stride, float* scratch, int warp, int lane) {
  constexpr int kUnroll = KT > 0 ? KT : 4;  // run-time case: a few loads in flight (L2 latency)
  const __half* w = static_cast<const __half*>(L.weight_f16);
  const std::uint32_t n_tiles = KT > 0 ? KT : L.out_pad / 16;
  const std::uint32_t k_tiles = KT > 0 ? KT : L.in_pad / 16;
  const std::uint32_t ld = KT > 0 ? KT * 16 : L.in_pad;
  for (std::uint32_t nt = warp; nt < n_tiles; nt += kFusedWarps) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[ROW_TILES];
#pragma unroll
    for (int rt = 0; rt < ROW_TILES; ++rt) wmma::fill_fragment(acc[rt], 0.0f);
#pragma unroll kUnroll
    for (std::uint32_t kt = 0; kt < k_tiles; ++kt) {
      // B (k x n) column-major with ld = in_pad is exactly W (out x in) row-major.
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
      wmma::load_matrix_sync(b, w + static_cast<std::size_t>(nt) * 16 * ld + kt * 16, ld);
#pragma unroll
      for (int rt = 0; rt < ROW_TILES; ++rt) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> x;
        wmma::load_matrix_sync(x, buf_in + static_cast<std::size_t>(rt) * 16 * stride + kt * 16, stride);
        wmma::mma_sync(acc[rt], x, b, acc[rt]);
      }
    }
#pragma unroll
    for (int rt = 0; rt < ROW_TILES; ++rt) {
      // Fragment element order is opaque: go through shared memory to add bias per column.
      wmma::store_matrix_sync(scratch, acc[rt], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int r = e / 16, c = e % 16;
        const std::uint32_t n = nt * 16 + c;
        const float v = activate(scratch[e] + L.bias[n], L.act);
        buf_out[(static_cast<std::size_t>(rt) * 16 + r) * stride + n] = __float2half_rn(v);
      }
      __syncwarp();
    }
  }
}

// WIDTH > 0: every hidden layer is WIDTH wide (first input at most WIDTH): layers after the
// first take the unrolled path. WIDTH == 0: the general kernel, any widths.
template <int ROW_TILES, int WIDTH>
__global__ void __launch_bounds__(kFusedWarps * 32, 2) fused_mlp_kernel(FusedArgs a, std::size_t batch) {
  constexpr int kRows = 16 * ROW_TILES;
  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t stride = act_stride(WIDTH > 0 ? WIDTH : a.max_width_pad);
  __half* buf_in = reinterpret_cast<__half*>(smem);
  __half* buf_out = buf_in + static_cast<std::size_t>(kRows) * stride;
  float* scratch_all = reinterpret_cast<float*>(buf_out + static_cast<std::size_t>(kRows) * stride);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  float* scratch = scratch_all + warp * 256;
  const std::size_t row0 = static_cast<std::size_t>(blockIdx.x) * kRows;

  // First layer input, zero past the batch and in the padding.
  const std::uint32_t in0 = a.gather.in_pad;
  for (std::uint32_t i = threadIdx.x; i < kRows * in0; i += blockDim.x) {
    const std::uint32_t r = i / in0, c = i % in0;
    const std::size_t row = row0 + r;
    buf_in[r * stride + c] = __float2half_rn(row < batch ? gather_value(a.gather, row, c) : 0.0f);
  }
  __syncthreads();

  for (int l = 0; l < a.hidden; ++l) {
    if (WIDTH > 0 && l > 0)
      hidden_layer<ROW_TILES, WIDTH / 16>(a.layers[l], buf_in, buf_out, stride, scratch, warp, lane);
    else
      hidden_layer<ROW_TILES, 0>(a.layers[l], buf_in, buf_out, stride, scratch, warp, lane);
    __syncthreads();
    __half* t = buf_in;
    buf_in = buf_out;
    buf_out = t;
  }

  // Last layer: one warp per row, fp32 dot products with fp32 weights.
  for (int r = warp; r < kRows; r += kFusedWarps) {
    const std::size_t row = row0 + r;
    if (row >= batch) break;
    for (std::uint32_t o = 0; o < a.final_out; ++o) {
      float s = 0.0f;
      for (std::uint32_t k = lane; k < a.final_in_pad; k += 32)
        s += __half2float(buf_in[static_cast<std::size_t>(r) * stride + k]) *
             a.final_w[static_cast<std::size_t>(o) * a.final_in_pad + k];
      s = warp_sum(s);
      if (lane == 0) a.out[row * a.final_out + o] = activate(s + a.final_bias[o], a.final_act);
    }
  }
}

using FusedKernel = void (*)(FusedArgs, std::size_t);

template <int WIDTH>
FusedKernel pick_rows(int row_tiles) {
  switch (row_tiles) {
    case 1: return fused_mlp_kernel<1, WIDTH>;
    case 2: return fused_mlp_kernel<2, WIDTH>;
    case 4: return fused_mlp_kernel<4, WIDTH>;
    default: break;
  }
  throw Error("CUDA fused kernel: row tiles per block must be 1, 2 or 4, not " + std::to_string(row_tiles));
}

FusedKernel pick_kernel(int row_tiles, std::uint32_t width) {
  switch (width) {
    case 0: return pick_rows<0>(row_tiles);
    case 64: return pick_rows<64>(row_tiles);
    case 128: return pick_rows<128>(row_tiles);
    case 256: return pick_rows<256>(row_tiles);
    default: break;
  }
  throw Error("CUDA fused kernel: no specialization for width " + std::to_string(width));
}

}  // namespace

std::uint32_t fused_uniform_width(const FusedArgs& a) {
  if (a.hidden < 1) return 0;
  const std::uint32_t w = a.layers[0].out_pad;
  if (w != 64 && w != 128 && w != 256) return 0;
  if (a.gather.in_pad > w || a.final_in_pad != w || a.max_width_pad != w) return 0;
  for (int l = 0; l < a.hidden; ++l)
    if (a.layers[l].out_pad != w || (l > 0 && a.layers[l].in_pad != w)) return 0;
  return w;
}

std::size_t fused_smem_bytes(std::uint32_t max_width_pad, int row_tiles) {
  const std::size_t rows = 16 * static_cast<std::size_t>(row_tiles);
  return 2 * rows * act_stride(max_width_pad) * sizeof(__half) + kFusedWarps * 256 * sizeof(float);
}

void fused_prepare(int row_tiles, std::uint32_t width, std::size_t smem_bytes) {
  TTLPRED_CUDA_CHECK(cudaFuncSetAttribute(pick_kernel(row_tiles, width), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem_bytes)));
}

void launch_fused(const FusedArgs& a, std::size_t batch, int row_tiles, std::uint32_t width, cudaStream_t stream) {
  if (batch == 0) return;
  const FusedKernel kernel = pick_kernel(row_tiles, width);
  const std::size_t rows = 16 * static_cast<std::size_t>(row_tiles);
  const std::size_t blocks = (batch + rows - 1) / rows;
  kernel<<<static_cast<unsigned>(blocks), kFusedWarps * 32, fused_smem_bytes(a.max_width_pad, row_tiles), stream>>>(
      a, batch);
  TTLPRED_CUDA_CHECK(cudaGetLastError());
}

}  // namespace ttlpred::cuda::detail
