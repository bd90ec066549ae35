#pragma once
// Rolling-origin backtest: one split point is one deployment. At each split s_k of the
// eligible jobs in submit order, a model is trained (fit_model: network on the first 90% of
// rows [0, s_k), safe TTL calibrated on the last 10%), then the jobs from s_k up to the next
// split point s_{k+1} (the end of the trace after the last split) are scored: each window is
// scored once, by the newest model that could have existed when it began, as a service
// retrained at every split would have answered it.
//
// Every scored window is scored with every online calibration method (model/online_calibration.hpp)
// at every alpha, leak-free (pipeline/online_scoring.hpp), and with the simple rule
// (pipeline/simple_rule.hpp) at its margins. Nothing is fine-tuned from the previous split:
// each split trains from scratch (equivalence of a fine-tune was not shown).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "model/online_calibration.hpp"
#include "pipeline/fit_model.hpp"
#include "predict/predictor.hpp"

namespace ttlpred {

struct BacktestOptions {
  std::vector<double> splits = {0.5, 0.6, 0.7, 0.8, 0.9};
  std::vector<double> alphas = {0.005, 0.01, 0.02, 0.05};  // the tightness sweep
  double alpha = kDefaultAlpha;                               // the headline alpha
  std::vector<OnlineMethod> methods = all_online_methods();
  OnlineMethod default_method = OnlineMethod::AciCapped;
  OnlineCalibrationOptions online;  // `method` is set per method
  std::string key_column = kDefaultCalibrationKey;  // mondrian keys: a categorical field ("" or absent: one key)
  FitOptions fit;
  PredictorOptions predictor;       // bounds (alpha is set per run)
  double window_days = 7;           // kill rate per window of submit time
  std::size_t min_window_rows = 1000;
  std::vector<double> simple_rule_margins = {1.0, 1.5, 2.0, 3.0};
  // Keep every scored job's figures (SplitBacktest::jobs), for `backtest --per-job`.
  bool keep_jobs = false;
  // With keep_jobs: the levels at which each job's static safe TTL is kept, for the kill
  // rate vs tightness frontier of a fixed level chosen in hindsight (scripts/rule-hindsight.py).
  std::vector<double> job_levels = {0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015,
                                    0.02,   0.03,  0.05,  0.075, 0.1,   0.15,   0.2};
  // Non-empty: each split's model is kept in this folder and reused by a later run with the
  // same trace and training settings (pipeline/model_cache.hpp).
  std::string models_dir;
};

// Windows of submit time start at the first scored job of the first split and run across
// split points (a week scored by two models is one window: the summary merges them).
struct WindowScore {
  double start_s = 0;  // submit time the window starts at
  std::size_t rows = 0, killed = 0;
  double kill_rate = 0;
};

struct MethodScore {
  OnlineMethod method = OnlineMethod::Static;
  double alpha = 0;
  std::size_t killed = 0;
  double kill_rate = 0;
  double mean_safe_ttl_hours = 0;
  std::vector<WindowScore> windows;  // at the headline alpha only
};

struct SimpleRuleScore {
  double margin = 0;
  double kill_rate = 0;
  double mean_ttl_hours = 0;
};

// The scored jobs of one split, column by column (BacktestOptions::keep_jobs).
struct ScoredJobs {
  std::vector<double> submit_s, wait_s, wall_s, requested_s, pred_s;
  std::vector<double> user_q99_s;                 // the simple rule's q99; NaN: fewer than 5 finished
  std::vector<double> upper_s;                    // the quantile rule's head in seconds; NaN: a mean-only model
  std::vector<std::uint8_t> cold;                 // a cold start (Prediction::cold)
  std::vector<std::vector<double>> method_ttl_s;  // per method of BacktestOptions::methods, at the headline alpha
  std::vector<std::vector<double>> static_ttl_s;  // per level of BacktestOptions::job_levels
};

struct SplitBacktest {
  double split = 0, end = 0;  // fractions of the eligible jobs: scored rows [split, end)
  std::size_t train_rows = 0, scored_rows = 0;
  double rmse_hours = 0, baseline_rmse_hours = 0;  // baseline: the request as the prediction (NaN: none)
  // RMSE of the same model over every job from the split to the end of the trace: the
  // protocol of eval --split and of the peers (swf_baseline.py), comparable with theirs.
  double rmse_to_end_hours = 0;
  double mean_requested_ttl_hours = 0;              // NaN without requests
  double fit_seconds = 0;
  bool model_reused = false;  // read from BacktestOptions::models_dir, not trained
  std::vector<MethodScore> scores;                  // methods x alphas
  std::vector<SimpleRuleScore> simple_rule;         // empty without requests
  // The simple rule as a broker could deploy it: its margin fixed before the window, the
  // tightest of simple_rule_margins whose kill rate on the model's calibration tail (the
  // last calibration_fraction of the training rows) is at most alpha; margin 0 when none
  // is, and the rule answers the request. tightest_simple_rule picks its margin on the
  // scored window itself, in hindsight. Absent without requests.
  std::optional<SimpleRuleScore> simple_rule_deployed;
  ScoredJobs jobs;  // empty unless BacktestOptions::keep_jobs
  const MethodScore* find(OnlineMethod m, double alpha) const;
};

struct Backtest {
  std::vector<SplitBacktest> splits;
  double window_origin_s = 0;  // submit time of the first scored job
  BacktestOptions options;
};

using BacktestProgress = std::function<void(const std::string& line)>;

// Throws Error for splits outside (0, 1) or not strictly ascending, alphas outside (0, 1),
// or a split that leaves nothing to score.
Backtest run_backtest(const JobTable& trace, const BacktestOptions& options, const BacktestProgress& progress = {});

// The windows of `method` at the headline alpha over all splits, merged by start time.
std::vector<WindowScore> merged_windows(const Backtest& b, OnlineMethod method);

// The simple rule's tightest margin whose kill rate is <= limit (nullptr when none).
const SimpleRuleScore* tightest_simple_rule(const SplitBacktest& s, double limit);

}  // namespace ttlpred
