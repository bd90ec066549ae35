#pragma once
// Summary of a job trace as `ttlpred generate` prints it: rows, job-type mix, wall-time
// percentiles, ERROR_E share, and the two reference errors every model is judged against:
// the static TTL's RMSE (what JAliEn does today) and the oracle RMSE (expected_wall_s, the
// irreducible noise of a synthetic trace).
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"

namespace ttlpred::synth {

class TraceStats {
 public:
  void add(const JobRecord& r);
  void add(const JobTable& table);

  std::size_t rows() const { return rows_; }
  // Rows per job type, most frequent first (empty name: type unknown).
  std::vector<std::pair<std::string, std::size_t>> type_counts() const;
  double type_share(std::string_view type) const;
  // q-quantile of wall_s over rows with a known wall time (NaN when none).
  double wall_quantile_s(double q) const;
  double mean_wall_s() const { return walls_.empty() ? kMissingNumber : wall_sum_ / static_cast<double>(walls_.size()); }
  double error_e_share() const { return rows_ ? static_cast<double>(error_e_) / static_cast<double>(rows_) : 0.0; }
  // RMSE of requested_ttl_s as a prediction of wall_s, over rows that have both.
  double static_ttl_rmse_s() const { return rmse(ttl_sq_, ttl_n_); }
  // RMSE of expected_wall_s as a prediction of wall_s (NaN when the trace has none).
  double oracle_rmse_s() const { return rmse(oracle_sq_, oracle_n_); }

  // Multi-line human summary; times in hours.
  std::string format() const;

 private:
  static double rmse(double sq, std::size_t n) { return n ? std::sqrt(sq / static_cast<double>(n)) : kMissingNumber; }
  std::size_t rows_ = 0, error_e_ = 0, ttl_n_ = 0, oracle_n_ = 0;
  double ttl_sq_ = 0, oracle_sq_ = 0, wall_sum_ = 0;
  std::vector<std::pair<std::string, std::size_t>> types_;
  mutable std::vector<float> walls_;
  mutable bool sorted_ = true;
};

}  // namespace ttlpred::synth
