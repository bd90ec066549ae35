#pragma once
// AdamW (Loshchilov & Hutter): Adam moments with decoupled weight decay, over one flat
// parameter array. Element-wise, so splitting it across threads changes nothing.
#include <cstdint>
#include <vector>

#include "util/thread_pool.hpp"

namespace ttlpred {

class AdamW {
 public:
  AdamW(std::size_t n, float beta1, float beta2, float eps) : m_(n, 0.f), v_(n, 0.f), b1_(beta1), b2_(beta2), eps_(eps) {}
  // decay[i] != 0 marks parameters that weight decay applies to.
  // All arrays hold the n values given to the constructor.
  void step(float* params, const float* grad, const std::uint8_t* decay, float lr, float weight_decay, ThreadPool& pool);
  std::uint64_t steps() const { return t_; }

 private:
  std::vector<float> m_, v_;
  float b1_, b2_, eps_;
  std::uint64_t t_ = 0;
};

}  // namespace ttlpred
