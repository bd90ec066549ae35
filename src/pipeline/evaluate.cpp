#include "pipeline/evaluate.hpp"

#include <cmath>
#include <limits>
#include <numeric>

#include "pipeline/online_scoring.hpp"
#include "pipeline/split_history.hpp"

namespace ttlpred {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<float> tail_as_float(std::span<const double> col, std::size_t begin) {
  std::vector<float> out(col.size() - begin);
  for (std::size_t i = begin; i < col.size(); ++i) out[i - begin] = static_cast<float>(col[i]);
  return out;
}

// RMSE of `pred` where it is known (> 0); NaN when it never is.
double rmse_where_known(std::span<const float> actual, std::span<const float> pred) {
  std::vector<float> a, p;
  for (std::size_t i = 0; i < actual.size(); ++i)
    if (pred[i] > 0) {
      a.push_back(actual[i]);
      p.push_back(pred[i]);
    }
  return a.empty() ? kNaN : rmse_hours(a, p);
}

}  // namespace

std::string breakdown_column(const JobTable& t) {
  for (Field f : {Field::JobType, Field::Queue, Field::Partition})
    if (t.has_values(f)) return std::string(info(f).name);
  return "";
}

Evaluation evaluate(const Predictor& predictor, const ChronologicalSplit& split, const HistoryMatrix* history) {
  static const EvaluationCalibration kStatic;
  return evaluate(predictor, split, history, kStatic);
}

Evaluation evaluate(const Predictor& predictor, const ChronologicalSplit& split, const HistoryMatrix* history,
                    const EvaluationCalibration& calibration) {
  const JobTable& jobs = split.jobs;
  const std::size_t begin = split.train_rows;
  Evaluation e;
  e.train_rows = begin;
  e.alpha = predictor.options().alpha;
  HistoryMatrix own;
  if (!history) {
    own = split_history(split, predictor.encoder().history_config());
    history = &own;
  }
  std::vector<std::size_t> rows(jobs.rows() - begin);
  std::iota(rows.begin(), rows.end(), begin);
  std::vector<std::uint32_t> calib_groups;
  const std::string& calib_column = predictor.model().safe_ttl.group_column;
  const QuantileHeads& heads = predictor.model().target.quantiles;
  std::vector<float> head_s;  // rows x heads
  e.predictions = predictor.predict_rows(jobs, rows, *history, &calib_groups, calib_column,
                                         heads.empty() ? nullptr : &head_s);
  if (!heads.empty()) {
    const auto wall_col = jobs.num(Field::WallTime);
    for (std::size_t h = 0; h < heads.size(); ++h) {
      std::size_t in = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) in += wall_col[rows[i]] <= head_s[i * heads.size() + h] ? 1 : 0;
      e.quantile_coverage.push_back({heads.levels[h], rows.empty() ? 0.0 : static_cast<double>(in) / static_cast<double>(rows.size())});
    }
  }
  e.calibration = calibration.online.method;
  if (calibration.online.method != OnlineMethod::Static && !predictor.model().safe_ttl.empty()) {
    TtlPolicy policy(predictor, calibration.online);
    const auto keys = key_codes(jobs, rows, calibration.key_column);
    const auto ttl = score_online(jobs, rows, e.predictions, calib_groups, keys, policy);
    for (std::size_t i = 0; i < rows.size(); ++i) e.predictions[i].safe_ttl_s = ttl[i];
  }

  const auto wall = tail_as_float(jobs.num(Field::WallTime), begin);
  const auto requested = tail_as_float(jobs.num(Field::RequestedTtl), begin);
  const auto expected = tail_as_float(jobs.num(Field::ExpectedWall), begin);
  std::vector<float> pred(rows.size()), safe(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    pred[i] = static_cast<float>(e.predictions[i].expected_wall_s);
    safe[i] = static_cast<float>(e.predictions[i].safe_ttl_s);
  }
  const bool has_requests = jobs.has_values(Field::RequestedTtl);
  const std::span<const float> req_span = has_requests ? std::span<const float>(requested) : std::span<const float>{};
  e.metrics = compute_metrics(wall, pred, safe, req_span);
  e.baseline_rmse_hours = has_requests ? rmse_where_known(wall, requested) : kNaN;
  e.oracle_rmse_hours = jobs.has_values(Field::ExpectedWall) ? rmse_where_known(wall, expected) : kNaN;

  e.group_column = breakdown_column(jobs);
  if (!e.group_column.empty()) {
    const Field f = *field_by_name(e.group_column);
    const auto codes = jobs.codes(f).subspan(begin);
    std::vector<std::uint32_t> group(codes.begin(), codes.end());
    for (const auto& g : compute_metrics_by_group(wall, pred, safe, req_span, group)) {
      GroupEvaluation ge;
      ge.name = g.group == kMissingCode ? std::string("(unknown)") : std::string(jobs.dict(f).value(g.group));
      ge.metrics = g.metrics;
      std::vector<float> gw, gr;
      for (std::size_t i = 0; i < group.size(); ++i)
        if (group[i] == g.group) {
          gw.push_back(wall[i]);
          gr.push_back(requested[i]);
        }
      ge.baseline_rmse_hours = has_requests ? rmse_where_known(gw, gr) : kNaN;
      e.groups.push_back(std::move(ge));
    }
  }
  return e;
}

}  // namespace ttlpred
