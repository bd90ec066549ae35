// Retraining and the prequential replay (learn/retrain.hpp, learn/replay.hpp) on a small
// synthetic trace whose MC jobs slow down half way (the drift scenario of
// docs/synthetic-trace.md), with tiny networks so that the whole file runs in seconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "features/encoder.hpp"
#include "learn/replay.hpp"
#include "learn/retrain.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/split.hpp"
#include "synth/generator.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

const JobTable& drift_trace() {
  static const JobTable t = [] {
    synth::GeneratorConfig g;
    g.jobs = 6000;
    g.days = 20;
    g.seed = 3;
    g.drift.slow_version_day = 10;
    g.drift.slow_version_factor = 2.0;
    return synth::generate_table(g);
  }();
  return t;
}

void tiny(TrainConfig& t) {
  t.hidden = {16, 16};
  t.threads = 1;
}

// The model serving before the drift: trained on the first 40% of the trace.
const ModelFile& current_model() {
  static const ModelFile m = [] {
    FitOptions f;
    tiny(f.train);
    f.train.max_epochs = 4;
    return fit_model(chronological_split(drift_trace(), 0.4), f, {});
  }();
  return m;
}

TEST(Retrain, DecisionRuleIsLowerRmseAndNoWorseKillRateOrWithinAlpha) {
  const struct {
    double cur_rmse, cur_kill, new_rmse, new_kill;
    bool wins;
  } cases[] = {{2.0, 0.010, 1.9, 0.010, true},    // better RMSE, same kill rate
               {2.0, 0.010, 2.0, 0.005, false},   // equal RMSE is not better
               {2.0, 0.002, 1.5, 0.008, true},    // more kills than current, but within alpha
               {2.0, 0.002, 1.5, 0.011, false},   // more kills and above alpha
               {2.0, 0.030, 1.5, 0.020, true},    // above alpha, but fewer kills than current
               {2.0, 0.010, NAN, 0.0, false}};    // no figure never wins
  for (const auto& c : cases) {
    ShadowScore cur, cand;
    cur.rmse_hours = c.cur_rmse;
    cur.kill_rate = c.cur_kill;
    cand.rmse_hours = c.new_rmse;
    cand.kill_rate = c.new_kill;
    EXPECT_EQ(candidate_wins(cur, cand, 0.01), c.wins) << c.new_rmse << " " << c.new_kill;
  }
}

TEST(Retrain, FineTuneOnDriftedOutcomesBeatsTheCurrentModelOnTheHoldout) {
  RetrainOptions o = retrain_defaults(RetrainStart::FineTune);
  o.window_s = 0;  // every outcome
  o.fit.train.threads = 1;
  const RetrainResult r = retrain(drift_trace(), current_model(), o);
  const ChronologicalSplit all = chronological_split(drift_trace(), 1.0);
  EXPECT_EQ(r.window_rows, all.jobs.rows());
  EXPECT_EQ(r.holdout_rows, static_cast<std::size_t>(std::ceil(0.2 * static_cast<double>(all.jobs.rows()))));
  EXPECT_EQ(r.train_rows + r.holdout_rows, r.window_rows);
  // The current model's shadow figures are eval's on the same held-out rows.
  ChronologicalSplit split = all;
  split.train_rows = r.train_rows;
  const Evaluation e = evaluate(Predictor(current_model(), o.predictor), split);
  EXPECT_EQ(r.current.rows, r.holdout_rows);
  EXPECT_DOUBLE_EQ(r.current.rmse_hours, e.metrics.rmse_hours);
  EXPECT_DOUBLE_EQ(r.current.kill_rate, e.metrics.kill_rate);
  // Accepted only when it wins on the whole holdout and again without its largest user's part.
  ASSERT_FALSE(r.largest_user.empty());
  EXPECT_LT(r.largest_user_rows, r.holdout_rows);
  EXPECT_EQ(r.current_without_largest.rows, r.holdout_rows - r.largest_user_rows);
  EXPECT_EQ(r.accepted, candidate_wins(r.current, r.candidate, o.predictor.alpha) &&
                            candidate_wins(r.current_without_largest, r.candidate_without_largest, o.predictor.alpha));
  // Measured: the drifted MC jobs are what the current model gets wrong, and the fine-tune learns them.
  EXPECT_TRUE(r.accepted) << r.reason;
  EXPECT_LT(r.candidate.rmse_hours, r.current.rmse_hours);
  // A fine-tune keeps the history features: a service can swap it in.
  EXPECT_EQ(r.model.encoder, current_model().encoder);
}

// The same outcomes, but the held-out part sent (as far as the journal can tell) by one user
// but for a handful: whatever the figures say, one source alone would decide, and the
// candidate is refused, naming the user.
TEST(Retrain, AHoldoutFromOneSourceCannotDecide) {
  const JobTable& t = drift_trace();
  const ChronologicalSplit all = chronological_split(t, 1.0);
  const std::size_t n = all.jobs.rows(), holdout = static_cast<std::size_t>(std::ceil(0.2 * static_cast<double>(n)));
  JobTable flooded;
  JobRecord r;
  const std::string evil = "evil";
  for (std::size_t i = 0; i < n; ++i) {
    all.jobs.record(i, r);
    if (i >= n - holdout + 10) r.text(Field::User) = evil;  // all but the first 10 held-out outcomes
    flooded.append(r);
  }
  RetrainOptions o = retrain_defaults(RetrainStart::FineTune);
  o.fit.train.threads = 1;
  const RetrainResult res = retrain(flooded, current_model(), o);
  EXPECT_FALSE(res.accepted);
  EXPECT_EQ(res.largest_user, "evil");
  EXPECT_EQ(res.largest_user_rows, res.holdout_rows - 10);
  EXPECT_EQ(res.current_without_largest.rows, 10u);
  EXPECT_NE(res.reason.find("come from user 'evil'"), std::string::npos) << res.reason;
}

TEST(Retrain, ACandidateFromScratchLearnsWhatTheCurrentModelLearns) {
  // A residual model's scratch candidate is residual too (its own base, chosen on the window),
  // with the same quantile heads, and a plain model's stays plain and mean-only: the retrain
  // does not change the kind of target it serves. Its history keys and prediction time are the
  // current model's, so a service can swap it in.
  FitOptions f;
  tiny(f.train);
  f.train.max_epochs = 2;
  f.train.quantile_levels = {0.5f, 0.9f, 0.99f};
  f.residual = true;
  f.request_key = true;
  f.at = PredictionTime::Match;
  const ModelFile residual = fit_model(chronological_split(drift_trace(), 0.4), f, {});
  ASSERT_FALSE(residual.target.residual.empty());
  const auto history_of = [](const ModelFile& m) { return FeatureEncoder::from_bytes(m.encoder, "test").history_config(); };
  const HistoryConfig trained = history_of(residual);
  ASSERT_EQ(trained.keys.back(), HistoryKey::UserRequest);
  ASSERT_EQ(trained.at, PredictionTime::Match);
  RetrainOptions o = retrain_defaults(RetrainStart::Scratch);
  o.window_s = 0;
  tiny(o.fit.train);
  o.fit.train.max_epochs = 2;
  const RetrainResult r = retrain(drift_trace(), residual, o);
  EXPECT_FALSE(r.model.target.residual.empty());
  EXPECT_EQ(r.model.target.quantiles.levels, residual.target.quantiles.levels);
  EXPECT_FALSE(r.model.safe_ttl.quantile.empty());
  EXPECT_EQ(history_of(r.model), trained);
  EXPECT_EQ(r.reason.find("history features differ"), std::string::npos) << r.reason;
  const ModelFile plain = retrain(drift_trace(), current_model(), o).model;
  EXPECT_TRUE(plain.target.residual.empty());
  EXPECT_TRUE(plain.target.quantiles.empty());
  EXPECT_EQ(history_of(plain), history_of(current_model()));
  const auto& plain_keys = history_of(plain).keys;
  EXPECT_EQ(std::find(plain_keys.begin(), plain_keys.end(), HistoryKey::UserRequest), plain_keys.end());
}

TEST(Retrain, TooFewOutcomesIsAClearError) {
  RetrainOptions o = retrain_defaults(RetrainStart::FineTune);
  const struct {
    double window_s;
    const char* says;
  } cases[] = {{600, "no outcome was submitted in the --window of 10m"},  // shorter than any job: none known
               {86400.0, "for the shadow evaluation; need at least 50"}};  // a day: a few dozen known
  for (const auto& c : cases) {
    o.window_s = c.window_s;
    try {
      retrain(drift_trace(), current_model(), o);
      ADD_FAILURE() << c.window_s << " s of outcomes were enough";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
}

ReplayOptions small_replay() {
  ReplayOptions o;
  o.initial_fraction = 0.4;
  tiny(o.initial_fit.train);
  o.initial_fit.train.max_epochs = 4;
  o.retrain = retrain_defaults(RetrainStart::FineTune);
  o.retrain.window_s = 5 * 86400.0;
  o.retrain.fit.train.threads = 1;
  o.retrain_every_s = 2 * 86400.0;
  o.week_s = 4 * 86400.0;
  o.min_window_rows = 500;
  return o;
}

TEST(Replay, WithoutRetrainingBothSidesAreTheFrozenModel) {
  ReplayOptions o = small_replay();
  o.retrain_every_s = 0;
  const ReplayResult r = run_replay(drift_trace(), o);
  EXPECT_TRUE(r.retrains.empty());
  EXPECT_EQ(r.swaps, 0u);
  EXPECT_EQ(r.retrained.rows, r.frozen.rows);
  EXPECT_EQ(r.retrained.killed, r.frozen.killed);
  EXPECT_EQ(r.retrained.rmse_hours, r.frozen.rmse_hours);
  EXPECT_EQ(r.retrained.mean_safe_ttl_hours, r.frozen.mean_safe_ttl_hours);
}

TEST(Replay, RetrainingOnScheduleSwapsAndBeatsTheFrozenModel) {
  const ReplayOptions o = small_replay();
  const ReplayResult r = run_replay(drift_trace(), o);
  const ChronologicalSplit split = chronological_split(drift_trace(), 0.4);
  EXPECT_EQ(r.initial_rows, split.train_rows);
  EXPECT_EQ(r.retrained.rows, split.scored_rows());
  // Scored days 8..20 (the first model saw 40% of the jobs): a retrain every 2 days.
  EXPECT_GE(r.retrains.size(), 5u);
  std::size_t accepted = 0, week_rows = 0, week_kills = 0;
  for (const auto& t : r.retrains) accepted += t.accepted;
  EXPECT_EQ(r.swaps, accepted);
  EXPECT_GE(r.swaps, 1u);
  for (const auto& w : r.weeks) {
    week_rows += w.retrained.rows;
    week_kills += w.retrained.killed;
    EXPECT_EQ(w.retrained.rows, w.frozen.rows);
  }
  EXPECT_EQ(week_rows, r.retrained.rows);
  EXPECT_EQ(week_kills, r.retrained.killed);
  // Each retrain learned the jobs the served TTLs killed as censored outcomes.
  std::size_t killed_known = 0;
  for (const auto& t : r.retrains) {
    if (t.ran) {
      EXPECT_LE(t.killed_rows, t.window_rows);
    }
    killed_known += t.killed_rows;
  }
  EXPECT_GT(killed_known, 0u);
  // Measured on this trace: retraining learns the slower release, the frozen model cannot.
  EXPECT_LT(r.retrained.rmse_hours, r.frozen.rmse_hours);
}

TEST(Replay, RefusesOptionsItCannotHonour) {
  ReplayOptions o = small_replay();
  o.initial_fraction = 1.0;
  EXPECT_THROW(run_replay(drift_trace(), o), Error);
  o = small_replay();
  o.retrain_every_s = 60;
  EXPECT_THROW(run_replay(drift_trace(), o), Error);
  o = small_replay();
  o.kill_margin_s = -1;
  EXPECT_THROW(run_replay(drift_trace(), o), Error);
}

}  // namespace
}  // namespace ttlpred
