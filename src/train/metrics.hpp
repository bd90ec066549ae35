#pragma once
// The evaluation protocol's accuracy metrics (pipeline/evaluate.hpp); the service's own
// Prometheus series are another thing, serve::ServiceMetrics. Run times and TTLs are in
// seconds; errors are reported in hours. A missing requested TTL is NaN.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ttlpred {

double rmse_hours(std::span<const float> actual_s, std::span<const float> predicted_s);
double mae_hours(std::span<const float> actual_s, std::span<const float> predicted_s);
// 1 - SS_res / SS_tot around the mean of `actual_s`; NaN when actual_s is constant or empty.
double r2_score(std::span<const float> actual_s, std::span<const float> predicted_s);

struct AccuracyMetrics {
  std::size_t rows = 0;
  double rmse_hours = 0, mae_hours = 0, r2 = 0;
  // Jobs the safe TTL kills that the requested TTL would have let finish
  // (run > safe TTL and, where a request is known, run <= requested TTL), over all rows.
  double kill_rate = 0;
  std::size_t killed = 0;
  double mean_safe_ttl_hours = 0;
  double mean_requested_ttl_hours = 0;  // over rows with a known request; NaN when none
  std::size_t requested_known = 0;
};

// All spans parallel; requested_s may be empty (no requests known). safe_ttl_s may be empty
// (kill rate and mean safe TTL then NaN). Throws Error when lengths differ.
AccuracyMetrics compute_metrics(std::span<const float> wall_s, std::span<const float> pred_s,
                        std::span<const float> safe_ttl_s, std::span<const float> requested_s);

struct GroupAccuracyMetrics {
  std::uint32_t group;
  AccuracyMetrics metrics;
};
// The same per value of `group` (one id per row), ascending by group id.
std::vector<GroupAccuracyMetrics> compute_metrics_by_group(std::span<const float> wall_s, std::span<const float> pred_s,
                                                   std::span<const float> safe_ttl_s, std::span<const float> requested_s,
                                                   std::span<const std::uint32_t> group);

}  // namespace ttlpred
