#include "model/safe_ttl.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace ttlpred {

ResidualQuantiles ResidualQuantiles::from_residuals(std::vector<float> residuals, std::size_t max_stored) {
  ResidualQuantiles q;
  q.n = residuals.size();
  if (residuals.empty()) return q;
  std::sort(residuals.begin(), residuals.end());
  const std::size_t n = residuals.size();
  const std::size_t m = std::max<std::size_t>(2, std::min(max_stored, n));
  if (m >= n) {
    q.values = std::move(residuals);
    return q;
  }
  q.values.resize(m);
  for (std::size_t j = 0; j < m; ++j) q.values[j] = residuals[j * (n - 1) / (m - 1)];
  return q;
}

double ResidualQuantiles::conformal_quantile(double alpha) const {
  if (n == 0 || values.empty()) throw Error("safe-TTL calibration has no residuals");
  const double level = std::ceil(static_cast<double>(n + 1) * (1.0 - alpha) - 1e-9);
  if (level > static_cast<double>(n)) return values.back();
  const std::uint64_t rank0 = static_cast<std::uint64_t>(std::max(level, 1.0)) - 1;  // 0-based rank
  const std::uint64_t m = values.size();
  if (m == n) return values[rank0];
  // Smallest stored j whose rank j*(n-1)/(m-1) (floored) is >= rank0: rounding up keeps the
  // TTL on the safe side of the exact quantile.
  const std::uint64_t j = (rank0 * (m - 1) + (n - 2)) / (n - 1);
  return values[std::min<std::uint64_t>(j, m - 1)];
}

double SafeTtlCalibration::log_margin(std::uint32_t group, double alpha) const {
  if (!(alpha > 0.0 && alpha < 1.0)) throw Error("safe-TTL alpha must lie in (0, 1), got " + std::to_string(alpha));
  if (group != kNoGroup) {
    const auto it = std::lower_bound(group_ids.begin(), group_ids.end(), group);
    if (it != group_ids.end() && *it == group) {
      const auto& g = group_residuals[static_cast<std::size_t>(it - group_ids.begin())];
      if (g.n >= min_group_rows) return g.conformal_quantile(alpha);
    }
  }
  return global.conformal_quantile(alpha);
}

double SafeTtlCalibration::safe_ttl(double pred_s, std::uint32_t group, double alpha) const {
  const double margin = log_margin(group, alpha);
  const double base = std::max(std::isfinite(pred_s) ? pred_s : floor_s, floor_s);
  return base * std::exp(margin);
}

double SafeTtlCalibration::safe_ttl(double pred_s, std::uint32_t group, double alpha, double requested_s) const {
  if (requested_s > 0 && !request.empty()) return request.safe_ttl(pred_s, requested_s, alpha);
  const double t = safe_ttl(pred_s, group, alpha);
  return requested_s > 0 ? std::min(t, requested_s) : t;
}

namespace {
void write_quantiles(BinaryWriter& w, const ResidualQuantiles& q) {
  w.put<std::uint64_t>(q.n);
  w.put_vector(q.values);
}
ResidualQuantiles read_quantiles(BinaryReader& r) {
  ResidualQuantiles q;
  q.n = r.get<std::uint64_t>();
  q.values = r.get_vector<float>(1u << 24);
  if (q.values.size() > q.n || (q.n > 0 && q.values.size() < std::min<std::uint64_t>(q.n, 2)))
    r.fail("safe-TTL residual table stores " + std::to_string(q.values.size()) + " values for " + std::to_string(q.n) + " residuals");
  for (std::size_t i = 0; i < q.values.size(); ++i) {
    if (!std::isfinite(q.values[i])) r.fail("safe-TTL residual is not finite");
    if (i > 0 && q.values[i] < q.values[i - 1]) r.fail("safe-TTL residuals are not sorted");
  }
  return q;
}
}  // namespace

void SafeTtlCalibration::write(BinaryWriter& w) const {
  w.put_string(group_column);
  w.put<double>(floor_s);
  w.put<std::uint64_t>(min_group_rows);
  write_quantiles(w, global);
  w.put<std::uint64_t>(group_ids.size());
  for (std::size_t i = 0; i < group_ids.size(); ++i) {
    w.put<std::uint32_t>(group_ids[i]);
    write_quantiles(w, group_residuals[i]);
  }
  // An optional tail: files written before it existed read as having none.
  w.put<std::uint8_t>(request.empty() ? 0 : 1);
  if (!request.empty()) request.write(w);
}

SafeTtlCalibration SafeTtlCalibration::read(BinaryReader& r) {
  SafeTtlCalibration c;
  c.group_column = r.get_string();
  c.floor_s = r.get<double>();
  if (!(c.floor_s > 0.0) || !std::isfinite(c.floor_s)) r.fail("safe-TTL floor must be a positive number");
  c.min_group_rows = r.get<std::uint64_t>();
  c.global = read_quantiles(r);
  const auto groups = r.get<std::uint64_t>();
  if (groups > (1u << 20)) r.fail("safe-TTL calibration claims " + std::to_string(groups) + " groups");
  for (std::uint64_t i = 0; i < groups; ++i) {
    const auto id = r.get<std::uint32_t>();
    if (!c.group_ids.empty() && id <= c.group_ids.back()) r.fail("safe-TTL group ids are not strictly increasing");
    c.group_ids.push_back(id);
    c.group_residuals.push_back(read_quantiles(r));
  }
  if (!r.at_end()) {
    const auto has_request = r.get<std::uint8_t>();
    if (has_request > 1) r.fail("safe-TTL request-aware flag is not 0 or 1");
    if (has_request) c.request = RequestAwareCalibration::read(r);
  }
  return c;
}

SafeTtlCalibration calibrate_safe_ttl(std::span<const float> wall_s, std::span<const float> pred_s,
                                      std::span<const std::uint32_t> group, const SafeTtlOptions& options,
                                      std::string group_column) {
  if (wall_s.size() != pred_s.size() || (!group.empty() && group.size() != wall_s.size()))
    throw Error("safe-TTL calibration: run times, predictions and groups differ in length");
  if (wall_s.empty()) throw Error("safe-TTL calibration needs at least one calibration row");
  const double fl = options.floor_s;
  std::vector<float> all(wall_s.size());
  std::map<std::uint32_t, std::vector<float>> by_group;
  for (std::size_t i = 0; i < wall_s.size(); ++i) {
    const double w = std::isfinite(wall_s[i]) ? std::max<double>(wall_s[i], fl) : fl;
    const double p = std::isfinite(pred_s[i]) ? std::max<double>(pred_s[i], fl) : fl;
    all[i] = static_cast<float>(std::log(w) - std::log(p));
    if (!group.empty() && group[i] != kNoGroup) by_group[group[i]].push_back(all[i]);
  }
  SafeTtlCalibration c;
  c.group_column = std::move(group_column);
  c.floor_s = fl;
  c.min_group_rows = options.min_group_rows;
  c.global = ResidualQuantiles::from_residuals(std::move(all), options.max_stored_global);
  for (auto& [id, res] : by_group) {
    c.group_ids.push_back(id);
    c.group_residuals.push_back(ResidualQuantiles::from_residuals(std::move(res), options.max_stored_group));
  }
  return c;
}

}  // namespace ttlpred
