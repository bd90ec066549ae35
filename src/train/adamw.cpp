#include "train/adamw.hpp"

#include <algorithm>
#include <cmath>

namespace ttlpred {

void AdamW::step(float* p, const float* g, const std::uint8_t* d, float lr, float weight_decay, ThreadPool& pool) {
  ++t_;
  const float c1 = 1.0f / (1.0f - static_cast<float>(std::pow(static_cast<double>(b1_), static_cast<double>(t_))));
  const float c2 = 1.0f / (1.0f - static_cast<float>(std::pow(static_cast<double>(b2_), static_cast<double>(t_))));
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(m_.size());
  float* m = m_.data();
  float* v = v_.data();
  const float b1 = b1_, b2 = b2_, eps = eps_;
  constexpr std::ptrdiff_t kBlock = 32768;
  const std::size_t blocks = static_cast<std::size_t>((n + kBlock - 1) / kBlock);
  pool.run(blocks, [&](std::size_t blk, int) {
    const std::ptrdiff_t end = std::min<std::ptrdiff_t>(n, static_cast<std::ptrdiff_t>(blk + 1) * kBlock);
    for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(blk) * kBlock; i < end; ++i) {
      m[i] = b1 * m[i] + (1.0f - b1) * g[i];
      v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
      const float upd = (m[i] * c1) / (std::sqrt(v[i] * c2) + eps);
      p[i] -= lr * (upd + (d[i] ? weight_decay * p[i] : 0.0f));
    }
  });
}

}  // namespace ttlpred
