#include "learn/window_table.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "model/online_calibration.hpp"
#include "util/error.hpp"

namespace ttlpred {

double outcome_known_at(const JobTable& jobs, std::size_t row) {
  const double submit = jobs.num(Field::SubmitTime)[row], wall = jobs.num(Field::WallTime)[row];
  const double wait = jobs.num(Field::WaitTime)[row];
  if (std::isnan(submit) || std::isnan(wall)) return std::numeric_limits<double>::quiet_NaN();
  return submit + (std::isnan(wait) || wait < 0 ? 0.0 : wait) + wall;
}

std::vector<std::size_t> rows_in_window(const JobTable& jobs, const OutcomeWindow& window) {
  const auto submit = jobs.num(Field::SubmitTime);
  const double start = window.length_s > 0 ? window.end_s - window.length_s : -INFINITY;
  std::vector<std::size_t> out;
  for (std::size_t r : jobs.submit_order()) {
    if (std::isnan(submit[r])) break;  // unknown submit times sort last
    if (submit[r] < start) continue;
    if (!(outcome_known_at(jobs, r) <= window.end_s)) continue;
    out.push_back(r);
  }
  return out;
}

JobTable delivered_outcomes(const JobTable& jobs, std::span<const std::size_t> served_rows, std::span<const double> ttl,
                            double kill_margin_s, const OutcomeWindow& window, std::size_t* killed) {
  if (served_rows.size() != ttl.size())
    throw Error("delivered_outcomes: " + std::to_string(served_rows.size()) + " served rows but " +
                std::to_string(ttl.size()) + " TTLs");
  const auto req = jobs.num(Field::RequestedTtl);
  const bool has_req = jobs.has_values(Field::RequestedTtl);
  const std::string status = jobs.dict(Field::Status).find("ERROR_E") != kMissingCode ? "ERROR_E" : "TIMEOUT";
  JobTable delivered = jobs;
  std::vector<std::uint8_t> cut(jobs.rows(), 0);
  auto wall = delivered.num_mut(Field::WallTime);
  for (std::size_t i = 0; i < served_rows.size(); ++i) {
    const std::size_t r = served_rows[i];
    const double limit = ttl[i] + kill_margin_s;
    if (!killed_by(wall[r], limit, has_req ? req[r] : 0.0)) continue;
    wall[r] = limit;
    cut[r] = 1;
  }
  JobTable out;
  JobRecord rec;
  std::size_t n = 0;
  for (const std::size_t r : rows_in_window(delivered, window)) {
    delivered.record(r, rec);
    if (cut[r]) {
      rec.text(Field::Status) = status;
      ++n;
    }
    out.append(rec);
  }
  if (killed) *killed = n;
  return out;
}

JobTable concat_before(const JobTable& original, double before_s, const JobTable& recent, std::size_t* original_rows) {
  JobTable out;
  JobRecord r;
  std::size_t n = 0;
  const auto submit = original.num(Field::SubmitTime);
  for (std::size_t i : original.submit_order()) {
    if (!(submit[i] < before_s)) continue;
    original.record(i, r);
    out.append(r);
    ++n;
  }
  for (std::size_t i = 0; i < recent.rows(); ++i) {
    recent.record(i, r);
    out.append(r);
  }
  if (original_rows) *original_rows = n;
  return out;
}

}  // namespace ttlpred
