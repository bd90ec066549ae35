#include "model/safe_ttl.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/error.hpp"

namespace ttlpred {

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

namespace {
std::uint32_t request_key(std::uint32_t group, bool by_group) {
  if (by_group) return group;
  return in_fallback_stratum(group) ? kFallbackStratum : 0;
}
}  // namespace

const RequestAwareCalibration& SafeTtlCalibration::request_table(std::uint32_t group) const {
  if (request_keys.empty()) return request;
  const std::uint32_t key = request_key(group, request_by_group);
  const auto it = std::lower_bound(request_keys.begin(), request_keys.end(), key);
  return it != request_keys.end() && *it == key ? request_tables[static_cast<std::size_t>(it - request_keys.begin())]
                                                : request;
}

double SafeTtlCalibration::safe_ttl(double pred_s, std::uint32_t group, double alpha) const {
  const double margin = log_margin(group, alpha);
  const double base = std::max(std::isfinite(pred_s) ? pred_s : floor_s, floor_s);
  return base * std::exp(margin);
}

double SafeTtlCalibration::safe_ttl(double pred_s, std::uint32_t group, double alpha, double requested_s) const {
  // Never below the job's own expected wall time (the request, when shorter, caps both): a
  // negative margin or exponent, fitted where most jobs ran long, would otherwise hand out
  // a TTL the model itself expects the job to outrun.
  const double expected = std::isfinite(pred_s) ? pred_s : 0.0;
  double t = requested_s > 0 && !request.empty() ? request_table(group).safe_ttl(pred_s, requested_s, alpha)
                                                 : safe_ttl(pred_s, group, alpha);
  t = std::max(t, expected);
  return requested_s > 0 ? std::min(t, requested_s) : t;
}

double SafeTtlCalibration::safe_ttl(double pred_s, double upper_s, std::uint32_t group, double alpha,
                                    double requested_s, bool cold) const {
  if (quantile.empty() || !std::isfinite(upper_s)) return safe_ttl(pred_s, group, alpha, requested_s);
  const double t = quantile.safe_ttl(pred_s, upper_s, group, alpha, cold);
  return requested_s > 0 ? std::min(t, requested_s) : t;
}


void SafeTtlCalibration::write(BinaryWriter& w) const {
  w.put_string(group_column);
  w.put<double>(floor_s);
  w.put<std::uint64_t>(min_group_rows);
  write_residual_quantiles(w, global);
  w.put<std::uint64_t>(group_ids.size());
  for (std::size_t i = 0; i < group_ids.size(); ++i) {
    w.put<std::uint32_t>(group_ids[i]);
    write_residual_quantiles(w, group_residuals[i]);
  }
  // An optional tail: files written before it existed read as having none.
  w.put<std::uint8_t>(request.empty() ? 0 : 1);
  if (!request.empty()) request.write(w);
  // A second optional tail, only where some key has a request-aware table of its own.
  if (!request_keys.empty()) {
    w.put<std::uint8_t>(request_by_group ? 1 : 0);
    w.put<std::uint64_t>(request_keys.size());
    for (std::size_t i = 0; i < request_keys.size(); ++i) {
      w.put<std::uint32_t>(request_keys[i]);
      request_tables[i].write(w);
    }
  }
}

SafeTtlCalibration SafeTtlCalibration::read(BinaryReader& r) {
  SafeTtlCalibration c;
  c.group_column = r.get_string();
  c.floor_s = r.get<double>();
  if (!(c.floor_s > 0.0) || !std::isfinite(c.floor_s)) r.fail("safe-TTL floor must be a positive number");
  c.min_group_rows = r.get<std::uint64_t>();
  c.global = read_residual_quantiles(r);
  const auto groups = r.get<std::uint64_t>();
  if (groups > (1u << 20)) r.fail("safe-TTL calibration claims " + std::to_string(groups) + " groups");
  for (std::uint64_t i = 0; i < groups; ++i) {
    const auto id = r.get<std::uint32_t>();
    if (!c.group_ids.empty() && id <= c.group_ids.back()) r.fail("safe-TTL group ids are not strictly increasing");
    c.group_ids.push_back(id);
    c.group_residuals.push_back(read_residual_quantiles(r));
  }
  if (!r.at_end()) {
    const auto has_request = r.get<std::uint8_t>();
    if (has_request > 1) r.fail("safe-TTL request-aware flag is not 0 or 1");
    if (has_request) c.request = RequestAwareCalibration::read(r);
  }
  if (!r.at_end()) {
    const auto by_group = r.get<std::uint8_t>();
    if (by_group > 1) r.fail("safe-TTL request-table keying is not 0 or 1");
    c.request_by_group = by_group == 1;
    const auto tables = r.get<std::uint64_t>();
    if (tables == 0 || tables > (1u << 20)) r.fail("safe-TTL calibration claims " + std::to_string(tables) + " request-aware tables");
    if (c.request.empty()) r.fail("safe-TTL request-aware tables without the shared one");
    for (std::uint64_t i = 0; i < tables; ++i) {
      const auto key = r.get<std::uint32_t>();
      if (!c.request_keys.empty() && key <= c.request_keys.back()) r.fail("safe-TTL request-table keys are not strictly increasing");
      c.request_keys.push_back(key);
      c.request_tables.push_back(RequestAwareCalibration::read(r));
    }
  }
  return c;
}

void calibrate_request_tables(SafeTtlCalibration& c, std::span<const float> wall_s, std::span<const float> pred_s,
                              std::span<const float> requested_s, std::span<const std::uint32_t> group, bool by_group,
                              const RequestAwareOptions& options, std::span<const float> weight) {
  if (!group.empty() && group.size() != wall_s.size())
    throw Error("request-aware calibration: " + std::to_string(group.size()) + " group ids for " +
                std::to_string(wall_s.size()) + " rows");
  c.request_by_group = by_group;
  c.request_keys.clear();
  c.request_tables.clear();
  // The rows of each key, and which keys are large enough for a table of their own.
  std::map<std::uint32_t, std::vector<std::size_t>> rows_of;
  for (std::size_t i = 0; i < group.size(); ++i) rows_of[request_key(group[i], by_group)].push_back(i);
  std::vector<std::uint8_t> own(wall_s.size(), 0);
  std::size_t rest = wall_s.size();
  for (const auto& [key, rows] : rows_of)
    if (rows.size() >= kMinRequestTableRows && (by_group || key != 0)) {
      c.request_keys.push_back(key);
      for (std::size_t i : rows) own[i] = 1;
      rest -= rows.size();
    }
  auto table_of = [&](const std::vector<std::size_t>& rows) {
    std::vector<float> w, p, r, cost;
    for (std::size_t i : rows) {
      w.push_back(wall_s[i]);
      p.push_back(pred_s[i]);
      r.push_back(requested_s[i]);
      if (!weight.empty()) cost.push_back(weight[i]);
    }
    return calibrate_request_aware(w, p, r, options, cost);
  };
  std::vector<std::size_t> shared;
  for (std::size_t i = 0; i < wall_s.size(); ++i)
    if (!own[i] || rest < kMinRequestTableRows) shared.push_back(i);
  c.request = table_of(shared);
  // One key holding every row needs no table apart from the shared one.
  if (c.request_keys.size() == 1 && rest == 0) c.request_keys.clear();
  for (std::uint32_t key : c.request_keys) c.request_tables.push_back(table_of(rows_of[key]));
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
