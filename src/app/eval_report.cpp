#include "app/eval_report.hpp"

#include <cmath>

namespace ttlpred::app {
namespace {

nlohmann::json metrics_json(const AccuracyMetrics& m) {
  return {{"rows_scored", m.rows},
          {"rmse_hours", number_or_null(m.rmse_hours)},
          {"mae_hours", number_or_null(m.mae_hours)},
          {"r2", number_or_null(m.r2)},
          {"kill_rate", number_or_null(m.kill_rate)},
          {"killed", m.killed},
          {"mean_safe_ttl_hours", number_or_null(m.mean_safe_ttl_hours)},
          {"mean_requested_ttl_hours", number_or_null(m.mean_requested_ttl_hours)}};
}

}  // namespace

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string hours_text(double v) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

std::string kill_rate_warning(const Evaluation& e) {
  if (!e.kill_rate_above_alpha()) return "";
  char b[200];
  std::snprintf(b, sizeof b, "WARNING: kill rate %.3f%% is above alpha %.3g%%: the safe TTL kills more jobs than it promised",
                100 * e.metrics.kill_rate, 100 * e.alpha);
  return b;
}

nlohmann::json evaluation_json(const Evaluation& e) {
  nlohmann::json j = metrics_json(e.metrics);
  j["alpha"] = e.alpha;
  j["kill_rate_above_alpha"] = e.kill_rate_above_alpha();
  j["baseline_rmse_hours"] = number_or_null(e.baseline_rmse_hours);
  j["oracle_rmse_hours"] = number_or_null(e.oracle_rmse_hours);
  j["train_rows"] = e.train_rows;
  j["group_column"] = e.group_column;
  if (!e.quantile_coverage.empty()) {
    nlohmann::json cov = nlohmann::json::array();
    for (const auto& c : e.quantile_coverage) cov.push_back({{"level", c.level}, {"covered", c.covered}});
    j["quantile_coverage"] = cov;
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : e.groups) {
    nlohmann::json gj = metrics_json(g.metrics);
    gj["name"] = g.name;
    gj["baseline_rmse_hours"] = number_or_null(g.baseline_rmse_hours);
    gj["kill_rate_above_alpha"] = g.metrics.kill_rate > e.alpha;
    groups.push_back(gj);
  }
  j["groups"] = groups;
  return j;
}

void print_evaluation(std::FILE* out, const Evaluation& e) {
  const AccuracyMetrics& m = e.metrics;
  // The split's own count: the jobs of this trace before the scored ones. The model's own
  // training count is its provenance's (cmd_eval prints it), which differs on another trace.
  std::fprintf(out, "  scored %zu jobs, after the first %zu of this trace\n", m.rows, e.train_rows);
  std::fprintf(out, "  RMSE %s h   MAE %s h   R2 %s\n", hours_text(m.rmse_hours).c_str(), hours_text(m.mae_hours).c_str(),
               hours_text(m.r2).c_str());
  std::fprintf(out, "  requested/static TTL as prediction: RMSE %s h;  oracle (noise-free expectation): %s h\n",
               hours_text(e.baseline_rmse_hours).c_str(), hours_text(e.oracle_rmse_hours).c_str());
  std::fprintf(out, "  safe TTL: kill rate %.3f%% (%zu jobs), mean safe TTL %s h vs mean requested TTL %s h\n",
               100 * m.kill_rate, m.killed, hours_text(m.mean_safe_ttl_hours).c_str(),
               hours_text(m.mean_requested_ttl_hours).c_str());
  if (const std::string w = kill_rate_warning(e); !w.empty()) std::fprintf(out, "  %s\n", w.c_str());
  if (e.groups.empty()) return;
  std::fprintf(out, "\n  %-16s %9s %10s %10s %8s %12s %12s\n", e.group_column.c_str(), "jobs", "RMSE h", "static h",
               "kill %", "safe TTL h", "request h");
  for (const auto& g : e.groups)
    std::fprintf(out, "  %-16s %9zu %10s %10s %8.3f %12s %12s%s\n", g.name.substr(0, 16).c_str(), g.metrics.rows,
                 hours_text(g.metrics.rmse_hours).c_str(), hours_text(g.baseline_rmse_hours).c_str(),
                 100 * g.metrics.kill_rate, hours_text(g.metrics.mean_safe_ttl_hours).c_str(),
                 hours_text(g.metrics.mean_requested_ttl_hours).c_str(),
                 g.metrics.kill_rate > e.alpha ? "   kill rate above alpha" : "");
}

}  // namespace ttlpred::app
