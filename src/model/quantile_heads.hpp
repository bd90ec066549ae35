#pragma once
// The network's distributional outputs. A model with quantile heads has a last layer of
// 1 + K outputs: output 0 is the expected run time as before (target_transform.hpp), and
// outputs 1..K are K quantiles of the same standardized target at ascending `levels`, made
// monotone by construction:
//   q_1 = o_1,   q_k = q_{k-1} + softplus(o_k)   (k = 2..K)
// so no pair of quantiles ever crosses, whatever the weights (and the engine keeps a plain
// linear last layer on every variant: the cumulative softplus runs after it, in float).
// Quantiles are equivariant under the monotone target transform, so a head decodes to
// seconds through the plain inverse (TargetTransform::decode_median_seconds), residual
// offset added as for output 0.
//
// Training (train/mlp_net.hpp) adds the pinball loss of every head to the mean's squared
// error; a censored outcome (only a lower bound y on the run time is known) counts only
// when a quantile lies below y: its true pinball loss is at least tau * (y - q) there and
// unknown above.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/binary_io.hpp"

namespace ttlpred {

// The most heads a model may carry: bounds what a corrupted file can ask for and what the
// serving path keeps per job on the stack.
inline constexpr std::size_t kMaxQuantileHeads = 16;
// The heads `train`, `backtest` and `pipeline` give a network unless told otherwise: the
// median and the upper tail the safe TTL is read from at alpha 0.5 % - 10 %
// (docs/ACCURACY.md, "Quantile heads").
inline constexpr const char* kDefaultQuantileLevels = "0.5,0.9,0.95,0.98,0.99,0.995";

struct QuantileHeads {
  std::vector<float> levels;  // ascending, each in (0, 1); empty: a mean-only model

  std::size_t size() const { return levels.size(); }
  bool empty() const { return levels.empty(); }
  // The index of the head at `level` (exactly, within 1e-6), or -1.
  int index_of(double level) const;

  // Throws Error naming `what` unless the levels are ascending, distinct, in (0, 1) and at
  // most kMaxQuantileHeads.
  void check(const std::string& what) const;
  void write(BinaryWriter& w) const;
  static QuantileHeads read(BinaryReader& r);
};

// "0.5,0.9,0.99" -> levels; throws Error naming the bad value (and the rules of check()).
QuantileHeads parse_quantile_levels(const std::string& text);
std::string quantile_levels_text(const QuantileHeads& heads);

// log(1 + e^x) without overflow, and its derivative (the logistic function).
template <class T>
inline T softplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
template <class T>
inline T logistic(T x) {
  return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
}

// raw[0..k): the network's head outputs (its outputs 1..k); q[0..k): the monotone quantiles.
template <class T>
inline void decode_quantile_heads(const T* raw, std::size_t k, T offset, T* q) {
  if (k == 0) return;
  q[0] = raw[0] + offset;
  for (std::size_t j = 1; j < k; ++j) q[j] = q[j - 1] + softplus(raw[j]);
}

// The pinball loss of quantile q at level tau for target y: tau (y - q) when y >= q, else
// (1 - tau) (q - y). With `lower_bound` (y is only a lower bound on the target) it is
// tau (y - q) when q < y and 0 otherwise.
template <class T>
inline T pinball_loss(T y, T q, T tau, bool lower_bound) {
  const T d = y - q;
  if (d >= T(0)) return tau * d;
  return lower_bound ? T(0) : (tau - T(1)) * d;
}
// d pinball_loss / d q.
template <class T>
inline T pinball_gradient(T y, T q, T tau, bool lower_bound) {
  if (y > q) return -tau;
  return lower_bound ? T(0) : T(1) - tau;
}

// The sum over heads of the pinball losses of one row, and (when `grad_raw` is not null) its
// gradient with respect to the raw head outputs raw[0..k), through the cumulative softplus.
template <class T>
T quantile_heads_loss(const T* raw, std::span<const float> levels, T y, bool lower_bound, T* grad_raw) {
  const std::size_t k = levels.size();
  T q[kMaxQuantileHeads], g[kMaxQuantileHeads];
  decode_quantile_heads(raw, k, T(0), q);
  T loss = 0;
  for (std::size_t j = 0; j < k; ++j) {
    loss += pinball_loss(y, q[j], static_cast<T>(levels[j]), lower_bound);
    g[j] = pinball_gradient(y, q[j], static_cast<T>(levels[j]), lower_bound);
  }
  if (grad_raw) {
    // q_j depends on raw_0 with slope 1 and on raw_i (1 <= i <= j) with slope logistic(raw_i).
    T tail = 0;  // sum of g[j] for j >= i
    for (std::size_t i = k; i-- > 0;) {
      tail += g[i];
      grad_raw[i] = i == 0 ? tail : tail * logistic(raw[i]);
    }
  }
  return loss;
}

}  // namespace ttlpred
