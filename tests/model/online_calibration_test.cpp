// The online calibrator's update rules on hand-computed sequences (model/online_calibration.hpp).
// The static calibration is 100 log-ratio residuals 0.00, 0.01, ..., 0.99, so the TTL at level
// a of a job predicted at 100 s is 100 * exp((ceil(101 (1 - a)) - 1) / 100).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/calibration_fixtures.hpp"
#include "model/online_calibration.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

using test::hundred_residuals;

// A method alone: no batch guard (guarded() below adds it).
OnlineCalibrationOptions plain(OnlineMethod m) {
  OnlineCalibrationOptions o;
  o.method = m;
  o.target_scale = 1.0;
  o.gamma = 0.01;
  o.batch_guard = false;
  return o;
}

OnlineJob job(std::uint32_t key = 0) {
  OnlineJob j;
  j.pred_s = 100;
  j.key = key;
  return j;
}

constexpr double kKilledWall = 1000;  // longer than any TTL below
constexpr double kFinishedWall = 50;  // shorter than any

TEST(OnlineCalibration, StaticNeverMoves) {
  OnlineCalibrator c(hundred_residuals(), 0.1, plain(OnlineMethod::Static));
  const auto d = c.decide(job());
  EXPECT_NEAR(d.ttl_s, 100 * std::exp(0.90), 1e-3);  // rank ceil(101 * 0.9) = 91 -> residual 0.90
  c.observe(d, kKilledWall);
  c.observe(d, kKilledWall);
  EXPECT_DOUBLE_EQ(c.level(), 0.1);
  EXPECT_EQ(c.kills(), 2u);
  EXPECT_EQ(c.outcomes(), 2u);
}

TEST(OnlineCalibration, AciUpdateRule) {
  // a_{t+1} = a_t + gamma (alpha - err): 0.1 -> 0.091 (kill) -> 0.092 (no kill) -> 0.083 (kill).
  OnlineCalibrator c(hundred_residuals(), 0.1, plain(OnlineMethod::Aci));
  c.observe(c.decide(job()), kKilledWall);
  EXPECT_NEAR(c.level(), 0.091, 1e-12);
  // At 0.091 the rank is ceil(101 * 0.909) = 92: residual 0.91.
  EXPECT_NEAR(c.decide(job()).ttl_s, 100 * std::exp(0.91), 1e-3);
  c.observe(c.decide(job()), kFinishedWall);
  EXPECT_NEAR(c.level(), 0.092, 1e-12);
  c.observe(c.decide(job()), kKilledWall);
  EXPECT_NEAR(c.level(), 0.083, 1e-12);
}

TEST(OnlineCalibration, AciTargetScaleAimsBelowAlpha) {
  auto o = plain(OnlineMethod::Aci);
  o.target_scale = 0.5;  // target 0.05: starts there, a finished job adds 0.01 * 0.05
  OnlineCalibrator c(hundred_residuals(), 0.1, o);
  EXPECT_NEAR(c.level(), 0.05, 1e-12);
  c.observe(c.decide(job()), kFinishedWall);
  EXPECT_NEAR(c.level(), 0.0505, 1e-12);
}

TEST(OnlineCalibration, AciKillOfAJobThatOutranItsRequestIsNoKill) {
  OnlineCalibrator c(hundred_residuals(), 0.1, plain(OnlineMethod::Aci));
  OnlineJob j = job();
  j.requested_s = 500;  // the TTL (245.96 s) is below it; the job ran 1000 s, past its request
  c.observe(c.decide(j), kKilledWall);
  EXPECT_EQ(c.kills(), 0u);
  EXPECT_NEAR(c.level(), 0.101, 1e-12);
}

TEST(OnlineCalibration, MultiAciExpertsAndWeights) {
  auto o = plain(OnlineMethod::MultiAci);
  o.gammas = {0.01, 0.1};
  o.eta = 1.0;
  o.mix = 0.0;
  OnlineCalibrator c(hundred_residuals(), 0.1, o);
  // Both experts at 0.1 give 100 e^0.90 and are killed: levels 0.091 and 0.01, equal losses.
  c.observe(c.decide(job()), kKilledWall);
  ASSERT_EQ(c.expert_levels().size(), 2u);
  EXPECT_NEAR(c.expert_levels()[0], 0.091, 1e-12);
  EXPECT_NEAR(c.expert_levels()[1], 0.01, 1e-12);
  EXPECT_NEAR(c.expert_weights()[0], 0.5, 1e-12);
  EXPECT_NEAR(c.level(), 0.0505, 1e-12);
  // Next job: expert 0 (rank 92) answers 100 e^0.91, expert 1 (rank 100) 100 e^0.99. It
  // finishes in 50 s: pinball losses at tau 0.9 are 0.1 (0.91 + ln 2) and 0.1 (0.99 + ln 2).
  const auto d = c.decide(job());
  EXPECT_NEAR(d.expert_ttl_s[0], 100 * std::exp(0.91), 1e-3);
  EXPECT_NEAR(d.expert_ttl_s[1], 100 * std::exp(0.99), 1e-3);
  c.observe(d, kFinishedWall);
  const double l0 = 0.1 * (0.91 + std::log(2.0)), l1 = 0.1 * (0.99 + std::log(2.0));
  const double w0 = std::exp(-l0) / (std::exp(-l0) + std::exp(-l1));
  EXPECT_NEAR(c.expert_weights()[0], w0, 1e-6);
  EXPECT_NEAR(c.expert_levels()[0], 0.092, 1e-12);
  EXPECT_NEAR(c.expert_levels()[1], 0.02, 1e-12);
  EXPECT_NEAR(c.level(), w0 * 0.092 + (1 - w0) * 0.02, 1e-6);
}

TEST(OnlineCalibration, MondrianShrinksAKeyTowardTheGlobalLevel) {
  auto o = plain(OnlineMethod::Mondrian);
  o.group_gamma = 0.1;
  o.shrink = 1.0;
  OnlineCalibrator c(hundred_residuals(), 0.1, o);
  c.observe(c.decide(job(7)), kKilledWall);
  // Global 0.1 - 0.01 * 0.9 = 0.091; key 7's offset -0.09 weighs 1 / (1 + 1).
  EXPECT_NEAR(c.level(8), 0.091, 1e-12);
  EXPECT_NEAR(c.level(7), 0.091 - 0.045, 1e-12);
  c.observe(c.decide(job(7)), kFinishedWall);
  // Global 0.092; key 7: offset -0.09 + 0.01 = -0.08 at weight 2 / 3.
  EXPECT_NEAR(c.level(7), 0.092 - 0.08 * 2.0 / 3.0, 1e-12);
}

TEST(OnlineCalibration, RollingRefitsOnTheLastOutcomes) {
  auto o = plain(OnlineMethod::Rolling);
  o.window = 3;
  o.refit_every = 2;
  o.min_refit_rows = 2;
  o.refit.request_aware = false;
  OnlineCalibrator c(hundred_residuals(), 0.1, o);
  c.observe(c.decide(job()), 200);
  EXPECT_NEAR(c.decide(job()).ttl_s, 100 * std::exp(0.90), 1e-3);  // not refitted yet
  c.observe(c.decide(job()), 400);
  // Refitted on residuals {ln 2, ln 4}: ceil(3 * 0.9) = 3 > 2 residuals -> the largest, ln 4.
  EXPECT_NEAR(c.decide(job()).ttl_s, 400, 1e-2);
  c.observe(c.decide(job()), 150);
  c.observe(c.decide(job()), 120);
  // Window {400, 150, 120} (the 200 fell out): the largest residual is ln 4 still.
  EXPECT_NEAR(c.decide(job()).ttl_s, 400, 1e-2);
  c.observe(c.decide(job()), 110);
  c.observe(c.decide(job()), 130);
  // Window {120, 110, 130}: ln 1.3.
  EXPECT_NEAR(c.decide(job()).ttl_s, 130, 1e-2);
}

TEST(OnlineCalibration, StateRoundTrip) {
  auto o = plain(OnlineMethod::Mondrian);
  OnlineCalibrator a(hundred_residuals(), 0.1, o);
  a.observe(a.decide(job(3)), kKilledWall);
  a.observe(a.decide(job(4)), kFinishedWall);
  BinaryWriter w;
  a.write_state(w);
  OnlineCalibrator b(hundred_residuals(), 0.1, o);
  BinaryReader r(w.bytes().data(), w.bytes().size(), "state");
  b.read_state(r);
  EXPECT_DOUBLE_EQ(b.level(3), a.level(3));
  EXPECT_DOUBLE_EQ(b.level(4), a.level(4));
  EXPECT_EQ(b.outcomes(), 2u);
  EXPECT_EQ(b.kills(), 1u);
  // A state of another method is refused, naming why.
  OnlineCalibrator other(hundred_residuals(), 0.1, plain(OnlineMethod::Aci));
  BinaryReader r2(w.bytes().data(), w.bytes().size(), "state");
  EXPECT_THROW(other.read_state(r2), Error);
}

TEST(OnlineCalibration, AciCappedAimsAtAlphaAndSaturatesAtTheCap) {
  // a_{t+1} = min(a_t + gamma (alpha - err), 1.5 alpha), from a_0 = alpha = 0.1, gamma 0.01.
  auto o = plain(OnlineMethod::AciCapped);
  o.target_scale = 0.5;  // aci's target: not this method's
  o.capped_target_scale = 1.0;
  ASSERT_EQ(o.level_cap, 1.5);
  OnlineCalibrator c(hundred_residuals(), 0.1, o);
  EXPECT_NEAR(c.level(), 0.1, 1e-12);
  c.observe(c.decide(job()), kFinishedWall);
  EXPECT_NEAR(c.level(), 0.101, 1e-12);  // + 0.01 x 0.1
  c.observe(c.decide(job()), kKilledWall);
  EXPECT_NEAR(c.level(), 0.092, 1e-12);  // + 0.01 x (0.1 - 1)
  // 100 finished jobs would take plain ACI to 0.192; the level stops at the cap 0.15 ...
  for (int i = 0; i < 100; ++i) c.observe(c.decide(job()), kFinishedWall);
  EXPECT_NEAR(c.level(), 0.15, 1e-12);
  // ... where the TTL is rank ceil(101 x 0.85) = 86: residual 0.85.
  EXPECT_NEAR(c.decide(job()).ttl_s, 100 * std::exp(0.85), 1e-3);
  // ... so a kill then starts from the cap (plain ACI: 0.192 - 0.009 = 0.183).
  c.observe(c.decide(job()), kKilledWall);
  EXPECT_NEAR(c.level(), 0.141, 1e-12);
  // Downward the level is free: 20 kills take it to 0.141 - 20 x 0.009 = -0.039, which
  // asks the calibration for its loosest TTL (level 1e-5: the largest residual, 0.99).
  for (int i = 0; i < 20; ++i) c.observe(c.decide(job()), kKilledWall);
  EXPECT_NEAR(c.level(), -0.039, 1e-12);
  EXPECT_NEAR(c.decide(job()).ttl_s, 100 * std::exp(0.99), 1e-3);
  EXPECT_EQ(c.kills(), 22u);
  EXPECT_EQ(c.outcomes(), 123u);

  // The learned level survives a snapshot, and only into an aci-capped calibrator.
  BinaryWriter w;
  c.write_state(w);
  OnlineCalibrator restored(hundred_residuals(), 0.1, o);
  BinaryReader r(w.bytes().data(), w.bytes().size(), "state");
  restored.read_state(r);
  EXPECT_DOUBLE_EQ(restored.level(), c.level());
  OnlineCalibrator aci(hundred_residuals(), 0.1, plain(OnlineMethod::Aci));
  BinaryReader r2(w.bytes().data(), w.bytes().size(), "state");
  EXPECT_THROW(aci.read_state(r2), Error);

  // eval and serve answer with it by name.
  EXPECT_EQ(answering_method_from_name("aci-capped"), OnlineMethod::AciCapped);
  EXPECT_EQ(online_method_name(OnlineMethod::AciCapped), "aci-capped");
  // The default of the online calibration (the backtest's measured choice), which starts where
  // the model's own calibration answers, at alpha (then aims at 0.6 alpha), so that before any
  // outcome it answers what `predict` does.
  const OnlineCalibrationOptions defaults;
  EXPECT_EQ(defaults.method, OnlineMethod::AciCapped);
  EXPECT_EQ(std::string(kDefaultCalibration), "aci-capped");
  EXPECT_NEAR(OnlineCalibrator(hundred_residuals(), 0.1, defaults).level(), 0.1, 1e-12);
}

// The batch guard: the n-th job of a user answered since that user's last outcome is asked at
// level / sqrt(n); another user's jobs and the level's own steps are untouched; an outcome of
// the user starts the count again; static and a guard switched off never divide.
OnlineCalibrationOptions guarded(OnlineMethod m) {
  auto o = plain(m);
  o.batch_guard = true;
  return o;
}

TEST(OnlineCalibration, BatchGuardDividesTheLevelOfAUsersUnresolvedJobs) {
  OnlineCalibrator c(hundred_residuals(), 0.1, guarded(OnlineMethod::Aci));
  OnlineJob a = job();
  a.batch = 7;
  OnlineJob b = job();
  b.batch = 9;
  // Level 0.1 / sqrt(n): n = 1, 2, 4 -> 0.1, 0.0707, 0.05; TTL ranks ceil(101 (1 - level)).
  const auto first = c.decide(a);
  EXPECT_NEAR(first.level, 0.1, 1e-12);
  EXPECT_NEAR(first.ttl_s, 100 * std::exp(0.90), 1e-3);
  c.answered(first);
  const auto second = c.decide(a);
  EXPECT_NEAR(second.level, 0.1 / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(second.ttl_s, 100 * std::exp(0.93), 1e-3);  // rank ceil(101 x 0.9293) = 94
  c.answered(second);
  c.answered(c.decide(a));
  const auto fourth = c.decide(a);
  EXPECT_NEAR(fourth.level, 0.05, 1e-12);
  EXPECT_NEAR(fourth.ttl_s, 100 * std::exp(0.95), 1e-3);  // rank ceil(101 x 0.95) = 96
  // Asking again without handing the answer out counts nothing.
  EXPECT_NEAR(c.decide(a).level, 0.05, 1e-12);
  // Another user, and a job without a batch key, are answered at the level itself.
  EXPECT_NEAR(c.decide(b).level, 0.1, 1e-12);
  EXPECT_NEAR(c.decide(job()).level, 0.1, 1e-12);
  c.answered(c.decide(job()));
  EXPECT_NEAR(c.decide(job()).level, 0.1, 1e-12);
  EXPECT_NEAR(c.batch_scale(7), 0.5, 1e-12);
  // An outcome of the user (any of its jobs) steps the level as ever, from the decision's TTL,
  // and starts the count again: 0.1 + 0.01 (0.1 - 0) = 0.101.
  c.observe(first, kFinishedWall);
  EXPECT_NEAR(c.level(), 0.101, 1e-12);
  EXPECT_NEAR(c.decide(a).level, 0.101, 1e-12);
  EXPECT_NEAR(c.batch_scale(7), 1.0, 1e-12);
  // Multi-aci's experts are divided alike.
  OnlineCalibrator m(hundred_residuals(), 0.1, guarded(OnlineMethod::MultiAci));
  m.answered(m.decide(a));
  m.answered(m.decide(a));
  m.answered(m.decide(a));
  EXPECT_NEAR(m.decide(a).expert_ttl_s[0], 100 * std::exp(0.95), 1e-3);

  OnlineCalibrator unguarded(hundred_residuals(), 0.1, plain(OnlineMethod::Aci));
  for (int i = 0; i < 5; ++i) unguarded.answered(unguarded.decide(a));
  EXPECT_NEAR(unguarded.decide(a).level, 0.1, 1e-12);
  OnlineCalibrator fixed(hundred_residuals(), 0.1, guarded(OnlineMethod::Static));
  for (int i = 0; i < 5; ++i) fixed.answered(fixed.decide(a));
  EXPECT_NEAR(fixed.decide(a).level, 0.1, 1e-12);
  EXPECT_TRUE(OnlineCalibrationOptions{}.batch_guard);  // on by default
}

// The counts are transient: not in the snapshot, so a restored calibrator starts counting
// again, and a copy carries them (a service's restore copies, then swaps).
TEST(OnlineCalibration, BatchGuardCountsAreNotLearnedState) {
  OnlineCalibrator c(hundred_residuals(), 0.1, guarded(OnlineMethod::AciCapped));
  OnlineJob a = job();
  a.batch = 7;
  for (int i = 0; i < 3; ++i) c.answered(c.decide(a));
  const OnlineCalibrator copy = c;
  EXPECT_NEAR(copy.batch_scale(7), 0.5, 1e-12);
  BinaryWriter w;
  c.write_state(w);
  OnlineCalibrator restored(hundred_residuals(), 0.1, guarded(OnlineMethod::AciCapped));
  BinaryReader r(w.bytes().data(), w.bytes().size(), "state");
  restored.read_state(r);
  EXPECT_NEAR(restored.batch_scale(7), 1.0, 1e-12);
}

// eval, serve and simulate read --calibration through one parse: a "-log" suffix steps aci's or
// mondrian's level in log space; a -log on any other method is refused by name.
TEST(OnlineCalibration, AnsweringNamesWithALogStep) {
  const AnsweringCalibration plain_aci = answering_calibration_from_name("aci");
  EXPECT_EQ(plain_aci.method, OnlineMethod::Aci);
  EXPECT_FALSE(plain_aci.log_level);
  const AnsweringCalibration aci_log = answering_calibration_from_name("aci-log");
  EXPECT_EQ(aci_log.method, OnlineMethod::Aci);
  EXPECT_TRUE(aci_log.log_level);
  EXPECT_EQ(answering_calibration_from_name("mondrian-log").method, OnlineMethod::Mondrian);
  EXPECT_EQ(answering_calibration_name(OnlineMethod::Aci, true), "aci-log");
  EXPECT_EQ(answering_calibration_name(OnlineMethod::AciCapped, false), "aci-capped");
  for (const char* bad : {"aci-capped-log", "static-log", "-log", "aci-history", "aci-history-log", "bogus"}) {
    try {
      answering_calibration_from_name(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad[0] == '-' ? "unknown" : "aci"), std::string::npos) << bad << ": " << e.what();
    }
  }
}

// aci-log from the name: the level is scaled (0.1 e^{-0.009} after a kill at target alpha,
// gamma 0.01), and a state whose level an additive rule drove to zero or below is refused on
// restore, since a scaled level can never leave it.
TEST(OnlineCalibration, LogLevelFromTheNameAndItsRestoreGuard) {
  auto o = plain(OnlineMethod::Aci);
  o.log_level = answering_calibration_from_name("aci-log").log_level;
  OnlineCalibrator c(hundred_residuals(), 0.1, o);
  c.observe(c.decide(job()), kKilledWall);
  EXPECT_NEAR(c.level(), 0.1 * std::exp(-0.009), 1e-12);

  OnlineCalibrator additive(hundred_residuals(), 0.1, plain(OnlineMethod::Aci));
  for (int i = 0; i < 12; ++i) additive.observe(additive.decide(job()), kKilledWall);  // 0.1 - 12 * 0.009 < 0
  ASSERT_LT(additive.level(), 0.0);
  BinaryWriter w;
  additive.write_state(w);
  OnlineCalibrator restored(hundred_residuals(), 0.1, o);
  BinaryReader r(w.bytes().data(), w.bytes().size(), "state");
  EXPECT_THROW(restored.read_state(r), Error);
  // A positive additive level restores into the log rule (the service switched --calibration).
  OnlineCalibrator one(hundred_residuals(), 0.1, plain(OnlineMethod::Aci));
  one.observe(one.decide(job()), kKilledWall);
  BinaryWriter w2;
  one.write_state(w2);
  BinaryReader r2(w2.bytes().data(), w2.bytes().size(), "state");
  restored.read_state(r2);
  EXPECT_NEAR(restored.level(), 0.091, 1e-12);
}

TEST(OnlineCalibration, RejectsBadSettings) {
  EXPECT_THROW(OnlineCalibrator(hundred_residuals(), 0.0, plain(OnlineMethod::Aci)), Error);
  EXPECT_THROW(OnlineCalibrator(SafeTtlCalibration{}, 0.1, plain(OnlineMethod::Aci)), Error);
  EXPECT_THROW(online_method_from_name("bogus"), Error);
  EXPECT_EQ(online_method_from_name("multi-aci"), OnlineMethod::MultiAci);
  auto capped = plain(OnlineMethod::AciCapped);
  capped.level_cap = 0.5;  // below the target 0.6: the level could never reach what it aims at
  EXPECT_THROW(OnlineCalibrator(hundred_residuals(), 0.1, capped), Error);
  capped.level_cap = 1.5;
  capped.capped_target_scale = 0;
  EXPECT_THROW(OnlineCalibrator(hundred_residuals(), 0.1, capped), Error);
}

TEST(OnlineCalibration, AciHistoryCapsAtTheHistoryRuleAndOneLevelFollowsBoth) {
  // History residuals 0.0, 0.1, ..., 0.9 (10 calibration jobs): the cap at level a is
  // q99 x exp(the ceil(11 (1 - a))-th smallest).
  std::vector<float> log_ratio;
  for (int i = 0; i < 10; ++i) log_ratio.push_back(static_cast<float>(i) / 10);
  auto o = plain(OnlineMethod::AciHistory);
  o.gamma = 0.1;
  OnlineCalibrator c(hundred_residuals(), 0.3, o);
  c.set_history_rule(ResidualQuantiles::from_residuals(log_ratio, 100));
  OnlineJob with = job(), loose = job(), none = job();
  with.history_q99_s = 50;   // cap 50 e^0.7 = 100.7 s, below the model's 100 e^0.70 = 201.4 s
  loose.history_q99_s = 200;  // cap 200 e^0.7 = 402.8 s: the model's TTL
  none.history_q99_s = 0;     // no history: the model's TTL
  // Level 0.3: history rank ceil(7.7) = 8 -> 0.7; model rank ceil(101 x 0.7) = 71 -> 0.70.
  const auto d = c.decide(with);
  EXPECT_NEAR(d.ttl_s, 50 * std::exp(0.7), 1e-3);
  EXPECT_NEAR(c.decide(loose).ttl_s, 100 * std::exp(0.70), 1e-3);
  EXPECT_NEAR(c.decide(none).ttl_s, 100 * std::exp(0.70), 1e-3);
  // 110 s outruns the cap, not the model's TTL: a kill all the same, and the level drops
  // 0.3 + 0.1 (0.3 - 1) = 0.23: history rank ceil(8.47) = 9 -> 0.8.
  c.observe(d, 110);
  EXPECT_EQ(c.kills(), 1u);
  EXPECT_NEAR(c.level(), 0.23, 1e-12);
  EXPECT_NEAR(c.decide(with).ttl_s, 50 * std::exp(0.8), 1e-3);
  // Plain aci answers the same job with the model's TTL, and 110 s is no kill there.
  OnlineCalibrator aci(hundred_residuals(), 0.3, plain(OnlineMethod::Aci));
  EXPECT_NEAR(aci.decide(with).ttl_s, 100 * std::exp(0.70), 1e-3);
  // Without a history rule aci-history is aci.
  OnlineCalibrator bare(hundred_residuals(), 0.3, o);
  EXPECT_EQ(bare.decide(with).ttl_s, OnlineCalibrator(hundred_residuals(), 0.3, [&] {
                                       auto a = o;
                                       a.method = OnlineMethod::Aci;
                                       return a;
                                     }()).decide(with).ttl_s);
  EXPECT_EQ(online_method_from_name("aci-history"), OnlineMethod::AciHistory);
  EXPECT_THROW(answering_method_from_name("aci-history"), Error);
  EXPECT_EQ(answering_method_from_name("aci"), OnlineMethod::Aci);
}

}  // namespace
}  // namespace ttlpred
