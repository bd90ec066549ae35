// Online scoring is leak-free (pipeline/online_scoring.hpp): a job's TTL depends only on the
// outcomes known by its submit time. Checked by changing one job's outcome: every job
// submitted before that outcome became known keeps its TTL to the bit, and a job submitted
// after it does see it (so the check is not vacuous).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/calibration_fixtures.hpp"
#include "model/online_calibration.hpp"
#include "pipeline/online_scoring.hpp"
#include "pipeline/simple_rule.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

using test::hundred_residuals;

// The hundred residuals at alpha 0.1 within the predictor's bounds (a policy to score with;
// none of the TTLs here meets the floor or the cap).
TtlPolicy policy(const OnlineCalibrationOptions& o) {
  PredictorOptions bounds;
  bounds.alpha = 0.1;
  return TtlPolicy(hundred_residuals(), bounds, o);
}

// Ten jobs of q99 100 s and a 1000 s request: run times 100 s x 7, 140, 190 and 2000 s (the
// last outran its request: never a kill). Margin 1 kills 140 and 190 (20 %), 1.5 kills 190
// (10 %), 2 none.
TEST(SimpleRule, TheTightestMarginWithinALimitIsChosenOnTheRowsGiven) {
  const std::vector<double> q99(10, 100.0);
  const std::vector<float> wall = {100, 100, 100, 100, 100, 100, 100, 140, 190, 2000};
  const std::vector<float> req(10, 1000.0f);
  const std::vector<double> margins = {3, 1, 2, 1.5};
  const SimpleRuleOutcome one = simple_rule_outcome(q99, wall, req, 1);
  EXPECT_DOUBLE_EQ(one.kill_rate, 0.2);
  EXPECT_DOUBLE_EQ(one.mean_ttl_s, 100.0);
  EXPECT_DOUBLE_EQ(simple_rule_outcome(q99, wall, req, 1.5).kill_rate, 0.1);
  EXPECT_DOUBLE_EQ(tightest_margin_within(q99, wall, req, margins, 0.2), 1.0);
  EXPECT_DOUBLE_EQ(tightest_margin_within(q99, wall, req, margins, 0.1), 1.5);
  EXPECT_DOUBLE_EQ(tightest_margin_within(q99, wall, req, margins, 0.05), 2.0);
  // None within the limit: 0, and margin 0 answers the request, which kills nothing.
  EXPECT_DOUBLE_EQ(tightest_margin_within(q99, wall, req, std::vector<double>{1, 1.5}, 0.05), 0.0);
  const SimpleRuleOutcome request = simple_rule_outcome(q99, wall, req, 0);
  EXPECT_DOUBLE_EQ(request.kill_rate, 0.0);
  EXPECT_DOUBLE_EQ(request.mean_ttl_s, 1000.0);
  // A row whose user has no q99 keeps its request at every margin.
  std::vector<double> partly = q99;
  partly[8] = std::nan("");
  EXPECT_DOUBLE_EQ(simple_rule_outcome(partly, wall, req, 1.5).kill_rate, 0.0);
  EXPECT_DOUBLE_EQ(simple_rule_outcome(partly, wall, req, 1.5).mean_ttl_s, (9 * 150.0 + 1000.0) / 10);
  EXPECT_THROW(simple_rule_outcome(q99, std::vector<float>(3, 1.0f), req, 1), Error);
}

// 40 jobs of user "u" every 10 s, no wait, 50 s each, but job `odd` runs `odd_wall`
// seconds; with a request of `request` s when > 0.
JobTable steady_jobs(int odd, double odd_wall, double request = 0) {
  JobTable t;
  for (int i = 0; i < 40; ++i) {
    JobRecord r;
    r[Field::SubmitTime] = 10.0 * i;
    r[Field::WaitTime] = 0;
    r[Field::WallTime] = i == odd ? odd_wall : 50;
    if (request > 0) r[Field::RequestedTtl] = request;
    r.text(Field::User) = "u";
    t.append(r);
  }
  return t;
}

// 100 s predicted for every job; job 0 runs `first_wall` seconds.
JobTable trace(double first_wall) { return steady_jobs(0, first_wall); }

std::vector<double> ttls(const JobTable& t, OnlineMethod method = OnlineMethod::Aci) {
  std::vector<std::size_t> rows(t.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  std::vector<Prediction> preds(rows.size());
  for (auto& p : preds) p.expected_wall_s = 100;
  std::vector<std::uint32_t> groups(rows.size(), kNoGroup), keys(rows.size(), 0);
  OnlineCalibrationOptions o;
  o.method = method;
  o.gamma = 0.05;  // large, so that any outcome moves the next TTLs
  o.capped_target_scale = 1.0;  // aci-capped aims at alpha: from 0.1, up 0.005 per finished job
  TtlPolicy p = policy(o);
  return score_online(t, rows, preds, groups, keys, p);
}

TEST(OnlineScoring, AnOutcomeKnownAfterASubmitNeverChangesThatJobsTtl) {
  // Job 0 (submitted at 0) runs 200 s, or 120 s: both within its first TTL (100 e^0.9 ~ 246 s),
  // so it is known at 200 s, or at 120 s. Jobs submitted at 0..110 s cannot know it either way.
  const auto a = ttls(trace(200));
  const auto b = ttls(trace(120));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i <= 11; ++i) EXPECT_EQ(a[i], b[i]) << "job " << i;
  // Jobs 1.. finish at submit + 50 s and are known 50 s later either way; job 0's outcome
  // arrives at 120 s in b and at 200 s in a, so jobs submitted in [120, 200) differ.
  bool differs = false;
  for (std::size_t i = 12; i < 20; ++i) differs = differs || a[i] != b[i];
  EXPECT_TRUE(differs);
}

TEST(OnlineScoring, AciCappedIsLeakFreeToo) {
  // As above, under aci-capped (level from alpha = 0.1 up by 0.05 x 0.1 per finished job,
  // capped at 0.15): job 12 (submitted at 120 s) knows jobs 1-7, plus job 0 when it ended at
  // 120 s: level 0.135 or 0.14, TTL rank ceil(101 x 0.865) = 88 or ceil(101 x 0.86) = 87.
  const auto a = ttls(trace(200), OnlineMethod::AciCapped);
  const auto b = ttls(trace(120), OnlineMethod::AciCapped);
  for (std::size_t i = 0; i <= 11; ++i) EXPECT_EQ(a[i], b[i]) << "job " << i;
  EXPECT_NEAR(a[12], 100 * std::exp(0.87), 1e-3);
  EXPECT_NEAR(b[12], 100 * std::exp(0.86), 1e-3);
}

TEST(OnlineScoring, AKillIsKnownWhenTheTtlRunsOut) {
  // Job 0 runs 10000 s, far past its first TTL (100 e^0.93 ~ 253 s at ACI's starting level
  // 0.75 alpha): the kill is known at ~253 s, not at 10000 s, so every later job answers as
  // after a run of 300 s (also killed at ~253 s).
  const auto a = ttls(trace(10000));
  const auto b = ttls(trace(300));
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "job " << i;
  const auto c = ttls(trace(200));  // not killed: the job submitted at 300 s sees a kill in a only
  EXPECT_NE(a[30], c[30]);
}

TEST(OnlineScoring, RefusesRowsOutOfSubmitOrder) {
  const JobTable t = trace(50);
  std::vector<std::size_t> rows = {1, 0};
  std::vector<Prediction> preds(2);
  std::vector<std::uint32_t> g(2, kNoGroup), k(2, 0);
  TtlPolicy p = policy({});
  EXPECT_THROW(score_online(t, rows, preds, g, k, p), Error);
}

TEST(SimpleRule, InterpolatedQuantileMatchesNumpy) {
  // numpy.quantile([1, 2, 3, 4, 10], 0.99) = 4 + 0.96 * 6 = 9.76
  EXPECT_NEAR(interpolated_quantile({10, 1, 3, 2, 4}, 0.99), 9.76, 1e-12);
  EXPECT_DOUBLE_EQ(interpolated_quantile({5}, 0.99), 5.0);
  EXPECT_DOUBLE_EQ(simple_rule_ttl(std::nan(""), 2, 3600), 3600);
  EXPECT_DOUBLE_EQ(simple_rule_ttl(1000, 2, 3600), 2000);
  EXPECT_DOUBLE_EQ(simple_rule_ttl(1000, 5, 3600), 3600);
}

// 40 jobs of user "u" every 10 s, no wait, 50 s each, but job 30 runs `long_wall`; with a
// request of `request` s when > 0. Job j has seen the j - 4 jobs 0..j-5 finish (each 50 s,
// job 30 finishing after the last submit), so rows 9..39 have a q99 of exactly 50 s.
ChronologicalSplit history_trace(double long_wall, double request) {
  return chronological_split(steady_jobs(30, long_wall, request), 0.5);
}

TEST(SimpleRule, ResidualsAreTheLogRatioToTheUsersQ99) {
  const auto q99 = simple_rule_q99(history_trace(100, 0), 0, 40);
  for (std::size_t j = 0; j < 9; ++j) EXPECT_TRUE(std::isnan(q99[j])) << j;  // fewer than 5 finished
  for (std::size_t j = 9; j < 40; ++j) EXPECT_DOUBLE_EQ(q99[j], 50.0) << j;
  // 31 rows with a q99: 30 of them ran 50 s (residual 0), job 30 ran 100 s (log 2).
  const ResidualQuantiles r = simple_rule_residuals(history_trace(100, 0), 0, 40);
  ASSERT_EQ(r.n, 31u);
  EXPECT_NEAR(r.values.back(), std::log(2.0), 1e-6);
  EXPECT_EQ(r.values.front(), 0.0f);
  EXPECT_NEAR(r.conformal_quantile(0.01), std::log(2.0), 1e-6);  // rank ceil(32 x 0.99) = 32 > 31
  EXPECT_EQ(r.conformal_quantile(0.1), 0.0);                      // rank ceil(32 x 0.9) = 29
  // With a 60 s request job 30 outran it: never killed, so not in the table.
  const ResidualQuantiles capped = simple_rule_residuals(history_trace(100, 60), 0, 40);
  EXPECT_EQ(capped.n, 30u);
  EXPECT_EQ(capped.values.back(), 0.0f);
  // Only rows [20, 40): 20 of them, job 30 among them.
  EXPECT_EQ(simple_rule_residuals(history_trace(100, 0), 20, 40).n, 20u);
}

}  // namespace
}  // namespace ttlpred
