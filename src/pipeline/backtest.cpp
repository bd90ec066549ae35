#include "pipeline/backtest.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <span>

#include "pipeline/model_cache.hpp"
#include "pipeline/online_scoring.hpp"
#include "pipeline/simple_rule.hpp"
#include "pipeline/split.hpp"
#include "pipeline/split_history.hpp"
#include "train/metrics.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check_options(const BacktestOptions& o) {
  if (o.splits.empty()) throw Error("--splits: give at least one split point");
  for (std::size_t i = 0; i < o.splits.size(); ++i) {
    if (!(o.splits[i] > 0 && o.splits[i] < 1)) throw Error("--splits: every split must lie in (0, 1), got " + std::to_string(o.splits[i]));
    if (i > 0 && !(o.splits[i] > o.splits[i - 1])) throw Error("--splits must be strictly ascending");
  }
  if (o.alphas.empty()) throw Error("--alphas: give at least one alpha");
  for (double a : o.alphas)
    if (!(a > 0 && a < 1)) throw Error("--alphas: every alpha must lie in (0, 1), got " + std::to_string(a));
  if (!(o.alpha > 0 && o.alpha < 1)) throw Error("--alpha must lie in (0, 1)");
  if (o.methods.empty()) throw Error("--methods: give at least one calibration method");
  if (!(o.window_days > 0)) throw Error("--window-days must be > 0");
}

std::vector<WindowScore> weekly(std::span<const double> submit, std::span<const int> killed, double t0, double window_s) {
  std::vector<WindowScore> out;
  for (std::size_t i = 0; i < submit.size(); ++i) {
    const auto w = static_cast<std::size_t>(std::floor(std::max(submit[i] - t0, 0.0) / window_s));
    while (out.size() <= w) {
      WindowScore s;
      s.start_s = t0 + static_cast<double>(out.size()) * window_s;
      out.push_back(s);
    }
    ++out[w].rows;
    out[w].killed += static_cast<std::size_t>(killed[i]);
  }
  for (auto& s : out) s.kill_rate = s.rows ? static_cast<double>(s.killed) / static_cast<double>(s.rows) : kNaN;
  out.erase(std::remove_if(out.begin(), out.end(), [](const WindowScore& w) { return w.rows == 0; }), out.end());
  return out;
}

}  // namespace

std::vector<WindowScore> merged_windows(const Backtest& b, OnlineMethod method) {
  std::map<double, WindowScore> by_start;
  for (const auto& s : b.splits)
    if (const MethodScore* ms = s.find(method, b.options.alpha))
      for (const auto& w : ms->windows) {
        WindowScore& m = by_start[w.start_s];
        m.start_s = w.start_s;
        m.rows += w.rows;
        m.killed += w.killed;
      }
  std::vector<WindowScore> out;
  for (auto& [start, w] : by_start) {
    w.kill_rate = w.rows ? static_cast<double>(w.killed) / static_cast<double>(w.rows) : kNaN;
    out.push_back(w);
  }
  return out;
}

const MethodScore* SplitBacktest::find(OnlineMethod m, double alpha) const {
  for (const auto& s : scores)
    if (s.method == m && s.alpha == alpha) return &s;
  return nullptr;
}

const SimpleRuleScore* tightest_simple_rule(const SplitBacktest& s, double limit) {
  const SimpleRuleScore* best = nullptr;
  for (const auto& r : s.simple_rule)
    if (r.kill_rate <= limit && (!best || r.mean_ttl_hours < best->mean_ttl_hours)) best = &r;
  return best;
}

Backtest run_backtest(const JobTable& trace, const BacktestOptions& options, const BacktestProgress& progress) {
  check_options(options);
  Backtest result;
  result.options = options;
  const std::string trace_digest = options.models_dir.empty() ? std::string() : table_digest(trace, trace.rows());
  for (std::size_t k = 0; k < options.splits.size(); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const ChronologicalSplit split = chronological_split(trace, options.splits[k]);
    const JobTable& jobs = split.jobs;
    const double end_fraction = k + 1 < options.splits.size() ? options.splits[k + 1] : 1.0;
    const std::size_t end_row =
        k + 1 < options.splits.size()
            ? static_cast<std::size_t>(std::floor(end_fraction * static_cast<double>(jobs.rows())))
            : jobs.rows();
    if (end_row <= split.train_rows)
      throw Error("split " + std::to_string(options.splits[k]) + " leaves no job to score before the next split");
    if (progress) {
      char line[160];
      std::snprintf(line, sizeof line, "split %.2f: training on %zu jobs, scoring %zu", options.splits[k],
                    split.train_rows, end_row - split.train_rows);
      progress(line);
    }
    if (k == 0) result.window_origin_s = jobs.num(Field::SubmitTime)[split.train_rows];
    CachedFit fitted = fit_or_reuse_model(split, options.fit, options.models_dir, trace_digest);
    const ModelFile model = std::move(fitted.model);
    if (progress && fitted.reused) progress("  model reused from " + options.models_dir);
    PredictorOptions popts = options.predictor;
    popts.alpha = options.alpha;
    const Predictor predictor(model, popts);
    const HistoryMatrix history = split_history(split, predictor.encoder().history_config());
    double rmse_to_end = kNaN;
    // Every row to the end is predicted: the window's are scored, and the RMSE over all of
    // them is the figure the peers' protocol (train at the split, score the rest) reports.
    std::vector<std::size_t> rows(jobs.rows() - split.train_rows);
    std::iota(rows.begin(), rows.end(), split.train_rows);
    std::vector<std::uint32_t> groups;
    auto preds = predictor.predict_rows(jobs, rows, history, &groups, model.safe_ttl.group_column);
    {
      std::vector<float> w(rows.size()), p(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        w[i] = static_cast<float>(jobs.num(Field::WallTime)[rows[i]]);
        p[i] = static_cast<float>(preds[i].expected_wall_s);
      }
      rmse_to_end = rmse_hours(w, p);
    }
    rows.resize(end_row - split.train_rows);
    preds.resize(rows.size());
    groups.resize(rows.size());
    const auto keys = key_codes(jobs, rows, options.key_column);

    SplitBacktest s;
    s.split = options.splits[k];
    s.end = end_fraction;
    s.train_rows = split.train_rows;
    s.scored_rows = rows.size();
    s.model_reused = fitted.reused;
    s.fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto wall_col = jobs.num(Field::WallTime), req_col = jobs.num(Field::RequestedTtl),
               submit_col = jobs.num(Field::SubmitTime);
    const bool has_req = jobs.has_values(Field::RequestedTtl);
    std::vector<float> wall(rows.size()), pred(rows.size()), req(rows.size());
    std::vector<double> submit(rows.size());
    double req_sum = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      wall[i] = static_cast<float>(wall_col[rows[i]]);
      pred[i] = static_cast<float>(preds[i].expected_wall_s);
      req[i] = static_cast<float>(has_req ? req_col[rows[i]] : 0.0);
      submit[i] = submit_col[rows[i]];
      req_sum += req[i];
    }
    s.rmse_hours = rmse_hours(wall, pred);
    s.rmse_to_end_hours = rmse_to_end;
    s.baseline_rmse_hours = has_req ? rmse_hours(wall, req) : kNaN;
    s.mean_requested_ttl_hours = has_req ? req_sum / static_cast<double>(rows.size()) / 3600.0 : kNaN;

    // The user's q99 (pipeline/simple_rule.hpp) of the model's calibration tail (the last
    // calibration_fraction of the training rows) and of the scored jobs, from one walk of the
    // trace: the simple rule, aci-history and --per-job read it.
    const bool with_history =
        std::find(options.methods.begin(), options.methods.end(), OnlineMethod::AciHistory) != options.methods.end();
    const std::size_t tail_begin = split.train_rows - calibration_rows(split.train_rows, options.fit.calibration_fraction);
    const std::vector<double> tail_and_scored_q99 = has_req || with_history || options.keep_jobs
                                                        ? simple_rule_q99(split, tail_begin, end_row)
                                                        : std::vector<double>{};
    const std::span<const double> q99 =
        tail_and_scored_q99.empty() ? std::span<const double>{}
                                    : std::span<const double>(tail_and_scored_q99).subspan(split.train_rows - tail_begin);
    // aci-history's table: its residuals on the calibration tail.
    ResidualQuantiles history_rule;
    if (with_history) history_rule = simple_rule_residuals(split, tail_begin, split.train_rows, model.safe_ttl.floor_s);

    for (OnlineMethod m : options.methods)
      for (double alpha : options.alphas) {
        OnlineCalibrationOptions oo = options.online;
        oo.method = m;
        PredictorOptions at_alpha = popts;
        at_alpha.alpha = alpha;
        TtlPolicy policy(model.safe_ttl, at_alpha, oo);
        const bool history = m == OnlineMethod::AciHistory;
        if (history) policy.set_history_rule(history_rule);
        const auto ttl = score_online(jobs, rows, preds, groups, keys, policy,
                                      history ? q99 : std::span<const double>{});
        MethodScore ms;
        ms.method = m;
        ms.alpha = alpha;
        std::vector<int> killed(rows.size());
        double ttl_sum = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          killed[i] = killed_by(wall[i], ttl[i], req[i]);
          ms.killed += static_cast<std::size_t>(killed[i]);
          ttl_sum += ttl[i];
        }
        ms.kill_rate = static_cast<double>(ms.killed) / static_cast<double>(rows.size());
        ms.mean_safe_ttl_hours = ttl_sum / static_cast<double>(rows.size()) / 3600.0;
        if (alpha == options.alpha) {
          ms.windows = weekly(submit, killed, result.window_origin_s, options.window_days * 86400.0);
          if (options.keep_jobs) s.jobs.method_ttl_s.push_back(ttl);
        }
        s.scores.push_back(std::move(ms));
      }

    if (has_req) {
      auto score = [&](double margin) {
        const SimpleRuleOutcome o = simple_rule_outcome(q99, wall, req, margin);
        return SimpleRuleScore{margin, o.kill_rate, o.mean_ttl_s / 3600.0};
      };
      for (double margin : options.simple_rule_margins) s.simple_rule.push_back(score(margin));
      // The deployable rule fixes its margin where the model's safe TTL is calibrated, on the
      // calibration tail at the promise (alpha): the one choice a broker could make before the window.
      std::vector<float> tail_wall, tail_req;
      for (std::size_t r = tail_begin; r < split.train_rows; ++r) {
        tail_wall.push_back(static_cast<float>(wall_col[r]));
        tail_req.push_back(static_cast<float>(req_col[r] > 0 ? req_col[r] : 0.0));
      }
      const auto tail_q99 = std::span<const double>(tail_and_scored_q99).first(split.train_rows - tail_begin);
      s.simple_rule_deployed =
          score(tightest_margin_within(tail_q99, tail_wall, tail_req, options.simple_rule_margins, options.alpha));
    }
    if (options.keep_jobs) {
      ScoredJobs& kept = s.jobs;
      const auto wait_col = jobs.num(Field::WaitTime);
      kept.user_q99_s.assign(q99.begin(), q99.end());
      const TtlPolicy policy(model.safe_ttl, popts, options.online);
      kept.static_ttl_s.assign(options.job_levels.size(), std::vector<double>(rows.size()));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::size_t r = rows[i];
        kept.submit_s.push_back(submit[i]);
        kept.wait_s.push_back(wait_col[r]);
        kept.wall_s.push_back(wall_col[r]);
        const double requested = has_req && req_col[r] > 0 ? req_col[r] : 0.0;
        kept.requested_s.push_back(requested);
        kept.pred_s.push_back(preds[i].expected_wall_s);
        kept.upper_s.push_back(preds[i].upper_s);
        kept.cold.push_back(preds[i].cold ? 1 : 0);
        OnlineJob job = TtlPolicy::job_of(preds[i], requested);
        job.group = groups[i];
        for (std::size_t l = 0; l < options.job_levels.size(); ++l)
          kept.static_ttl_s[l][i] = policy.ttl_at_level(job, options.job_levels[l]);
      }
    }
    result.splits.push_back(std::move(s));
  }
  return result;
}

}  // namespace ttlpred
