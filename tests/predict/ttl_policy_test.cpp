// The safe-TTL policy (predict/ttl_policy.hpp) on hand-computed cases: static answers what
// the predictor answers, to the bit; the bounds and the cap flag; an online level moves the
// answers by its rule and keeps what it learnt across a rebase and a saved state; no answer
// below the job's expected wall time however far the level goes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/calibration_fixtures.hpp"
#include "predict/predictor.hpp"
#include "predict/ttl_policy.hpp"
#include "test_model_file.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

using test::hundred_residuals;

PredictorOptions at_alpha(double alpha) {
  PredictorOptions o;
  o.alpha = alpha;
  return o;
}

OnlineCalibrationOptions method(OnlineMethod m, double gamma = 0.01) {
  OnlineCalibrationOptions o;
  o.method = m;
  o.gamma = gamma;
  o.target_scale = 1.0;
  o.capped_target_scale = 1.0;
  return o;
}

OnlineJob job(double pred_s, double requested_s = 0) {
  Prediction p;
  p.expected_wall_s = pred_s;
  return TtlPolicy::job_of(p, requested_s);
}

// 100 residuals 0.00 .. 0.99: at level a the TTL of a job expected at 100 s is
// 100 exp((ceil(101 (1 - a)) - 1) / 100); at alpha 0.1, rank 91: 100 e^0.90.
TEST(TtlPolicy, StaticAsksTheCalibrationAtAlphaAndLearnsNothing) {
  TtlPolicy p(hundred_residuals(), at_alpha(0.1), method(OnlineMethod::Static));
  EXPECT_TRUE(p.calibrated());
  EXPECT_FALSE(p.learns());
  EXPECT_EQ(p.name(), "static");
  const OnlineDecision d = p.decide(job(100));
  EXPECT_NEAR(d.ttl_s, 100 * std::exp(0.90), 1e-3);
  EXPECT_EQ(d.level, 0.1);
  p.observe(d, 10000);  // a kill: counted, nothing moves
  EXPECT_EQ(p.kills(), 1u);
  EXPECT_EQ(p.decide(job(100)).ttl_s, d.ttl_s);
  EXPECT_NEAR(p.ttl_at_level(job(100), 0.5), 100 * std::exp(0.50), 1e-3);
  BinaryWriter w;
  EXPECT_THROW(p.write_state(w), Error);  // nothing learnt, nothing to save
}

// aci at alpha 0.1, gamma 0.01, target alpha: a kill moves the level by 0.01 (0.1 - 1) =
// -0.009 (looser: rank ceil(101 x 0.909) = 92), a job that fits by +0.001.
TEST(TtlPolicy, AnOnlineLevelMovesTheAnswersByItsRule) {
  TtlPolicy p(hundred_residuals(), at_alpha(0.1), method(OnlineMethod::Aci));
  EXPECT_TRUE(p.learns());
  EXPECT_EQ(p.name(), "aci");
  const OnlineDecision first = p.decide(job(100));
  EXPECT_NEAR(first.ttl_s, 100 * std::exp(0.90), 1e-3);
  p.observe(first, 1000);
  EXPECT_NEAR(p.level(), 0.091, 1e-12);
  const OnlineDecision second = p.decide(job(100));
  EXPECT_NEAR(second.ttl_s, 100 * std::exp(0.91), 1e-3);
  p.observe(second, 50);
  EXPECT_NEAR(p.level(), 0.092, 1e-12);
  EXPECT_EQ(p.outcomes(), 2u);
  EXPECT_EQ(p.kills(), 1u);

  // What it learnt survives a saved state and a rebase onto another model's calibration.
  BinaryWriter w;
  p.write_state(w);
  TtlPolicy restored(hundred_residuals(), at_alpha(0.1), method(OnlineMethod::Aci));
  BinaryReader r(w.bytes(), "state");
  restored.read_state(r);
  EXPECT_EQ(restored.level(), p.level());
  restored.rebase(hundred_residuals());
  EXPECT_EQ(restored.level(), p.level());
  EXPECT_EQ(restored.decide(job(100)).ttl_s, p.decide(job(100)).ttl_s);
  // A state learnt under another method is refused and leaves the policy as it was.
  TtlPolicy other(hundred_residuals(), at_alpha(0.1), method(OnlineMethod::AciCapped));
  BinaryReader again(w.bytes(), "state");
  EXPECT_THROW(other.read_state(again), Error);
  EXPECT_EQ(other.level(), 0.1);
}

// The bounds are the predictor's: the floor, the request (a hard limit, capped false), and for
// a job without one the cap, which says it cut.
TEST(TtlPolicy, AnswersAreBoundedAndSayWhenTheCapCutThem) {
  PredictorOptions bounds = at_alpha(0.1);
  bounds.max_ttl_s = 1000;
  for (const OnlineMethod m : {OnlineMethod::Static, OnlineMethod::AciCapped}) {
    TtlPolicy p(hundred_residuals(), bounds, method(m));
    bool capped = false;
    EXPECT_EQ(p.decide(job(900), &capped).ttl_s, 1000);  // 900 e^0.9 ~ 2214 s, cut by the cap
    EXPECT_TRUE(capped);
    EXPECT_EQ(p.decide(job(900, 1500), &capped).ttl_s, 1500);  // the request stands above the cap
    EXPECT_FALSE(capped);
    EXPECT_EQ(p.decide(job(900, 500), &capped).ttl_s, 500);
    EXPECT_FALSE(capped);
    EXPECT_EQ(p.decide(job(10), &capped).ttl_s, bounds.min_seconds);  // 10 e^0.9 ~ 25 s: the floor
    EXPECT_FALSE(capped);
  }
}

// Residuals -0.80 .. 0.19 (most jobs ran shorter than predicted): above level ~0.8 the
// calibration's margin is negative. However far a run of jobs that fit pushes the level, no
// answer falls below the job's expected wall time.
TEST(TtlPolicy, NoAnswerBelowTheExpectedWallTimeWhereverTheLevelGoes) {
  std::vector<float> wall, pred;
  for (int i = 0; i < 100; ++i) {
    pred.push_back(100.0f);
    wall.push_back(static_cast<float>(100.0 * std::exp((i - 80) / 100.0)));
  }
  SafeTtlOptions so;
  so.request_aware = false;
  TtlPolicy p(calibrate_safe_ttl(wall, pred, {}, so), at_alpha(0.1), method(OnlineMethod::Aci, 0.5));
  for (int i = 0; i < 200; ++i) {
    const OnlineDecision d = p.decide(job(100));
    EXPECT_GE(d.ttl_s, 100) << "outcome " << i << ", level " << d.level;
    p.observe(d, 1);
  }
  EXPECT_GT(p.level(), 0.9);  // far past where the margin turns negative
  EXPECT_EQ(p.decide(job(100)).ttl_s, 100);
}

// A model without a calibration answers its expected wall time, bounded, and learns nothing;
// rebased onto a calibrated one, it starts learning.
TEST(TtlPolicy, AnUncalibratedModelAnswersItsExpectedTime) {
  TtlPolicy p(SafeTtlCalibration{}, at_alpha(0.1), method(OnlineMethod::Aci));
  EXPECT_FALSE(p.calibrated());
  EXPECT_FALSE(p.learns());
  EXPECT_EQ(p.decide(job(100)).ttl_s, 100);
  EXPECT_EQ(p.decide(job(100, 80)).ttl_s, 80);
  p.rebase(hundred_residuals());
  EXPECT_TRUE(p.learns());
  EXPECT_NEAR(p.decide(job(100)).ttl_s, 100 * std::exp(0.90), 1e-3);
}

// A static policy of a predictor answers every job what the predictor answered, to the bit,
// whatever its request (none, short, past the cap), and through decide(Prediction&) too.
TEST(TtlPolicy, StaticAnswersEveryJobWhatThePredictorAnswers) {
  const std::string path = test::temp_dir() + "/policy.model";
  test::write_test_model(path, 3);
  PredictorOptions po;
  po.max_ttl_s = 5000;  // under some of the jobs' safe TTLs (this model's are 0.1 to 7 kiloseconds)
  const Predictor predictor = Predictor::load(path, po);
  const TtlPolicy policy(predictor, method(OnlineMethod::Static));
  const HistoryState history = predictor.initial_history();
  const std::vector<double> requests = {0, 30, 3600, 50000, 1e6};
  std::size_t capped = 0;
  for (std::size_t i = 0; i < 60; ++i) {
    JobRecord r;
    r.text(Field::User) = test::test_users()[i % test::test_users().size()];
    r.text(Field::JobType) = i % 2 ? "MC" : "USER";
    r[Field::CpuCores] = static_cast<double>(1 + i % 8);
    const double req = requests[i % requests.size()];
    if (req > 0) r[Field::RequestedTtl] = req;
    Prediction p;
    predictor.predict(std::span<const JobRecord>(&r, 1), history, std::span<Prediction>(&p, 1));
    bool cut = false;
    const OnlineDecision d = policy.decide(TtlPolicy::job_of(p, r[Field::RequestedTtl]), &cut);
    EXPECT_EQ(d.ttl_s, p.safe_ttl_s) << "job " << i;
    EXPECT_EQ(cut, p.capped && p.safe_ttl_s == po.max_ttl_s) << "job " << i;
    capped += cut ? 1 : 0;
    Prediction q = p;
    EXPECT_EQ(policy.decide(q, r[Field::RequestedTtl]).ttl_s, p.safe_ttl_s);
    EXPECT_EQ(q.capped, p.capped);
  }
  EXPECT_GT(capped, 0u) << "no job met the cap: the test does not test it";
}

}  // namespace
}  // namespace ttlpred
