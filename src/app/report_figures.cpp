#include "app/report_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "util/latency.hpp"
#include "report/bar_chart.hpp"
#include "report/density_chart.hpp"
#include "report/line_chart.hpp"
#include "train/metrics.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred::app {
namespace {

using report::Axis;
using report::Point;

// The scored rows' outcome columns (run time and request) as floats, as metrics take them.
struct ScoredOutcomes {
  std::vector<float> wall, requested;
};
ScoredOutcomes scored_outcomes(const ChronologicalSplit& split) {
  ScoredOutcomes o;
  const auto wall = split.jobs.num(Field::WallTime), req = split.jobs.num(Field::RequestedTtl);
  const bool requests = split.jobs.has_values(Field::RequestedTtl);
  for (std::size_t r = split.train_rows; r < split.jobs.rows(); ++r) {
    o.wall.push_back(static_cast<float>(wall[r]));
    if (requests) o.requested.push_back(static_cast<float>(req[r]));
  }
  return o;
}

KillRatePoint rule_point(double setting, const ScoredOutcomes& o, const std::vector<float>& ttl) {
  const AccuracyMetrics m = compute_metrics(o.wall, ttl, ttl, o.requested);
  return {setting, m.kill_rate, m.mean_safe_ttl_hours};
}

// The (1 - alpha) quantile of the training jobs' run times (the nearest rank above).
double quantile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return NAN;
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, k == 0 ? 0 : k - 1)];
}

// Kill rates are drawn on a log axis: a rate of 0 sits on its floor, said in a note.
constexpr double kKillFloor = 1e-4;

}  // namespace

std::string percent_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", 100 * v);
  return buf;
}

const std::vector<double>& report_alphas() {
  static const std::vector<double> alphas = {0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2};
  return alphas;
}

KillRateCurves kill_rate_curves(const ModelFile& model, const std::string& what, const PredictorOptions& base,
                                const ChronologicalSplit& split, const HistoryMatrix& history) {
  KillRateCurves c;
  c.alpha = base.alpha;
  for (double a : report_alphas()) {
    PredictorOptions o = base;
    o.alpha = a;
    const Evaluation e = evaluate(Predictor(model, o, what), split, &history);
    c.model.push_back({a, e.metrics.kill_rate, e.metrics.mean_safe_ttl_hours});
  }
  const ScoredOutcomes out = scored_outcomes(split);
  std::vector<double> train_wall(split.jobs.num(Field::WallTime).begin(),
                                 split.jobs.num(Field::WallTime).begin() + static_cast<std::ptrdiff_t>(split.train_rows));
  std::sort(train_wall.begin(), train_wall.end());
  for (double a : report_alphas()) {
    const double q = quantile(train_wall, 1 - a);
    std::vector<float> ttl(out.wall.size());
    for (std::size_t i = 0; i < ttl.size(); ++i)
      ttl[i] = static_cast<float>(out.requested.empty() ? q : cap_at_request(q, out.requested[i]));
    c.static_rule.push_back(rule_point(a, out, ttl));
  }
  if (!out.requested.empty())
    for (double f : {0.1, 0.2, 0.3, 0.5, 0.7, 1.0}) {
      std::vector<float> ttl(out.wall.size());
      for (std::size_t i = 0; i < ttl.size(); ++i)
        ttl[i] = std::isnan(out.requested[i]) ? INFINITY : static_cast<float>(f * out.requested[i]);
      c.request_rule.push_back(rule_point(f, out, ttl));
    }
  return c;
}

std::vector<VariantLatency> measure_variant_latency(const ModelFile& model, const std::string& what,
                                                    const PredictorOptions& base, const JobTable& jobs,
                                                    const std::vector<engine::Variant>& variants, double seconds) {
  constexpr std::size_t kPool = 4096, kBatch = 256;
  std::vector<VariantLatency> rows;
  if (jobs.rows() == 0) return rows;
  std::vector<JobRecord> records(kPool);
  for (std::size_t i = 0; i < kPool; ++i) jobs.record((i * 7919) % jobs.rows(), records[i]);
  std::vector<Prediction> out(kBatch);
  for (engine::Variant v : variants) {
    PredictorOptions o = base;
    o.variant = v;
    o.variant_from_model = false;
    std::unique_ptr<Predictor> p;
    try {
      p = std::make_unique<Predictor>(model, o, what);
    } catch (const Error& e) {
      std::fprintf(stderr, "report: variant %s left out of the latency chart: %s\n",
                   std::string(engine::variant_name(v)).c_str(), e.what());
      continue;
    }
    const HistoryState history = p->initial_history();
    VariantLatency row{std::string(engine::variant_name(v)), p->backend().target()};
    row.one_job_us = measure([&](std::size_t i) { p->predict(std::span(&records[i % kPool], 1), history, out); },
                                     seconds).median_us;
    row.batch256_us = measure(
        [&](std::size_t i) { p->predict(std::span(records).subspan((i * kBatch) % (kPool - kBatch), kBatch), history, out); },
        seconds).median_us;
    rows.push_back(row);
  }
  return rows;
}

void add_prediction_density(report::HtmlPage& page, const ChronologicalSplit& split, const Evaluation& e) {
  report::DensityChart c;
  c.title = "Predicted vs actual run time";
  c.x = Axis{"actual run time", "s", true};
  c.y = Axis{"predicted run time", "s", true};
  const auto wall = split.jobs.num(Field::WallTime);
  for (std::size_t i = 0; i < e.predictions.size(); ++i) {
    c.xs.push_back(wall[split.train_rows + i]);
    c.ys.push_back(e.predictions[i].expected_wall_s);
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "RMSE %.3f h, R2 %.3f", e.metrics.rmse_hours, e.metrics.r2);
  c.notes.push_back(buf);
  page.add_chart(report::draw_density_chart(c),
                 "Expected wall time against the actual run time of each scored job (the jobs after the chronological "
                 "split), log-log; cells on the dashed diagonal are exact predictions.");
}

namespace {
// The groups with the most scored rows, at most `n`, in the evaluation's order.
std::vector<const GroupEvaluation*> largest_groups(const Evaluation& e, std::size_t n) {
  std::vector<const GroupEvaluation*> g;
  for (const auto& x : e.groups) g.push_back(&x);
  std::stable_sort(g.begin(), g.end(), [](auto* a, auto* b) { return a->metrics.rows > b->metrics.rows; });
  if (g.size() > n) g.resize(n);
  return g;
}

// A chart of `what` per value of the evaluation's breakdown column: "<what> by job_type", or
// on a trace without one (KTH-SP2), "<what> over all jobs" with no category axis title.
report::BarChart per_group_chart(const Evaluation& e, const std::string& what) {
  report::BarChart c;
  const bool grouped = !e.group_column.empty();
  c.title = what + (grouped ? " by " + e.group_column : std::string(" over all jobs"));
  c.x = Axis{e.group_column, ""};
  return c;
}
}  // namespace

void add_error_by_group(report::HtmlPage& page, const Evaluation& e) {
  report::BarChart c = per_group_chart(e, "Run-time error");
  const bool grouped = !e.group_column.empty();
  const std::string& column = e.group_column;
  c.y = Axis{"RMSE", "h"};
  report::BarSeries model{"ttlpred prediction", {}}, base{"static TTL (request)", {}};
  if (e.groups.empty()) {
    c.categories.push_back("all jobs");
    model.values.push_back(e.metrics.rmse_hours);
    base.values.push_back(e.baseline_rmse_hours);
  }
  for (const GroupEvaluation* g : largest_groups(e, 12)) {
    c.categories.push_back(g->name.empty() ? "(unknown)" : g->name);
    model.values.push_back(g->metrics.rmse_hours);
    base.values.push_back(g->baseline_rmse_hours);
  }
  c.series = {model, base};
  if (grouped) c.notes.push_back("largest 12 groups by jobs");
  page.add_chart(report::draw_bar_chart(c),
                 "Root-mean-square error of the expected wall time " +
                     (grouped ? "per " + column : std::string("over all scored jobs (the trace has no group column)")) +
                     ", next to the error of using the job's requested (static) TTL as the prediction.");
}

void add_kill_rate_by_group(report::HtmlPage& page, const Evaluation& e) {
  report::BarChart c = per_group_chart(e, "Safe-TTL kill rate");
  const bool grouped = !e.group_column.empty();
  const std::string& column = e.group_column;
  c.y = Axis{"kill rate", "% of jobs", false, 0, Axis::kAuto, true};
  report::BarSeries kills{"safe TTL kill rate", {}};
  c.categories.push_back("all jobs");
  kills.values.push_back(e.metrics.kill_rate);
  for (const GroupEvaluation* g : largest_groups(e, 11)) {
    c.categories.push_back(g->name.empty() ? "(unknown)" : g->name);
    kills.values.push_back(g->metrics.kill_rate);
  }
  c.series = {kills};
  c.references = {{"target: alpha " + percent_text(e.alpha), e.alpha}};
  c.value_decimals = 2;
  page.add_chart(report::draw_bar_chart(c),
                 "Share of scored jobs the safe TTL would kill although their request let them finish, " +
                     (grouped ? "overall and per " + column + " (" : std::string("over all of them (the trace has no group column; ")) +
                     "target: alpha = " + percent_text(e.alpha) + ").");
}

void add_kill_rate_vs_alpha(report::HtmlPage& page, const KillRateCurves& k) {
  report::LineChart c;
  c.title = "Calibration: kill rate against alpha";
  c.x = Axis{"target kill rate alpha", "%", true, Axis::kAuto, Axis::kAuto, true};
  c.y = Axis{"measured kill rate", "%", true, kKillFloor, Axis::kAuto, true};
  c.diagonal = true;
  c.diagonal_name = "ideal: kills = alpha";
  report::Series model{"ttlpred safe TTL", {}}, rule{"static quantile rule", {}, true};
  bool floored = false;
  for (const auto& p : k.model) model.points.push_back({p.setting, std::max(p.kill_rate, kKillFloor)}), floored |= p.kill_rate < kKillFloor;
  for (const auto& p : k.static_rule) rule.points.push_back({p.setting, std::max(p.kill_rate, kKillFloor)}), floored |= p.kill_rate < kKillFloor;
  c.series = {model, rule};
  c.notes = {"static rule: one TTL for all,", "the (1-alpha) quantile of", "training run times"};
  if (floored) c.notes.push_back("0 kills drawn at 0.01%");
  page.add_chart(report::draw_line_chart(c),
                 "Kill rate on the scored jobs of the safe TTL calibrated at each alpha, next to the simple-rule anchor "
                 "(one TTL for every job at the same quantile of the training run times). On the diagonal, the promise "
                 "is kept exactly; above it, broken.");
}

void add_kill_rate_vs_tightness(report::HtmlPage& page, const KillRateCurves& k) {
  report::LineChart c;
  c.title = "Kill rate against TTL tightness";
  c.x = Axis{"mean TTL given to a job", "h", false, 0};
  // Log: the kill rates that matter (0.1-5 %) and the loose rules' 50-70 % on one axis,
  // where a linear one to 70 % flattens everything under 5 % onto its floor.
  c.y = Axis{"kill rate", "%", true, kKillFloor, Axis::kAuto, true};
  report::Series model{"ttlpred safe TTL", {}}, rule{"static quantile rule", {}, true}, req{"request x factor", {}, true};
  bool floored = false;
  auto point = [&](double ttl_h, double kill_rate) {
    floored |= kill_rate < kKillFloor;
    return report::Point{ttl_h, std::max(kill_rate, kKillFloor)};
  };
  for (const auto& p : k.model) model.points.push_back(point(p.mean_ttl_hours, p.kill_rate));
  for (const auto& p : k.static_rule) rule.points.push_back(point(p.mean_ttl_hours, p.kill_rate));
  for (const auto& p : k.request_rule) req.points.push_back(point(p.mean_ttl_hours, p.kill_rate));
  c.series = {model, rule};
  if (!k.request_rule.empty()) c.series.push_back(req);
  c.notes = {"lower left is better:", "shorter TTLs, fewer kills", "points: alpha 0.2% to 20%"};
  if (!k.request_rule.empty()) c.notes.push_back("request factors 0.1 to 1");
  if (floored) c.notes.push_back("0 kills drawn at 0.01%");
  page.add_chart(report::draw_line_chart(c),
                 "The price of each kill rate in TTL length: mean TTL over the scored jobs against the kill rate, for the "
                 "safe TTL at each alpha and for the simple rules at each setting.");
}

void add_latency_by_variant(report::HtmlPage& page, const std::vector<VariantLatency>& rows) {
  report::BarChart c;
  c.title = "Serving latency per engine variant";
  c.x = Axis{"engine variant", ""};
  c.y = Axis{"median latency", "us"};
  report::BarSeries one{"1 job per call", {}}, batch{"per job, 256 per call", {}};
  for (const auto& r : rows) {
    c.categories.push_back(r.variant);
    one.values.push_back(r.one_job_us);
    batch.values.push_back(r.batch256_us / 256);
  }
  c.series = {one, batch};
  if (!rows.empty()) c.notes.push_back("ISA: " + rows.front().isa);
  c.notes.push_back("one thread, job record");
  c.notes.push_back("to safe TTL");
  page.add_chart(report::draw_bar_chart(c),
                 "Median time of the whole serving path (history lookup, feature encoding, network, safe TTL) on one "
                 "thread, per engine variant: one job per call, and per job in calls of 256.");
}

std::string write_report_html(const report::HtmlPage& page, const std::string& dir) {
  const std::string path = dir + "/report.html", html = page.html();
  write_file_atomic(path, std::vector<std::uint8_t>(html.begin(), html.end()));
  return path;
}

}  // namespace ttlpred::app
