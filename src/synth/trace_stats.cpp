#include "synth/trace_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ttlpred::synth {

namespace {
void count_type(std::vector<std::pair<std::string, std::size_t>>& types, std::string_view t, std::size_t n = 1) {
  for (auto& [name, c] : types)
    if (name == t) {
      c += n;
      return;
    }
  types.emplace_back(std::string(t), n);
}
}  // namespace

void TraceStats::add(const JobRecord& r) {
  ++rows_;
  count_type(types_, r.text(Field::JobType));
  if (r.text(Field::Status) == "ERROR_E") ++error_e_;
  const double wall = r[Field::WallTime];
  if (std::isnan(wall)) return;
  walls_.push_back(static_cast<float>(wall));
  sorted_ = false;
  wall_sum_ += wall;
  if (const double ttl = r[Field::RequestedTtl]; !std::isnan(ttl)) {
    ttl_sq_ += (ttl - wall) * (ttl - wall);
    ++ttl_n_;
  }
  if (const double e = r[Field::ExpectedWall]; !std::isnan(e)) {
    oracle_sq_ += (e - wall) * (e - wall);
    ++oracle_n_;
  }
}

void TraceStats::add(const JobTable& table) {
  JobRecord r;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    table.record(i, r);
    add(r);
  }
}

std::vector<std::pair<std::string, std::size_t>> TraceStats::type_counts() const {
  auto v = types_;
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

double TraceStats::type_share(std::string_view type) const {
  for (const auto& [name, c] : types_)
    if (name == type) return rows_ ? static_cast<double>(c) / static_cast<double>(rows_) : 0.0;
  return 0.0;
}

double TraceStats::wall_quantile_s(double q) const {
  if (walls_.empty()) return kMissingNumber;
  if (!sorted_) {
    std::sort(walls_.begin(), walls_.end());
    sorted_ = true;
  }
  // Nearest rank on the sorted values.
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(walls_.size() - 1);
  return walls_[static_cast<std::size_t>(std::llround(pos))];
}

std::string TraceStats::format() const {
  std::string s;
  char buf[256];
  std::snprintf(buf, sizeof buf, "rows: %zu\njob types:", rows_);
  s += buf;
  for (const auto& [name, c] : type_counts()) {
    std::snprintf(buf, sizeof buf, " %s %.1f%%", name.empty() ? "(unknown)" : name.c_str(),
                  100.0 * static_cast<double>(c) / static_cast<double>(rows_));
    s += buf;
  }
  s += "\n";
  if (!walls_.empty()) {
    std::snprintf(buf, sizeof buf, "wall time [h]: p10 %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f  mean %.2f\n",
                  wall_quantile_s(0.10) / 3600, wall_quantile_s(0.50) / 3600, wall_quantile_s(0.90) / 3600,
                  wall_quantile_s(0.99) / 3600, wall_quantile_s(1.0) / 3600, mean_wall_s() / 3600);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "ERROR_E (killed past TTL + 300 s): %.2f%% of jobs\n", 100.0 * error_e_share());
  s += buf;
  if (ttl_n_) {
    std::snprintf(buf, sizeof buf, "static-TTL RMSE: %.2f h\n", static_ttl_rmse_s() / 3600);
    s += buf;
  }
  if (oracle_n_) {
    std::snprintf(buf, sizeof buf, "oracle RMSE (expected_wall_s): %.2f h\n", oracle_rmse_s() / 3600);
    s += buf;
  }
  return s;
}

}  // namespace ttlpred::synth
