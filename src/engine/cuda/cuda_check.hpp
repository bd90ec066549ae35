#pragma once
// Every CUDA runtime and cuBLASLt call goes through these: a failure becomes a ttlpred::Error
// naming the call, the CUDA error and where, so that a one-shot GPU run says what broke.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "util/error.hpp"

namespace ttlpred::cuda::detail {

[[noreturn]] inline void throw_cuda(const char* call, cudaError_t e, const char* file, int line) {
  throw Error(std::string("CUDA: ") + call + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
              ") at " + file + ":" + std::to_string(line));
}
[[noreturn]] inline void throw_cublas(const char* call, cublasStatus_t s, const char* file, int line) {
  throw Error(std::string("cuBLASLt: ") + call + " failed: " + cublasLtGetStatusName(s) + " (" +
              cublasLtGetStatusString(s) + ") at " + file + ":" + std::to_string(line));
}

}  // namespace ttlpred::cuda::detail

#define TTLPRED_CUDA_CHECK(call)                                                           \
  do {                                                                                     \
    const cudaError_t ttlpred_cuda_err_ = (call);                                          \
    if (ttlpred_cuda_err_ != cudaSuccess)                                                  \
      ::ttlpred::cuda::detail::throw_cuda(#call, ttlpred_cuda_err_, __FILE__, __LINE__);   \
  } while (0)

#define TTLPRED_CUBLAS_CHECK(call)                                                         \
  do {                                                                                     \
    const cublasStatus_t ttlpred_cublas_st_ = (call);                                      \
    if (ttlpred_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                       \
      ::ttlpred::cuda::detail::throw_cublas(#call, ttlpred_cublas_st_, __FILE__, __LINE__); \
  } while (0)
