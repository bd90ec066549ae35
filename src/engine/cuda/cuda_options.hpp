#pragma once
// How compile_cuda builds a plan: the device, the largest batch, the int8 activation ranges
// and the switches between the forms of a variant. Plain C++ (no CUDA headers), in a header
// of its own so that the networks (cuda_network.hpp) take it without the plan built on them.
#include <cstddef>

#include "quant/activation_ranges.hpp"

namespace ttlpred::cuda {

struct CudaOptions {
  int device = 0;
  // Largest batch one graph replay handles; predict() splits larger batches into chunks.
  std::size_t max_batch = 65536;
  // int8-static only: the activation ranges (a model file's int8 calibration, or
  // quant::calibrate); required for int8-static, ignored otherwise. Not kept after compile.
  const quant::ActivationRanges* calibration = nullptr;
  // int8-static only: run each int8 matmul to int32 and requantize in a kernel of ours, instead
  // of cuBLASLt's int8-out epilogue (per-channel alpha vector, bias, ReLU). The epilogue form
  // is the default and falls back to this by itself where cuBLASLt has no algorithm for it.
  bool int8_requant_kernel = false;
  // fp16 only: the whole MLP in one kernel (fp16 WMMA) instead of a cuBLASLt matmul per layer.
  bool fp16_fused_kernel = false;
  // The fused kernel only: rows per thread block (16, 32 or 64); 0 picks by batch size.
  int fused_rows_per_block = 0;
};

}  // namespace ttlpred::cuda
