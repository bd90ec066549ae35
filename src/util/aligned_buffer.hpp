#pragma once
// Cache-line aligned, zero-filled storage, with one more line of zeros past the end: the
// engine's packed weights (kernels use unaligned loads, but aligned panels never straddle a
// line, and a vector load that runs past the last panel reads zeros).
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace ttlpred {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes) : size_(bytes) {
    const std::size_t rounded = (bytes + 63) / 64 * 64 + 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, rounded);
    data_.reset(static_cast<std::byte*>(p));
  }
  template <typename T>
  T* as() { return reinterpret_cast<T*>(data_.get()); }
  const void* get() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t size_ = 0;
};

}  // namespace ttlpred
