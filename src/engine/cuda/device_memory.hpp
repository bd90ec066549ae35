#pragma once
// Owned device memory and owned page-locked host memory, for the CUDA backend's networks
// and lanes. Move-only; a zero size allocates nothing. Device memory starts zeroed (padding
// columns and rows a kernel reads before any copy must be 0).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "engine/cuda/cuda_check.hpp"

namespace ttlpred::cuda::detail {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) TTLPRED_CUDA_CHECK(cudaMalloc(&p_, bytes));
    if (bytes) TTLPRED_CUDA_CHECK(cudaMemset(p_, 0, bytes));
  }
  template <class T>
  static DeviceBuffer from(const std::vector<T>& v) {
    DeviceBuffer b(v.size() * sizeof(T));
    if (!v.empty()) TTLPRED_CUDA_CHECK(cudaMemcpy(b.p_, v.data(), b.bytes_, cudaMemcpyHostToDevice));
    return b;
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (p_) (void)cudaFree(p_);
  }
  void* get() const { return p_; }
  template <class T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// The graphs' host-side copies read and write only page-locked memory.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) {
    if (bytes) TTLPRED_CUDA_CHECK(cudaMallocHost(&p_, bytes));
    if (bytes) std::memset(p_, 0, bytes);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~PinnedBuffer() {
    if (p_) (void)cudaFreeHost(p_);
  }
  template <class T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
};

}  // namespace ttlpred::cuda::detail
