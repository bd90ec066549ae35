#pragma once
// Each job's own safe TTL from the network's quantile heads (model/quantile_heads.hpp):
// one-sided conformalized quantile regression (Romano, Patterson and Candes 2019) in log
// space. For the head h the rule is built on, a job with expected wall time E, head quantile
// Q and request R gets
//   TTL(a) = min(R, max(E, Q * exp(m(a))))
// where m(a) is the conformal quantile at level 1 - a of the calibration jobs' scores
//   s = log(w / Q)   for a job the TTL could kill (E < w, and w <= R when it has a request),
//   s = -inf         otherwise (w <= E: no TTL of the rule kills it; w > R: its own request does)
// so that, for exchangeable jobs, at most a of them are killed, and a job's TTL follows its
// own predicted spread instead of one global correction of its mean. It never lies below the
// expected wall time, nor above the request.
//
// The head: the one whose calibrated TTL at the model's alpha is shortest on the calibration
// jobs (a choice among a few heads on the same rows: the guarantee loses at most that
// choice's optimism). Groups (job type, queue) with at least min_group_rows scores get a
// margin of their own, shrunk toward the global one by n / (n + group_shrink_rows): Mondrian
// calibration where data suffice.
//
// Cold starts (Prediction::cold: a job of a production with no finished job yet, or, where
// jobs carry no production, of a user with fewer than kColdStartOutcomes) get the larger of
// the global margin and their own stratum's, whose conformal quantile is the stratum's largest
// score while it is too small for the level. Nothing before a new production's first outcome
// tells its cost, so the heads' spread, learnt on warm jobs, is too narrow there: on the
// synthetic trace with a new heavy user, two new MC productions submitted whole lost 72 of 82
// and 36 of 54 jobs under one global margin (docs/ACCURACY.md).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/residual_quantiles.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {

// Finished jobs of its user below which a job without a production counts as a cold start
// (the simple rule's own threshold for a user q99, pipeline/simple_rule.hpp).
inline constexpr std::uint64_t kColdStartOutcomes = 5;

struct QuantileTtlOptions {
  double head_alpha = 0.01;  // the kill rate at which the head is chosen
  std::size_t min_group_rows = 1000;
  double group_shrink_rows = 1000;
  std::size_t max_stored_global = 16384;
  std::size_t max_stored_group = 4096;
};

struct QuantileTtlCalibration {
  float level = 0;        // the level of the head the rule is built on; 0: not calibrated
  std::uint32_t head = 0; // its index among the model's heads
  ResidualQuantiles global;
  std::vector<std::uint32_t> group_ids;       // ascending
  std::vector<ResidualQuantiles> group_scores;  // parallel to group_ids
  ResidualQuantiles cold;  // the cold starts' scores (n = 0: none among the calibration jobs)
  std::uint64_t min_group_rows = 1000;
  double group_shrink_rows = 1000;

  bool empty() const { return global.n == 0; }
  // m(alpha) for a job of `group` (the static calibration's group id, kNoGroup for none), a
  // cold start or not.
  double log_margin(std::uint32_t group, double alpha, bool cold = false) const;
  // max(expected_s, upper_s * exp(m(alpha))); the caller caps it at the request. Throws Error
  // for alpha outside (0, 1) or an empty calibration.
  double safe_ttl(double expected_s, double upper_s, std::uint32_t group, double alpha, bool cold = false) const;

  void write(BinaryWriter& w) const;
  static QuantileTtlCalibration read(BinaryReader& r, std::size_t heads);
};

// The score of one calibration job (see above); -inf where no TTL of the rule kills it.
double quantile_ttl_score(double wall_s, double expected_s, double upper_s, double requested_s);

// Calibrates on held-out jobs: wall_s, expected_s (bounded as served), requested_s (<= 0 or
// NaN: none), quantiles_s (rows x heads, seconds, the heads in the model's order), group (empty
// or one id per row), cold (empty or one flag per row: a cold start). The head is chosen at
// options.head_alpha. Throws Error on sizes that
// differ, no row, or no head.
QuantileTtlCalibration calibrate_quantile_ttl(std::span<const float> wall_s, std::span<const float> expected_s,
                                              std::span<const float> requested_s, std::span<const float> quantiles_s,
                                              std::size_t heads, std::span<const float> levels,
                                              std::span<const std::uint32_t> group,
                                              const QuantileTtlOptions& options = {},
                                              std::span<const std::uint8_t> cold = {});

}  // namespace ttlpred
