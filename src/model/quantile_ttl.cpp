#include "model/quantile_ttl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "model/safe_ttl.hpp"
#include "util/error.hpp"

namespace ttlpred {

namespace {
// -inf as stored: the order statistics must be finite (residual_quantiles.hpp), and no
// margin that a TTL could use comes near it.
constexpr float kNeverKilled = -1e30f;

// Scores are stored as float; rounded down, the job whose score is the margin would get a
// TTL a hair under its own run time and count as killed on its own calibration set.
float round_up_to_float(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}
}  // namespace

double quantile_ttl_score(double wall_s, double expected_s, double upper_s, double requested_s) {
  if (!(wall_s > expected_s)) return -std::numeric_limits<double>::infinity();
  if (requested_s > 0 && wall_s > requested_s) return -std::numeric_limits<double>::infinity();
  const double q = std::max(upper_s, 1e-3);
  return std::log(wall_s / q);
}

double QuantileTtlCalibration::log_margin(std::uint32_t group, double alpha, bool is_cold) const {
  if (!(alpha > 0.0 && alpha < 1.0)) throw Error("safe-TTL alpha must lie in (0, 1), got " + std::to_string(alpha));
  const double m = global.conformal_quantile(alpha);
  if (is_cold && cold.n > 0) return std::max(m, cold.conformal_quantile(alpha));
  if (group == kNoGroup) return m;
  const auto it = std::lower_bound(group_ids.begin(), group_ids.end(), group);
  if (it == group_ids.end() || *it != group) return m;
  const auto& g = group_scores[static_cast<std::size_t>(it - group_ids.begin())];
  if (g.n < min_group_rows) return m;
  const double w = static_cast<double>(g.n) / (static_cast<double>(g.n) + group_shrink_rows);
  return w * g.conformal_quantile(alpha) + (1.0 - w) * m;
}

double QuantileTtlCalibration::safe_ttl(double expected_s, double upper_s, std::uint32_t group, double alpha,
                                        bool is_cold) const {
  if (empty()) throw Error("the per-job safe TTL is not calibrated");
  // A quantile among the never-killed scores (kNeverKilled) reads as e^-50: the expected time answers.
  const double margin = std::max(log_margin(group, alpha, is_cold), -50.0);
  const double t = upper_s * std::exp(margin);
  return std::max(std::isfinite(expected_s) ? expected_s : 0.0, std::isfinite(t) ? t : 0.0);
}

void QuantileTtlCalibration::write(BinaryWriter& w) const {
  w.put<float>(level);
  w.put<std::uint32_t>(head);
  w.put<std::uint64_t>(min_group_rows);
  w.put<double>(group_shrink_rows);
  write_residual_quantiles(w, global);
  w.put<std::uint64_t>(group_ids.size());
  for (std::size_t i = 0; i < group_ids.size(); ++i) {
    w.put<std::uint32_t>(group_ids[i]);
    write_residual_quantiles(w, group_scores[i]);
  }
  write_residual_quantiles(w, cold);
}

QuantileTtlCalibration QuantileTtlCalibration::read(BinaryReader& r, std::size_t heads) {
  QuantileTtlCalibration c;
  c.level = r.get<float>();
  c.head = r.get<std::uint32_t>();
  if (!(c.level > 0 && c.level < 1)) r.fail("per-job safe TTL: head level " + std::to_string(c.level) + " is not in (0, 1)");
  if (c.head >= heads)
    r.fail("per-job safe TTL: head " + std::to_string(c.head) + " of a model with " + std::to_string(heads) + " heads");
  c.min_group_rows = r.get<std::uint64_t>();
  c.group_shrink_rows = r.get<double>();
  if (!(c.group_shrink_rows >= 0) || !std::isfinite(c.group_shrink_rows)) r.fail("per-job safe TTL: bad group shrinkage");
  c.global = read_residual_quantiles(r);
  if (c.global.n == 0) r.fail("per-job safe TTL: no calibration scores");
  const auto groups = r.get<std::uint64_t>();
  if (groups > (1u << 20)) r.fail("per-job safe TTL claims " + std::to_string(groups) + " groups");
  for (std::uint64_t i = 0; i < groups; ++i) {
    const auto id = r.get<std::uint32_t>();
    if (!c.group_ids.empty() && id <= c.group_ids.back()) r.fail("per-job safe TTL: group ids are not strictly increasing");
    c.group_ids.push_back(id);
    c.group_scores.push_back(read_residual_quantiles(r));
  }
  c.cold = read_residual_quantiles(r);
  return c;
}

QuantileTtlCalibration calibrate_quantile_ttl(std::span<const float> wall_s, std::span<const float> expected_s,
                                              std::span<const float> requested_s, std::span<const float> quantiles_s,
                                              std::size_t heads, std::span<const float> levels,
                                              std::span<const std::uint32_t> group,
                                              const QuantileTtlOptions& options, std::span<const std::uint8_t> cold) {
  const double alpha = options.head_alpha;
  const std::size_t n = wall_s.size();
  if (heads == 0 || levels.size() != heads) throw Error("per-job safe TTL: the model has no quantile heads");
  if (expected_s.size() != n || requested_s.size() != n || quantiles_s.size() != n * heads ||
      (!group.empty() && group.size() != n) || (!cold.empty() && cold.size() != n))
    throw Error("per-job safe TTL calibration: run times, predictions, requests and groups differ in length");
  if (n == 0) throw Error("per-job safe TTL calibration needs at least one calibration row");
  if (!(alpha > 0 && alpha < 1)) throw Error("per-job safe TTL: alpha must lie in (0, 1)");
  auto scores_of = [&](std::size_t h) {
    std::vector<float> s(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = quantile_ttl_score(wall_s[i], expected_s[i], quantiles_s[i * heads + h], requested_s[i]);
      s[i] = std::isfinite(v) ? round_up_to_float(v) : kNeverKilled;
    }
    return s;
  };
  // The head whose rule, calibrated on these rows at alpha, gives the shortest mean TTL.
  std::size_t best = 0;
  double best_mean = std::numeric_limits<double>::infinity();
  for (std::size_t h = 0; h < heads; ++h) {
    const auto q = ResidualQuantiles::from_residuals(scores_of(h), n);
    const double margin = std::max(q.conformal_quantile(alpha), -50.0);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double t = std::max<double>(expected_s[i], quantiles_s[i * heads + h] * std::exp(margin));
      if (requested_s[i] > 0) t = std::min<double>(t, requested_s[i]);
      sum += t;
    }
    if (sum < best_mean) {
      best_mean = sum;
      best = h;
    }
  }
  QuantileTtlCalibration c;
  c.head = static_cast<std::uint32_t>(best);
  c.level = levels[best];
  c.min_group_rows = options.min_group_rows;
  c.group_shrink_rows = options.group_shrink_rows;
  std::vector<float> all = scores_of(best);
  std::vector<float> cold_scores;
  for (std::size_t i = 0; i < cold.size(); ++i)
    if (cold[i]) cold_scores.push_back(all[i]);
  c.cold = ResidualQuantiles::from_residuals(std::move(cold_scores), options.max_stored_group);
  std::map<std::uint32_t, std::vector<float>> by_group;
  if (!group.empty())
    for (std::size_t i = 0; i < n; ++i)
      if (group[i] != kNoGroup) by_group[group[i]].push_back(all[i]);
  c.global = ResidualQuantiles::from_residuals(std::move(all), options.max_stored_global);
  for (auto& [id, s] : by_group)
    if (s.size() >= options.min_group_rows) {
      c.group_ids.push_back(id);
      c.group_scores.push_back(ResidualQuantiles::from_residuals(std::move(s), options.max_stored_group));
    }
  return c;
}

}  // namespace ttlpred
