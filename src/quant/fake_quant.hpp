#pragma once
// The int8 arithmetic of the `int8-static` variant, in float: the one definition both
// backends' packers (engine/pack.cpp, engine/cuda/cuda_pack.cpp) quantize weights and
// activations with and quantization-aware training (train/compression.hpp) simulates, so
// that a QAT model, its CPU plan and its GPU plan compute on the same grid.
//
// Weights: symmetric per output channel, scale = max|w| / 127 over the channel's quantized
// inputs (1 for an all-zero channel), q = clamp(nearbyint(w / scale), -127, 127).
// Activations: affine u8 per tensor, real = scale * (q - zero_point), q in [0, qmax], with
// scale and zero point from quant_params(range, qmax) and q = clamp(nearbyint(x * (1 /
// scale)) + zero_point, 0, qmax), exactly as the kernels round.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "quant/activation_ranges.hpp"

namespace ttlpred::quant {

inline constexpr float kWeightQmax = 127.0f;

inline float weight_scale(const float* row, std::uint32_t n) {
  float amax = 0.0f;
  for (std::uint32_t k = 0; k < n; ++k) amax = std::max(amax, std::fabs(row[k]));
  return amax > 0.0f ? amax / kWeightQmax : 1.0f;
}

inline std::int8_t quantize_weight(float w, float scale) {
  return static_cast<std::int8_t>(std::clamp(std::nearbyint(w / scale), -kWeightQmax, kWeightQmax));
}

// Each of the `out` rows of an out x ld row-major matrix, on its first `in` columns:
// q[o * q_ld + k] = quantize_weight(w[o * ld + k], scale[o]) with scale[o] = weight_scale of
// that row's `in` values (layer 0 of a plan that folds its embeddings quantizes only its
// dense columns). q's other entries are left as they are.
inline void quantize_weight_rows(const float* w, std::size_t ld, std::uint32_t out, std::uint32_t in,
                                 std::int8_t* q, std::size_t q_ld, float* scale) {
  for (std::uint32_t o = 0; o < out; ++o) {
    const float* row = w + std::size_t{o} * ld;
    const float s = weight_scale(row, in);
    scale[o] = s;
    for (std::uint32_t k = 0; k < in; ++k) q[std::size_t{o} * q_ld + k] = quantize_weight(row[k], s);
  }
}

// The largest u8 activation code a plan uses: the table's own grid when it names one
// (quantization-aware training trains on one grid, and every backend must run exactly it),
// else the most the backend's kernels take; never more than they take.
inline float plan_act_qmax(const ActivationRanges& table, float backend_qmax) {
  return table.act_qmax > 0.0f ? std::min(table.act_qmax, backend_qmax) : backend_qmax;
}

// row[k] <- the value an int8 plan multiplies with, for k < n.
inline void fake_quantize_weight_row(float* row, std::uint32_t n) {
  const float s = weight_scale(row, n);
  for (std::uint32_t k = 0; k < n; ++k) row[k] = s * static_cast<float>(quantize_weight(row[k], s));
}

struct ActFakeQuant {
  float scale = 1.0f, inv_scale = 1.0f, zero_point = 0.0f, qmax = 255.0f;

  static ActFakeQuant make(ActivationRange range, float qmax) {
    const QuantParams p = quant_params(range, qmax);
    return {p.scale, 1.0f / p.scale, p.zero_point, qmax};
  }
  float code(float x) const { return std::clamp(std::nearbyint(x * inv_scale) + zero_point, 0.0f, qmax); }
  float operator()(float x) const { return scale * (code(x) - zero_point); }
  // The straight-through estimator passes the gradient where x is not clipped.
  bool passes(float x) const {
    const float q = std::nearbyint(x * inv_scale) + zero_point;
    return q >= 0.0f && q <= qmax;
  }
};

}  // namespace ttlpred::quant
