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

#include "model/quantile_ttl.hpp"
#include "model/request_aware_ttl.hpp"
#include "model/residual_quantiles.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {

inline constexpr std::uint32_t kNoGroup = std::numeric_limits<std::uint32_t>::max();
// Set in a group id (never in kNoGroup) for the rows of a residual model that do not know
// their group's first history estimate (ResidualBase::falls_back: a production with no
// outcome yet). Such a row's prediction is a first guess whose errors are several times a
// warm row's, so those rows form groups of their own and, when there are enough of them,
// get a request-aware table of their own (synthetic ALICE trace at match time: mean safe TTL
// 5.74 h calibrated together, 5.64 h apart, at 0.61 % and 0.60 % kills).
inline constexpr std::uint32_t kFallbackStratum = 1u << 31;
// The category index of a group id (the stratum bit cleared); kNoGroup stays kNoGroup.
inline std::uint32_t group_category(std::uint32_t group) {
  return group == kNoGroup ? kNoGroup : group & ~kFallbackStratum;
}
inline bool in_fallback_stratum(std::uint32_t group) { return group != kNoGroup && (group & kFallbackStratum) != 0; }

struct SafeTtlOptions {
  std::size_t min_group_rows = 200;     // fewer -> the group falls back to the global residuals
  std::size_t max_stored_global = 16384;  // order statistics kept for the global residuals
  std::size_t max_stored_group = 4096;    // ... and per group
  double floor_s = 1.0;                   // run times and predictions are clamped to >= this
  // Jobs with a requested TTL: the request-aware calibration (model/request_aware_ttl.hpp).
  bool request_aware = true;
  RequestAwareOptions request;
  // A request-aware table per calibration group with at least kMinRequestTableRows rows (the
  // others share one), each holding its own kill budget: Mondrian calibration of the
  // request-aware rule. Off: one table for all groups (per stratum, see kFallbackStratum).
  bool request_by_group = false;
  // Models with quantile heads: the per-job rule (model/quantile_ttl.hpp).
  QuantileTtlOptions quantile;
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
  // Tables of their own, by table key (ascending; parallel vectors): the key of a job is its
  // group id when `request_by_group`, else only its stratum (kFallbackStratum or 0). A job
  // whose key has none takes `request`. Written only when present, so other files keep
  // their bytes.
  bool request_by_group = false;
  std::vector<std::uint32_t> request_keys;
  std::vector<RequestAwareCalibration> request_tables;
  // The request-aware table that answers a job of `group` (`request` when no own table).
  const RequestAwareCalibration& request_table(std::uint32_t group) const;

  // The per-job rule of a model with quantile heads (model/quantile_ttl.hpp); empty: none.
  // Written in a model-file section of its own, not by write().
  QuantileTtlCalibration quantile;

  bool empty() const { return global.n == 0; }
  // The log-space margin for `group` (kNoGroup or an unknown/small group -> global).
  double log_margin(std::uint32_t group, double alpha) const;
  // pred_s * exp(margin), with pred_s clamped to floor_s. Throws Error for alpha outside (0, 1)
  // or an empty calibration.
  double safe_ttl(double pred_s, std::uint32_t group, double alpha) const;
  // The same for a job whose requested TTL is `requested_s` (<= 0 or NaN: none), capped at
  // the request: request-aware when calibrated so and the job has a request. Never below
  // pred_s (the expected wall time), except where the request is shorter.
  double safe_ttl(double pred_s, std::uint32_t group, double alpha, double requested_s) const;
  // The same for a job whose quantile head (the one `quantile` conforms) predicts `upper_s`:
  // the per-job rule when `quantile` is calibrated and upper_s is finite, else the above.
  // `cold`: the job is a cold start (model/quantile_ttl.hpp).
  double safe_ttl(double pred_s, double upper_s, std::uint32_t group, double alpha, double requested_s,
                  bool cold = false) const;

  void write(BinaryWriter& w) const;
  static SafeTtlCalibration read(BinaryReader& r);
};

// The request-aware tables of `c` from held-out rows that all have a request (the arguments
// of calibrate_request_aware, and `group`: empty, or one group id per row). Rows are keyed as
// request_table reads them (by group or by stratum, `by_group`); a key with at least
// kMinRequestTableRows rows gets a table of its own, and `request` is calibrated on the rest
// (on every row when the rest are fewer than that, or when no key has a table).
// 4000 rows: at alpha 1 % and the default alpha_scale of 0.5 a table spends 20 kills. With
// 1000, the 50 000-job synthetic traces' job types got tables from a few kills each, and
// their kill rates after the split went to 2.4-6.8 % at four of five splits (static calibration;
// 1.3-2.2 % with one table); the 1 M-job trace's tables are far larger.
inline constexpr std::size_t kMinRequestTableRows = 4000;
void calibrate_request_tables(SafeTtlCalibration& c, std::span<const float> wall_s, std::span<const float> pred_s,
                              std::span<const float> requested_s, std::span<const std::uint32_t> group, bool by_group,
                              const RequestAwareOptions& options, std::span<const float> weight = {});

// Calibrates on held-out rows. `group` is empty (no groups) or one id per row (kNoGroup rows
// count only globally). Throws Error when sizes differ or no row is given.
SafeTtlCalibration calibrate_safe_ttl(std::span<const float> wall_s, std::span<const float> pred_s,
                                      std::span<const std::uint32_t> group, const SafeTtlOptions& options = {},
                                      std::string group_column = "");

}  // namespace ttlpred
