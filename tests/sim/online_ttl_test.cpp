// The model's TTLs in the broker through the service's safe-TTL policy (sim/online_ttl.hpp)
// and per host class (sim/host_classes.hpp), on hand-computed sequences. The static
// calibration is that of the online-calibration tests: 100 log residuals 0.00 .. 0.99, so the
// TTL at level a of a job predicted at 100 s is 100 exp((ceil(101 (1 - a)) - 1) / 100).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "model/calibration_fixtures.hpp"
#include "sim/host_classes.hpp"
#include "sim/online_ttl.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

OnlineCalibrationOptions aci(double gamma) {
  OnlineCalibrationOptions o;
  o.method = OnlineMethod::Aci;
  o.target_scale = 1.0;
  o.gamma = gamma;
  return o;
}

// The policy of the tests: the hundred residuals at alpha 0.1, within the predictor's bounds
// (none of the TTLs here meets the floor or the cap).
TtlPolicy policy(const OnlineCalibrationOptions& o) {
  PredictorOptions bounds;
  bounds.alpha = 0.1;
  return TtlPolicy(test::hundred_residuals(), bounds, o);
}

std::vector<OnlineJob> jobs(std::size_t n) {
  std::vector<OnlineJob> v(n);
  for (auto& j : v) j.pred_s = 100;
  return v;
}

// The weights are each outcome's CPU time over the mean expected CPU time (cores x expected
// run time) of the jobs answered so far: 1 before any job was answered.
TEST(OnlineTtl, CpuTimeWeightsAreTheCostOverTheMeanExpectedCost) {
  CpuTimeWeights w;
  EXPECT_DOUBLE_EQ(w.next(50), 1.0);
  w.answered(100);
  w.answered(300);
  EXPECT_DOUBLE_EQ(w.mean(), 200);
  EXPECT_DOUBLE_EQ(w.next(50), 0.25);
  EXPECT_DOUBLE_EQ(w.next(1000), 5.0);
  EXPECT_THROW(w.next(-1), Error);
  EXPECT_THROW(w.answered(NAN), Error);
}

// Three outcomes at alpha 0.1, gamma 0.01 (target 0.1) of jobs expected at 100 s on 1 core
// (mean expected cost 100): a 50 s job, a 1000 s job its TTL (100 e^0.90 = 246 s) killed, a
// 50 s job. Count rule: 0.1 + 0.001 - 0.009 + 0.001 = 0.093, and the next TTL is at rank
// ceil(101 * 0.907) = 92 (100 e^0.91). CPU-time rule (weights 0.5, 10, 0.5): 0.1 + 0.0005 -
// 0.09 + 0.0005 = 0.011: the killed job ran ten times its expected cost and weighs ten kills,
// so the TTLs loosen to rank ceil(101 * 0.989) = 100 (100 e^0.99).
TEST(OnlineTtl, AciCpuWeighsEachStepByCpuTime) {
  for (const bool weighted : {false, true}) {
    OnlineTtl src(policy(aci(0.01)), jobs(4), {1, 1, 1, 1}, 1, weighted);
    double ttl = 0;
    src.decide(0, 0, std::span<double>(&ttl, 1));
    EXPECT_NEAR(ttl, 100 * std::exp(0.90), 1e-3);
    src.matched(0, 0);
    src.ended(0, 50, 50, 1, false);
    src.decide(1, 60, std::span<double>(&ttl, 1));
    src.matched(1, 0);
    src.ended(1, 1060, 1000, 1, true);
    src.decide(2, 1100, std::span<double>(&ttl, 1));
    src.matched(2, 0);
    src.ended(2, 1150, 50, 1, false);
    EXPECT_EQ(src.policy().outcomes(), 3u);
    EXPECT_EQ(src.policy().kills(), 1u);
    src.decide(3, 1200, std::span<double>(&ttl, 1));
    if (weighted) {
      EXPECT_NEAR(src.policy().level(), 0.011, 1e-12);
      EXPECT_NEAR(ttl, 100 * std::exp(0.99), 1e-3);
    } else {
      EXPECT_NEAR(src.policy().level(), 0.093, 1e-12);
      EXPECT_NEAR(ttl, 100 * std::exp(0.91), 1e-3);
    }
  }
}

// The cost is cores x seconds: an 8-core job killed after 300 s weighs as a 1-core job killed
// after 2400 s. Both sources answered a 1-core and an 8-core job expected at 100 s: mean
// expected cost (100 + 800) / 2 = 450.
TEST(OnlineTtl, CostIsCoresTimesRunTime) {
  OnlineTtl a(policy(aci(0.01)), jobs(2), {1, 8}, 1, true);
  OnlineTtl b(policy(aci(0.01)), jobs(2), {1, 8}, 1, true);
  double ttl = 0;
  for (OnlineTtl* s : {&a, &b}) {
    s->decide(0, 0, std::span<double>(&ttl, 1));
    s->matched(0, 0);
    s->decide(1, 0, std::span<double>(&ttl, 1));
    s->matched(1, 0);
  }
  a.ended(1, 2400, 2400, 1, true);
  b.ended(1, 300, 300, 8, true);
  EXPECT_DOUBLE_EQ(a.policy().level(), b.policy().level());
  EXPECT_NEAR(a.policy().level(), 0.1 + 0.01 * (2400 / 450.0) * (0.1 - 1), 1e-12);
}

// Per host class, the decision of the class the job ran on is the one observed: class 1's TTL
// (prediction 200 s) let a 300 s run finish where class 0's (100 s) would have killed it.
TEST(OnlineTtl, ObservesTheDecisionOfTheHostClassItRanOn) {
  std::vector<OnlineJob> js(2);
  js[0].pred_s = 100;
  js[1].pred_s = 200;
  OnlineTtl src(policy(aci(0.01)), js, {1}, 2, false);
  double ttl[2];
  src.decide(0, 0, ttl);
  EXPECT_NEAR(ttl[0], 100 * std::exp(0.90), 1e-3);
  EXPECT_NEAR(ttl[1], 200 * std::exp(0.90), 1e-3);
  src.matched(0, 1);
  src.ended(0, 300, 300, 1, false);
  EXPECT_EQ(src.policy().kills(), 0u);
  EXPECT_NEAR(src.policy().level(), 0.101, 1e-12);
  EXPECT_THROW(src.ended(0, 400, 1, 1, false), Error);  // one outcome per answered attempt
}

// With log_level the level is scaled, not moved: at gamma 0.01 and target 0.1 a finished job
// multiplies it by e^0.001 and a kill by e^-0.009, so 50 s, a killed 1000 s, 50 s take 0.1 to
// 0.1 e^-0.007; and 200 kills in a row leave 0.1 e^-1.8 (0.0165, still a calibrated level)
// where the additive rule would fall to 0.1 - 1.8 (below every level: the request).
TEST(OnlineTtl, LogLevelStepsScaleTheLevel) {
  OnlineCalibrationOptions o = aci(0.01);
  o.log_level = true;
  OnlineTtl src(policy(o), jobs(203), std::vector<int>(203, 1), 1, false);
  double ttl = 0;
  const double ran[] = {50, 1000, 50};
  for (std::size_t i = 0; i < 3; ++i) {
    src.decide(i, 0, std::span<double>(&ttl, 1));
    src.matched(i, 0);
    src.ended(i, ran[i], ran[i], 1, ran[i] > ttl);
  }
  EXPECT_NEAR(src.policy().level(), 0.1 * std::exp(-0.007), 1e-12);
  OnlineCalibrationOptions plain = aci(0.01);
  OnlineTtl add(policy(plain), jobs(200), std::vector<int>(200, 1), 1, false);
  OnlineTtl mul(policy(o), jobs(200), std::vector<int>(200, 1), 1, false);
  for (std::size_t i = 0; i < 200; ++i)
    for (OnlineTtl* s : {&add, &mul}) {
      s->decide(i, 0, std::span<double>(&ttl, 1));
      s->matched(i, 0);
      s->ended(i, 1e6, 1e6, 1, true);
    }
  EXPECT_NEAR(add.policy().level(), 0.1 - 200 * 0.009, 1e-9);
  EXPECT_NEAR(mul.policy().level(), 0.1 * std::exp(-1.8), 1e-12);
}

// The calibrator refuses a weight that is negative or not finite; weight 1 is the count rule.
TEST(OnlineTtl, ObserveWeightIsChecked) {
  OnlineCalibrator c(test::hundred_residuals(), 0.1, aci(0.01));
  const OnlineDecision d = c.decide(jobs(1)[0]);
  EXPECT_THROW(c.observe(d, 50, -1), Error);
  EXPECT_THROW(c.observe(d, 50, INFINITY), Error);
  c.observe(d, 50, 1.0);
  EXPECT_NEAR(c.level(), 0.101, 1e-12);
  c.observe(d, 50, 0.0);  // weight 0: counted, no step
  EXPECT_NEAR(c.level(), 0.101, 1e-12);
  EXPECT_EQ(c.outcomes(), 2u);
}

TEST(OnlineTtl, CalibrationNames) {
  EXPECT_EQ(sim_calibration_from_name("static").method, OnlineMethod::Static);
  EXPECT_EQ(sim_calibration_from_name("mondrian").method, OnlineMethod::Mondrian);
  const SimCalibration c = sim_calibration_from_name("aci-cpu");
  EXPECT_EQ(c.method, OnlineMethod::Aci);
  EXPECT_TRUE(c.cpu_weighted);
  EXPECT_FALSE(sim_calibration_from_name("aci").cpu_weighted);
  EXPECT_EQ(sim_calibration_from_name("mondrian-cpu").method, OnlineMethod::Mondrian);
  EXPECT_TRUE(sim_calibration_from_name("mondrian-cpu").cpu_weighted);
  EXPECT_THROW(sim_calibration_from_name("aci-history"), Error);
  const SimCalibration l = sim_calibration_from_name("aci-cpu-log");
  EXPECT_TRUE(l.log_level && l.cpu_weighted && l.method == OnlineMethod::Aci && l.name == "aci-cpu-log");
  EXPECT_TRUE(sim_calibration_from_name("mondrian-log").log_level);
  EXPECT_FALSE(sim_calibration_from_name("mondrian").log_level);
  EXPECT_THROW(sim_calibration_from_name("rolling-log"), Error);
  EXPECT_THROW(sim_calibration_from_name("fast"), Error);
}

JobTable hosts_table() {
  JobTable t;
  const struct { const char* model; double speed, mhz; } rows[] = {
      {"old", 9, 1},  // before first_row: not simulated, so not a class
      {"E5", 0.5, 2600}, {"EPYC", 1.2, 2800}, {"E5", 0.7, 2600}, {"E5", 0.6, 2400}};
  for (const auto& r : rows) {
    JobRecord j;
    j.text(Field::CpuModel) = r.model;
    j[Field::HostSpeed] = r.speed;
    j[Field::CpuMhz] = r.mhz;
    j[Field::WallTime] = 100;
    t.append(j);
  }
  return t;
}

// A class per CPU model of the simulated rows, most rows first, at its median speed and most
// common clock.
TEST(HostClasses, OnePerCpuModelAtItsMedianSpeed) {
  const HostClasses h = find_host_classes(hosts_table(), 1);
  ASSERT_EQ(h.classes.size(), 2u);
  EXPECT_EQ(h.classes[0].cpu_model, "E5");
  EXPECT_EQ(h.classes[0].rows, 3u);
  EXPECT_DOUBLE_EQ(h.classes[0].speed, 0.6);
  EXPECT_DOUBLE_EQ(h.classes[0].cpu_mhz, 2600);
  EXPECT_EQ(h.classes[1].cpu_model, "EPYC");
  EXPECT_DOUBLE_EQ(h.classes[1].speed, 1.2);
  EXPECT_EQ(h.row_class, (std::vector<std::uint32_t>{0, 1, 0, 0}));
  EXPECT_EQ(h.row_speed, (std::vector<double>{0.5, 1.2, 0.7, 0.6}));
}

TEST(HostClasses, RefusesRowsWithoutAHost) {
  JobTable t = hosts_table();
  JobRecord j;
  j[Field::WallTime] = 100;
  t.append(j);
  try {
    find_host_classes(t, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 5"), std::string::npos) << e.what();
  }
}

// Every simulated row is predicted on every class: a CPU model per host would multiply the
// memory by the number of hosts, so the count is bounded and the refusal says by what.
JobTable one_row_per_cpu_model(std::size_t models) {
  JobTable t;
  for (std::size_t k = 0; k < models; ++k) {
    const std::string name = "cpu" + std::to_string(k);  // a record's text is a view: kept until append
    JobRecord j;
    j.text(Field::CpuModel) = name;
    j[Field::HostSpeed] = 1;
    j[Field::WallTime] = 100;
    t.append(j);
  }
  return t;
}

TEST(HostClasses, RefusesMoreCpuModelsThanItPredictsOn) {
  EXPECT_EQ(find_host_classes(one_row_per_cpu_model(kMaxHostClasses), 0).classes.size(), kMaxHostClasses);
  try {
    find_host_classes(one_row_per_cpu_model(kMaxHostClasses + 1), 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("65 distinct cpu_model values"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ttlpred::sim
