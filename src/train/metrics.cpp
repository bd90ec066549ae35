#include "train/metrics.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "util/error.hpp"

namespace ttlpred {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void same_length(std::size_t a, std::size_t b, const char* what) {
  if (a != b) throw Error(std::string("metrics: ") + what + " has " + std::to_string(b) + " values for " + std::to_string(a) + " rows");
}
}  // namespace

double rmse_hours(std::span<const float> a, std::span<const float> p) {
  same_length(a.size(), p.size(), "predictions");
  if (a.empty()) return kNaN;
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double e = (static_cast<double>(p[i]) - a[i]) / 3600.0;
    s += e * e;
  }
  return std::sqrt(s / static_cast<double>(a.size()));
}

double mae_hours(std::span<const float> a, std::span<const float> p) {
  same_length(a.size(), p.size(), "predictions");
  if (a.empty()) return kNaN;
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::abs(static_cast<double>(p[i]) - a[i]) / 3600.0;
  return s / static_cast<double>(a.size());
}

double r2_score(std::span<const float> a, std::span<const float> p) {
  same_length(a.size(), p.size(), "predictions");
  if (a.empty()) return kNaN;
  double mean = 0;
  for (float v : a) mean += v;
  mean /= static_cast<double>(a.size());
  double res = 0, tot = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    res += (static_cast<double>(a[i]) - p[i]) * (static_cast<double>(a[i]) - p[i]);
    tot += (a[i] - mean) * (a[i] - mean);
  }
  return tot > 0 ? 1.0 - res / tot : kNaN;
}

AccuracyMetrics compute_metrics(std::span<const float> wall, std::span<const float> pred, std::span<const float> safe,
                        std::span<const float> req) {
  same_length(wall.size(), pred.size(), "predictions");
  if (!safe.empty()) same_length(wall.size(), safe.size(), "safe TTLs");
  if (!req.empty()) same_length(wall.size(), req.size(), "requested TTLs");
  AccuracyMetrics m;
  m.rows = wall.size();
  m.rmse_hours = rmse_hours(wall, pred);
  m.mae_hours = mae_hours(wall, pred);
  m.r2 = r2_score(wall, pred);
  double req_sum = 0, safe_sum = 0;
  for (std::size_t i = 0; i < wall.size(); ++i) {
    const bool has_req = !req.empty() && std::isfinite(req[i]);
    if (has_req) {
      req_sum += req[i];
      ++m.requested_known;
    }
    if (!safe.empty()) {
      safe_sum += safe[i];
      // A job that outran its request was killed anyway: not the safe TTL's doing.
      if (wall[i] > safe[i] && (!has_req || wall[i] <= req[i])) ++m.killed;
    }
  }
  const double n = static_cast<double>(m.rows);
  m.kill_rate = safe.empty() || m.rows == 0 ? kNaN : static_cast<double>(m.killed) / n;
  m.mean_safe_ttl_hours = safe.empty() || m.rows == 0 ? kNaN : safe_sum / n / 3600.0;
  m.mean_requested_ttl_hours = m.requested_known ? req_sum / static_cast<double>(m.requested_known) / 3600.0 : kNaN;
  return m;
}

std::vector<GroupAccuracyMetrics> compute_metrics_by_group(std::span<const float> wall, std::span<const float> pred,
                                                   std::span<const float> safe, std::span<const float> req,
                                                   std::span<const std::uint32_t> group) {
  same_length(wall.size(), group.size(), "groups");
  same_length(wall.size(), pred.size(), "predictions");
  if (!safe.empty()) same_length(wall.size(), safe.size(), "safe TTLs");
  if (!req.empty()) same_length(wall.size(), req.size(), "requested TTLs");
  std::map<std::uint32_t, std::vector<std::size_t>> rows;
  for (std::size_t i = 0; i < group.size(); ++i) rows[group[i]].push_back(i);
  std::vector<GroupAccuracyMetrics> out;
  for (const auto& [g, idx] : rows) {
    std::vector<float> w, p, s, r;
    for (auto i : idx) {
      w.push_back(wall[i]);
      p.push_back(pred[i]);
      if (!safe.empty()) s.push_back(safe[i]);
      if (!req.empty()) r.push_back(req[i]);
    }
    out.push_back({g, compute_metrics(w, p, s, r)});
  }
  return out;
}

}  // namespace ttlpred
