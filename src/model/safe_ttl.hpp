#pragma once
// Safe TTLs by split-conformal calibration. A point prediction is no TTL (about half of the
// jobs would outrun it); instead we keep the log-ratio residuals r = log(wall) - log(pred)
// of a chronological calibration tail that the model never trained on, and hand out
//   safe_ttl(pred, group, alpha) = pred * exp(q),  q = the ceil((n+1)(1-alpha))-th smallest r
// which, for exchangeable jobs, is exceeded with probability at most alpha. Residuals may be
// kept per group (job type, queue): groups with fewer than `min_group_rows` calibration rows
// use the global residuals. We store sorted order statistics (all of them up to a cap, an
// evenly spaced subset beyond it, rounded up) so that any alpha can be asked for later.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "model/request_aware_ttl.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {

inline constexpr std::uint32_t kNoGroup = std::numeric_limits<std::uint32_t>::max();

struct SafeTtlOptions {
  std::size_t min_group_rows = 200;     // fewer -> the group falls back to the global residuals
  std::size_t max_stored_global = 16384;  // order statistics kept for the global residuals
  std::size_t max_stored_group = 4096;    // ... and per group
  double floor_s = 1.0;                   // run times and predictions are clamped to >= this
  // Jobs with a requested TTL: the request-aware calibration (model/request_aware_ttl.hpp).
  bool request_aware = true;
  RequestAwareOptions request;
};

// Sorted residual order statistics of `n` residuals; values[j] is the residual of 0-based
// rank floor(j*(n-1)/(m-1)), m = values.size() (all ranks when m == n).
struct ResidualQuantiles {
  std::uint64_t n = 0;
  std::vector<float> values;

  static ResidualQuantiles from_residuals(std::vector<float> residuals, std::size_t max_stored);
  // The conformal quantile at level 1 - alpha; never below the exact one. When
  // (n+1)(1-alpha) > n the guarantee cannot be met and the largest residual is returned.
  double conformal_quantile(double alpha) const;
};

struct SafeTtlCalibration {
  std::string group_column;   // what group ids mean (e.g. "job_type"); "" when ungrouped
  double floor_s = 1.0;
  std::uint64_t min_group_rows = 200;
  ResidualQuantiles global;
  std::vector<std::uint32_t> group_ids;        // sorted ascending
  std::vector<ResidualQuantiles> group_residuals;  // parallel to group_ids
  // Used for jobs that have a request, when calibrated (empty: the log-ratio margin for all).
  RequestAwareCalibration request;

  bool empty() const { return global.n == 0; }
  // The log-space margin for `group` (kNoGroup or an unknown/small group -> global).
  double log_margin(std::uint32_t group, double alpha) const;
  // pred_s * exp(margin), with pred_s clamped to floor_s. Throws Error for alpha outside (0, 1)
  // or an empty calibration.
  double safe_ttl(double pred_s, std::uint32_t group, double alpha) const;
  // The same for a job whose requested TTL is `requested_s` (<= 0 or NaN: none), capped at
  // the request: request-aware when calibrated so and the job has a request.
  double safe_ttl(double pred_s, std::uint32_t group, double alpha, double requested_s) const;

  void write(BinaryWriter& w) const;
  static SafeTtlCalibration read(BinaryReader& r);
};

// Calibrates on held-out rows. `group` is empty (no groups) or one id per row (kNoGroup rows
// count only globally). Throws Error when sizes differ or no row is given.
SafeTtlCalibration calibrate_safe_ttl(std::span<const float> wall_s, std::span<const float> pred_s,
                                      std::span<const std::uint32_t> group, const SafeTtlOptions& options = {},
                                      std::string group_column = "");

}  // namespace ttlpred
