#include "learn/retrain.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "features/encoder.hpp"
#include "learn/duration.hpp"
#include "learn/window_table.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/split.hpp"
#include "train/metrics.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

ShadowScore shadow_score(const Evaluation& e) {
  ShadowScore s;
  s.rows = e.metrics.rows;
  s.rmse_hours = e.metrics.rmse_hours;
  s.kill_rate = e.metrics.kill_rate;
  s.mean_safe_ttl_hours = e.metrics.mean_safe_ttl_hours;
  return s;
}

// Both models' shadow scores over the held-out rows of every user but the one with the most
// of them.
void score_without_largest_user(RetrainResult& r, const ChronologicalSplit& split, const Evaluation& current,
                                const Evaluation& candidate) {
  if (!split.jobs.has_values(Field::User)) return;
  const std::size_t n = split.jobs.rows();
  std::unordered_map<std::string_view, std::size_t> rows_of;
  for (std::size_t i = split.train_rows; i < n; ++i) ++rows_of[split.jobs.text(Field::User, i)];
  for (const auto& [user, count] : rows_of)
    if (count > r.largest_user_rows || (count == r.largest_user_rows && user < r.largest_user)) {
      r.largest_user = std::string(user);
      r.largest_user_rows = count;
    }
  auto score = [&](const Evaluation& e) {
    std::vector<float> wall, pred, safe, req;
    const auto w = split.jobs.num(Field::WallTime), q = split.jobs.num(Field::RequestedTtl);
    for (std::size_t i = split.train_rows; i < n; ++i) {
      if (split.jobs.text(Field::User, i) == r.largest_user) continue;
      const Prediction& p = e.predictions[i - split.train_rows];
      wall.push_back(static_cast<float>(w[i]));
      pred.push_back(static_cast<float>(p.expected_wall_s));
      safe.push_back(static_cast<float>(p.safe_ttl_s));
      req.push_back(static_cast<float>(q[i]));
    }
    const AccuracyMetrics m = compute_metrics(wall, pred, safe, req);
    ShadowScore s;
    s.rows = m.rows;
    s.rmse_hours = m.rmse_hours;
    s.kill_rate = m.kill_rate;
    s.mean_safe_ttl_hours = m.mean_safe_ttl_hours;
    return s;
  };
  r.current_without_largest = score(current);
  r.candidate_without_largest = score(candidate);
}

std::string decide(RetrainResult& r, double alpha, std::size_t min_rest) {
  char buf[384];
  const ShadowScore &c = r.current, &n = r.candidate;
  const bool better_rmse = n.rmse_hours < c.rmse_hours;
  r.accepted = candidate_wins(c, n, alpha);
  if (!r.largest_user.empty()) {
    const ShadowScore &cr = r.current_without_largest, &nr = r.candidate_without_largest;
    if (cr.rows < min_rest) {
      r.accepted = false;
      std::snprintf(buf, sizeof buf,
                    "refused: %zu of the %zu held-out outcomes come from user '%.64s'; the other users' %zu are too "
                    "few (at least %zu) to confirm a decision one source could make alone",
                    r.largest_user_rows, r.holdout_rows, r.largest_user.c_str(), cr.rows, min_rest);
      return buf;
    }
    if (r.accepted && !candidate_wins(cr, nr, alpha)) {
      r.accepted = false;
      std::snprintf(buf, sizeof buf,
                    "refused: it wins only with the %zu held-out outcomes of user '%.64s'; without them RMSE %.3f h "
                    "against %.3f h, kill rate %.2f%% against %.2f%%",
                    r.largest_user_rows, r.largest_user.c_str(), nr.rmse_hours, cr.rmse_hours, 100 * nr.kill_rate,
                    100 * cr.kill_rate);
      return buf;
    }
  }
  if (r.accepted)
    std::snprintf(buf, sizeof buf, "accepted: RMSE %.3f h < %.3f h and kill rate %.2f%% (current %.2f%%, alpha %.2f%%)",
                  n.rmse_hours, c.rmse_hours, 100 * n.kill_rate, 100 * c.kill_rate, 100 * alpha);
  else if (!better_rmse)
    std::snprintf(buf, sizeof buf, "refused: RMSE %.3f h is not below the current model's %.3f h", n.rmse_hours,
                  c.rmse_hours);
  else
    std::snprintf(buf, sizeof buf, "refused: kill rate %.2f%% is above the current model's %.2f%% and alpha %.2f%%",
                  100 * n.kill_rate, 100 * c.kill_rate, 100 * alpha);
  return buf;
}

}  // namespace

bool candidate_wins(const ShadowScore& current, const ShadowScore& candidate, double alpha) {
  return candidate.rmse_hours < current.rmse_hours &&
         (candidate.kill_rate <= current.kill_rate || candidate.kill_rate <= alpha);
}

const char* retrain_start_name(RetrainStart s) { return s == RetrainStart::FineTune ? "fine-tune" : "scratch"; }

RetrainStart retrain_start_from_name(const std::string& name) {
  if (name == "fine-tune") return RetrainStart::FineTune;
  if (name == "scratch") return RetrainStart::Scratch;
  throw Error("--from: expected fine-tune or scratch, got '" + name + "'");
}

RetrainOptions retrain_defaults(RetrainStart start) {
  RetrainOptions o;
  o.start = start;
  o.fit.censored = kDefaultRetrainCensored;
  if (start == RetrainStart::FineTune) set_finetune_defaults(o.fit.train);
  return o;
}

RetrainResult retrain(const JobTable& outcomes, const ModelFile& current, const RetrainOptions& o,
                      const JobTable* original) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!(o.holdout_fraction > 0 && o.holdout_fraction <= 0.5))
    throw Error("--holdout must be in (0, 0.5], got " + std::to_string(o.holdout_fraction));
  if (!(o.window_s >= 0)) throw Error("--window must not be negative");
  RetrainResult r;
  r.start = o.start;
  double end = -INFINITY;
  for (std::size_t i = 0; i < outcomes.rows(); ++i) end = std::max(end, outcome_known_at(outcomes, i));
  if (!std::isfinite(end)) throw Error("retrain: no outcome with a submit and a run time to learn from");
  auto rows = rows_in_window(outcomes, {end, o.window_s});
  if (o.max_outcomes > 0 && rows.size() > o.max_outcomes)
    rows.erase(rows.begin(), rows.end() - static_cast<std::ptrdiff_t>(o.max_outcomes));
  if (rows.empty() && !original)
    throw Error("retrain: no outcome was submitted in the --window of " + duration_text(o.window_s) + " before the newest");
  JobTable window = outcomes.select(rows);
  const double window_start = rows.empty() ? end : window.num(Field::SubmitTime)[0];
  JobTable learn = original ? concat_before(*original, window_start, window, &r.original_rows) : std::move(window);
  ChronologicalSplit split = chronological_split(std::move(learn), 1.0);
  const auto submit = split.jobs.num(Field::SubmitTime);
  const std::size_t n = split.jobs.rows();
  r.window_rows = static_cast<std::size_t>(submit.end() - std::lower_bound(submit.begin(), submit.end(), window_start));
  r.window_start_s = window_start;
  r.window_end_s = n ? submit[n - 1] : end;
  r.holdout_rows = static_cast<std::size_t>(std::ceil(o.holdout_fraction * static_cast<double>(r.window_rows)));
  if (r.holdout_rows < o.min_holdout_rows)
    throw Error("retrain: " + std::to_string(r.window_rows) + " eligible outcomes in the window hold out " +
                std::to_string(r.holdout_rows) + " for the shadow evaluation; need at least " +
                std::to_string(o.min_holdout_rows) + " (a longer --window, or more outcomes)");
  split.train_rows = n - r.holdout_rows;
  split.fraction = static_cast<double>(split.train_rows) / static_cast<double>(n);
  r.train_rows = split.train_rows;

  FitOptions fit = o.fit;
  if (o.start == RetrainStart::FineTune) {
    fit.init = &current;
    fit.group_column = current.safe_ttl.group_column;
  } else {
    // A candidate from scratch learns what the current model learns: its run time, or its
    // distance from a history estimate (a fine-tune keeps the starting model's base), with
    // the same quantile heads (each job's own safe TTL), from the same history keys at the
    // same prediction time (or a service could not swap it in).
    fit.residual = !current.target.residual.empty();
    fit.train.quantile_levels = current.target.quantiles.levels;
    const FeatureEncoder encoder = FeatureEncoder::from_bytes(current.encoder, "the current model's encoder");
    const HistoryConfig& history = encoder.history_config();
    fit.encoder.piecewise_bins = encoder.piecewise_bins();
    fit.at = history.at;
    fit.request_key = std::find(history.keys.begin(), history.keys.end(), HistoryKey::UserRequest) != history.keys.end();
    fit.censored_rates = history.censored_rates;
    if (o.keep_hidden && current.mlp.layers.size() > 1) {
      fit.train.hidden.clear();
      for (std::size_t i = 0; i + 1 < current.mlp.layers.size(); ++i) fit.train.hidden.push_back(current.mlp.layers[i].out);
    }
  }
  r.model = fit_model(split, fit, ProgressFn{});

  const Predictor current_predictor(current, o.predictor, "the current model");
  const Predictor candidate_predictor(r.model, o.predictor, "the candidate model");
  const Evaluation current_eval = evaluate(current_predictor, split);
  const Evaluation candidate_eval = evaluate(candidate_predictor, split);
  r.current = shadow_score(current_eval);
  r.candidate = shadow_score(candidate_eval);
  score_without_largest_user(r, split, current_eval, candidate_eval);
  if (!(candidate_predictor.encoder().history_config() == current_predictor.encoder().history_config())) {
    r.accepted = false;
    r.reason = "refused: its history features differ from the current model's (a service could not swap it in)";
  } else {
    r.reason = decide(r, o.predictor.alpha, o.min_holdout_rows);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace ttlpred
