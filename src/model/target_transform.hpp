#pragma once
// How run time in seconds maps to the value the network regresses, and back. The network
// sees a standardized target z = (t(hours) - mean) / stddev, where t is one of:
//   Hours  t(h) = h                        (trains for the mean directly; RMSE's own scale)
//   Log1p  t(h) = log1p(h)                 (tames the heavy tail; predicts a median)
//   Power  t(h) = ((1+h)^lambda - 1)/lambda (Box-Cox on 1+h: lambda=1 is Hours shifted,
//                                           lambda->0 is Log1p; the blend between them)
// A model trained in a compressed space predicts roughly the conditional median there, not
// the mean that RMSE rewards. `smear` holds residual quantiles (in t-space) from held-out
// rows; inverting with them averages t^-1(pred + r) over the residual distribution (Duan's
// smearing estimator), which returns the mean instead of the median.
// With a residual base (model/residual_base.hpp) the network's output is the standardized
// target minus the row's offset_z; every caller adds offset_z back before decoding.
#include <cstdint>
#include <span>
#include <vector>

#include "model/model_input.hpp"
#include "model/quantile_heads.hpp"
#include "model/residual_base.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {

enum class TargetKind : std::uint8_t { Hours = 0, Log1p = 1, Power = 2 };

struct TargetTransform {
  TargetKind kind = TargetKind::Log1p;
  double lambda = 0.5;    // Power only
  double mean = 0.0;      // of t(hours) over the training rows
  double stddev = 1.0;    // of t(hours) over the training rows, > 0
  std::vector<float> smear;  // residual quantiles in t-space; empty = plain inverse
  // The history estimate the network's output is relative to; empty = none. Written in a
  // section of its own (model/model_file.hpp), not by write().
  ResidualBase residual;
  // The quantile heads after the network's mean output (model/quantile_heads.hpp); empty =
  // none. Written in a section of its own, not by write().
  QuantileHeads quantiles;

  // Forward transform (before standardization) and its inverse; hours >= 0.
  double to_t(double hours) const;
  double from_t(double t) const;
  // Standardized network target for a run time in seconds.
  float encode_seconds(double wall_s) const { return static_cast<float>((to_t(wall_s / 3600.0) - mean) / stddev); }
  // What the network's output is relative to for one encoded row: the standardized target of
  // the row's residual base, 0 without one. The decoded value is decode_seconds(net + offset).
  float offset_z(const float* dense, const std::uint32_t* cats) const;
  // Network output -> expected run time in seconds (smeared when `smear` is set), >= 0.
  double decode_seconds(float z) const;
  // Network output -> the plain inverse (a median for compressed targets), in seconds.
  double decode_median_seconds(float z) const;
  // The network's width: 1 + the number of quantile heads.
  std::size_t outputs() const { return 1 + quantiles.size(); }
  // One row's head outputs raw[0..K) (the network's outputs 1..K) with the row's offset_z ->
  // its K monotone quantiles of run time in seconds (>= 0), in q_s[0..K).
  void decode_quantile_seconds(const float* raw, float offset, double* q_s) const;
  // Only head h's quantile (the serving path needs one): the same value as q_s[h] above.
  double decode_quantile_head(const float* raw, float offset, std::size_t h) const;

  // Fills `smear` with `points` mid-quantiles of the t-space residuals t(actual) - t(pred)
  // of held-out rows (`pred_z` are network outputs). No-op for Hours when `points` is 0.
  void fit_smearing(std::span<const float> wall_s, std::span<const float> pred_z, std::size_t points = 64);

  void write(BinaryWriter& w) const;
  static TargetTransform read(BinaryReader& r);
};

// z[i] += t.offset_z(row first_row + i of x) for every i: what a network's raw outputs for
// those rows need before decoding (nothing without a residual base).
void add_offsets(const TargetTransform& t, const EncodedBatch& x, std::size_t first_row, std::span<float> z);

const char* target_kind_name(TargetKind k);
// "hours", "log1p", "power" (case-sensitive); throws Error naming the bad value.
TargetKind parse_target_kind(const std::string& name);

}  // namespace ttlpred
