#include "app/backtest_run.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "util/error.hpp"

namespace ttlpred::app {

const BacktestOptions& library_backtest_defaults() {
  static const BacktestOptions defaults;
  return defaults;
}
namespace {

// "0.5,0.6" -> {0.5, 0.6}; throws Error naming the option and the item that is no number.
std::vector<double> parse_number_list(const std::string& text, const char* option) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw Error(std::string(option) + ": '" + item + "' is not a number");
    out.push_back(v);
  }
  return out;
}

std::vector<OnlineMethod> parse_methods(const std::string& text) {
  std::vector<OnlineMethod> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(online_method_from_name(item));
  return out;
}

}  // namespace

void add_backtest_options(CLI::App& cmd, BacktestCliOptions& o) {
  cmd.add_option("--splits", o.splits, "ascending split points (fractions of the eligible jobs in submit order)")
      ->capture_default_str();
  cmd.add_option("--alphas", o.alphas, "target kill rates of the tightness sweep")->capture_default_str();
  add_alpha_option(cmd, o.alpha, "the headline target kill rate (tables, flags, windows)");
  cmd.add_option("--methods", o.methods, "calibration methods to compare: static, rolling, aci, aci-capped, multi-aci, mondrian, aci-history")
      ->capture_default_str();
  cmd.add_option("--method", o.method, "the method whose per-window kill rates --windows lists")->capture_default_str();
  add_online_tuning_options(cmd, o.online.gamma, o.online.target_scale, o.online.batch_guard,
                            {"aci, aci-capped, mondrian", "aci, multi-aci, mondrian", " (aci-capped: --capped-target-scale)"});
  cmd.add_flag("--log-step", o.online.log_level,
               "aci, aci-capped, aci-history, mondrian: step the level in log space, as serve --calibration aci-log does");
  cmd.add_option("--capped-target-scale", o.online.capped_target_scale,
                 "aci-capped: the level follows this fraction of alpha in kills")
      ->capture_default_str();
  cmd.add_option("--level-cap", o.online.level_cap, "aci-capped: the level never rises above this multiple of alpha")
      ->capture_default_str();
  cmd.add_option("--key", o.key, "mondrian calibration key: a categorical job field (user, queue, job_type ...)")
      ->capture_default_str();
  cmd.add_option("--window-days", o.window_days, "length of the kill-rate windows, in days of submit time")
      ->capture_default_str();
  cmd.add_option("--min-window-rows", o.min_window_rows, "windows with fewer scored jobs are not summarized")
      ->capture_default_str();
  cmd.add_option("--epochs", o.epochs, "maximum training epochs per split (0: the trainer's default)")
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "training seed")->capture_default_str();
  add_kill_budget_option(cmd, o.kill_budget);
  add_prediction_time_option(cmd, o.at,
                             "when the models predict: submit (history as of each job's submission) or match (as of "
                             "its start, plus the jobs of its keys running then)");
  add_censored_option(cmd, o.censored);
  add_model_choice_options(cmd, o.choices);
  add_ttl_by_group_option(cmd, o.ttl_by_group);
  add_bound_options(cmd, o.bounds);
  cmd.add_option("--models-dir", o.models_dir,
                 "keep each split's trained model in DIR and reuse it when the trace and the training settings match "
                 "(a later run then costs scoring only); empty DIR after changing the trainer");
  cmd.add_option("--out", o.out, "also write DIR/report.html: kill rate per window and per split, RMSE per split");
  cmd.add_option("--per-job", o.per_job,
                 "also write FILE (CSV): each scored job's split, times, request, user q99, prediction, the safe TTL "
                 "of every method at --alpha, the static calibration's at a sweep of levels, the per-job rule's head "
                 "quantile and whether the job is a cold start");
}

Backtest run_backtest(const JobTable& trace, const BacktestCliOptions& o, const BacktestProgress& progress) {
  BacktestOptions b;
  b.splits = parse_number_list(o.splits, "--splits");
  b.alphas = parse_number_list(o.alphas, "--alphas");
  b.alpha = o.alpha;
  if (std::find(b.alphas.begin(), b.alphas.end(), b.alpha) == b.alphas.end()) b.alphas.push_back(b.alpha);
  std::sort(b.alphas.begin(), b.alphas.end());
  b.methods = parse_methods(o.methods);
  b.default_method = online_method_from_name(o.method);
  b.key_column = o.key;
  b.online = o.online;
  b.window_days = o.window_days;
  b.min_window_rows = o.min_window_rows;
  if (o.epochs > 0) b.fit.train.max_epochs = o.epochs;
  b.fit.train.seed = o.seed;
  b.fit.safe_ttl.request.budget = kill_budget_from_name(o.kill_budget);
  b.fit.at = parse_prediction_time(o.at, PredictionTime::Submit);
  b.fit.censored = parse_censored(o.censored);
  apply_model_choices(o.choices, b.fit);
  b.fit.safe_ttl.request_by_group = o.ttl_by_group;
  b.models_dir = o.models_dir;
  b.keep_jobs = !o.per_job.empty();
  b.predictor.max_ttl_s = o.bounds.max_ttl_s;
  b.predictor.min_seconds = o.bounds.min_seconds;
  return ttlpred::run_backtest(trace, b, progress);
}

}  // namespace ttlpred::app
