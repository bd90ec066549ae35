#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/request_aware_ttl.hpp"
#include "request_jobs.hpp"
#include "model/safe_ttl.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(RequestAwareTtl, ScoreIsTheFractionOfTheLogRoadToTheRequest) {
  EXPECT_NEAR(request_aware_score(100, 10, 1000, 1.0), 0.5, 1e-12);  // log 10 / log 100
  EXPECT_NEAR(request_aware_score(1000, 10, 1000, 1.0), 1.0, 1e-12);
  EXPECT_NEAR(request_aware_score(1, 10, 1000, 1.0), -0.5, 1e-12);
  EXPECT_EQ(request_aware_score(1001, 10, 1000, 1.0), -INFINITY);  // outran its request
  EXPECT_EQ(request_aware_score(50, 1000, 1000, 1.0), -INFINITY);  // prediction capped at it
}

// Killed by the request-aware safe TTL: its score lies above its bin's exponent (the kill
// event, up to the float rounding of the stored exponent).
bool killed_by_request_aware(const RequestAwareCalibration& c, double wall, double pred, double req, double alpha) {
  return request_aware_score(wall, pred, req, 1.0) > c.exponent(pred / req, alpha) + 1e-6;
}

using test::Jobs;

// Two kinds of job: "steady" ones (prediction 5-15% of the request, run time within a
// factor ~1.3 of it) and "limit" ones (prediction 40-60% of the request, a third of them
// run to the request). One global quantile would hand everyone the request.
Jobs draw(std::size_t n, std::uint64_t seed) {
  return test::draw_jobs(n, seed, [](std::size_t i, double req, auto& u, auto& n01) {
    if (i % 2 == 0) {
      const double pred = req * (0.05 + 0.1 * u());
      return std::pair{pred, pred * std::exp(0.15 * n01())};
    }
    const double pred = req * (0.4 + 0.2 * u());
    return std::pair{pred, u() < 1.0 / 3 ? req * (0.99 + 0.02 * u()) : pred * std::exp(0.3 * n01())};
  });
}

TEST(RequestAwareTtl, KillsAboutAlphaWithTtlsWellBelowTheRequest) {
  const Jobs calib = draw(20000, 1), test = draw(20000, 2);
  RequestAwareOptions o;
  o.alpha_scale = 1.0;
  o.min_saving_per_kill = 0.0;  // spend the whole budget: this tests the calibration itself
  const auto c = calibrate_request_aware(calib.wall, calib.pred, calib.req, o);
  for (double alpha : {0.01, 0.05}) {
    std::size_t kills = 0;
    double sum_safe = 0, sum_req = 0;
    for (std::size_t i = 0; i < test.wall.size(); ++i) {
      const double safe = c.safe_ttl(test.pred[i], test.req[i], alpha);
      EXPECT_LE(safe, test.req[i]);
      // The kill event is exactly "score above the bin's exponent".
      const double s = request_aware_score(test.wall[i], test.pred[i], test.req[i], 1.0);
      const double q = c.exponent(test.pred[i] / static_cast<double>(test.req[i]), alpha);
      const bool killed = test.wall[i] > safe && test.wall[i] <= test.req[i];
      EXPECT_EQ(killed, s > q + 1e-6) << i;
      kills += killed;
      sum_safe += safe;
      sum_req += test.req[i];
    }
    const double rate = static_cast<double>(kills) / static_cast<double>(test.wall.size());
    EXPECT_LE(rate, alpha * 1.25) << alpha;
    EXPECT_GE(rate, alpha * 0.5) << alpha;
    // Steady jobs (half of them) get about 0.15 x request; the limit ones keep theirs.
    EXPECT_LT(sum_safe / sum_req, 0.65) << alpha;
  }
}

TEST(RequestAwareTtl, AlphaScaleAndGridAreConservative) {
  const Jobs calib = draw(5000, 3);
  RequestAwareOptions o;
  o.alpha_scale = 0.5;
  const auto half = calibrate_request_aware(calib.wall, calib.pred, calib.req, o);
  o.alpha_scale = 1.0;
  const auto full = calibrate_request_aware(calib.wall, calib.pred, calib.req, o);
  for (std::size_t i = 0; i < 200; ++i) {
    EXPECT_GE(half.safe_ttl(calib.pred[i], calib.req[i], 0.01), full.safe_ttl(calib.pred[i], calib.req[i], 0.01) - 1e-3);
    // 0.015 uses the 1% table; below the smallest calibrated alpha the request itself.
    EXPECT_EQ(full.safe_ttl(calib.pred[i], calib.req[i], 0.015), full.safe_ttl(calib.pred[i], calib.req[i], 0.01));
    EXPECT_EQ(full.safe_ttl(calib.pred[i], calib.req[i], 0.0005), calib.req[i]);
  }
  EXPECT_THROW(full.safe_ttl(100, 1000, 0.0), Error);
  // A kill must free a million mean requests: nothing is worth that, so no TTL moves.
  o.min_saving_per_kill = 1e6;
  const auto strict = calibrate_request_aware(calib.wall, calib.pred, calib.req, o);
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(strict.safe_ttl(calib.pred[i], calib.req[i], 0.05), calib.req[i]);
  const std::vector<float> one = {1};
  const std::vector<float> none = {0};
  EXPECT_THROW(calibrate_request_aware(one, one, none), Error);
  EXPECT_THROW(calibrate_request_aware(one, one, {}), Error);
  RequestAwareOptions bad;
  bad.max_exponent = 1.5;
  EXPECT_THROW(calibrate_request_aware(one, one, one, bad), Error);
  bad = {};
  bad.alpha_scale = 0;
  EXPECT_THROW(calibrate_request_aware(one, one, one, bad), Error);
  bad = {};
  bad.min_saving_per_kill = -1;
  EXPECT_THROW(calibrate_request_aware(one, one, one, bad), Error);
}

// Twenty calibration jobs with prediction 10 s and request 1000 s, job i (1..20) running
// 10 x 100^(i/20) s: its score is exactly i/20. One bin, every kill worth taking.
struct Ladder {
  std::vector<float> wall, pred, req;
  Ladder() {
    for (int i = 1; i <= 20; ++i) {
      wall.push_back(static_cast<float>(10.0 * std::pow(100.0, i / 20.0)));
      pred.push_back(10.0f);
      req.push_back(1000.0f);
    }
  }
};

RequestAwareOptions exact_options(KillBudget budget) {
  RequestAwareOptions o;
  o.alpha_scale = 1.0;
  o.min_saving_per_kill = 0.0;
  o.max_exponent = 1.0;
  o.budget = budget;
  return o;
}

TEST(RequestAwareTtl, CpuTimeBudgetIsAWeightedQuantileOfTheScores) {
  const Ladder l;
  // The job of score 0.95 needs 5 units of CPU, every other one 1: 24 units in all.
  std::vector<float> cpu(20, 1.0f);
  cpu[18] = 5.0f;
  const auto count = calibrate_request_aware(l.wall, l.pred, l.req, exact_options(KillBudget::Count));
  const auto cpu_time = calibrate_request_aware(l.wall, l.pred, l.req, exact_options(KillBudget::CpuTime), cpu);
  const double ratio = 0.01;
  // (alpha, exponent by count, exponent by CPU time), by hand:
  //  alpha 10%: 2 kills allowed, or 2.4 units of CPU: by count the jobs of scores 1 and 0.95
  //             are killed (q = 0.90); by CPU time killing the 0.95 job too would lose 6 units,
  //             so only the score-1 job is (1 unit; q = 0.95).
  //  alpha 5%:  1 kill, or 1.2 units: both kill the score-1 job alone (q = 0.95).
  //  alpha 2%:  0.4 kills: none; the request (q = 1).
  const struct {
    double alpha, by_count, by_cpu;
  } table[] = {{0.1, 0.90, 0.95}, {0.05, 0.95, 0.95}, {0.02, 1.0, 1.0}};
  for (const auto& row : table) {
    EXPECT_NEAR(count.exponent(ratio, row.alpha), row.by_count, 1e-6) << row.alpha;
    EXPECT_NEAR(cpu_time.exponent(ratio, row.alpha), row.by_cpu, 1e-6) << row.alpha;
  }
  // Without weights the CPU-time budget weighs each job by its run time: the score-1 job
  // alone runs 1000 of the 4814 s in all, more than 10% of them, so nothing is killed.
  const auto by_run_time = calibrate_request_aware(l.wall, l.pred, l.req, exact_options(KillBudget::CpuTime));
  EXPECT_EQ(by_run_time.exponent(ratio, 0.1), 1.0f);
}

TEST(RequestAwareTtl, CpuTimeBudgetWithEqualWeightsIsTheCountBudget) {
  const Jobs calib = draw(5000, 5);
  const std::vector<float> seven(calib.wall.size(), 7.0f);
  RequestAwareOptions o;
  const auto count = calibrate_request_aware(calib.wall, calib.pred, calib.req, o);
  o.budget = KillBudget::CpuTime;
  const auto cpu_time = calibrate_request_aware(calib.wall, calib.pred, calib.req, o, seven);
  EXPECT_EQ(cpu_time.edges, count.edges);
  EXPECT_EQ(cpu_time.q, count.q);
}

TEST(RequestAwareTtl, CpuTimeBudgetBoundsTheCalibrationJobsLostCpuTime) {
  const Jobs calib = draw(20000, 6);
  RequestAwareOptions o;
  o.alpha_scale = 1.0;
  o.min_saving_per_kill = 0.0;
  o.budget = KillBudget::CpuTime;
  const auto c = calibrate_request_aware(calib.wall, calib.pred, calib.req, o);
  double total = 0;
  for (float w : calib.wall) total += w;
  for (double alpha : request_aware_alpha_grid()) {
    std::size_t kills = 0;
    double lost = 0;
    for (std::size_t i = 0; i < calib.wall.size(); ++i)
      if (killed_by_request_aware(c, calib.wall[i], calib.pred[i], calib.req[i], alpha)) {
        ++kills;
        lost += calib.wall[i];
      }
    EXPECT_LE(kills, static_cast<std::size_t>(std::floor(alpha * static_cast<double>(calib.wall.size())))) << alpha;
    EXPECT_LE(lost, alpha * total * (1 + 1e-9)) << alpha;
    if (alpha >= 0.01) {
      EXPECT_GT(kills, 0u) << alpha;  // the budget is spent, not hoarded
    }
  }
}

TEST(RequestAwareTtl, CpuTimeBudgetRefusesBadWeightsAndNames) {
  const Ladder l;
  const auto o = exact_options(KillBudget::CpuTime);
  std::vector<float> cpu(20, 1.0f);
  cpu[3] = 0.0f;
  EXPECT_THROW(calibrate_request_aware(l.wall, l.pred, l.req, o, cpu), Error);
  cpu[3] = NAN;
  EXPECT_THROW(calibrate_request_aware(l.wall, l.pred, l.req, o, cpu), Error);
  cpu.resize(19, 1.0f);
  EXPECT_THROW(calibrate_request_aware(l.wall, l.pred, l.req, o, cpu), Error);
  EXPECT_EQ(kill_budget_from_name("cpu-time"), KillBudget::CpuTime);
  EXPECT_EQ(kill_budget_from_name("count"), KillBudget::Count);
  EXPECT_STREQ(kill_budget_name(KillBudget::CpuTime), "cpu-time");
  EXPECT_THROW(kill_budget_from_name("cpu"), Error);
}

TEST(RequestAwareTtl, RoundTripsInsideTheSafeTtlSectionAndRefusesBadTables) {
  const Jobs calib = draw(3000, 4);
  SafeTtlCalibration c = calibrate_safe_ttl(calib.wall, calib.pred, {});
  c.request = calibrate_request_aware(calib.wall, calib.pred, calib.req);
  BinaryWriter w;
  c.write(w);
  BinaryReader r(w.bytes().data(), w.bytes().size(), "test");
  const auto back = SafeTtlCalibration::read(r);
  EXPECT_TRUE(r.at_end());
  ASSERT_FALSE(back.request.empty());
  EXPECT_EQ(back.request.edges, c.request.edges);
  EXPECT_EQ(back.request.q, c.request.q);
  for (std::size_t i = 0; i < 50; ++i)
    EXPECT_EQ(back.safe_ttl(calib.pred[i], kNoGroup, 0.01, calib.req[i]), c.request.safe_ttl(calib.pred[i], calib.req[i], 0.01));
  // Without a request, the log-ratio margin, capped at nothing.
  EXPECT_EQ(back.safe_ttl(100, kNoGroup, 0.01, 0.0), c.safe_ttl(100, kNoGroup, 0.01));

  RequestAwareCalibration bad = c.request;
  bad.q[0][0] = 1.5f;
  BinaryWriter wb;
  bad.write(wb);
  BinaryReader rb(wb.bytes().data(), wb.bytes().size(), "test");
  EXPECT_THROW(RequestAwareCalibration::read(rb), Error);
}

}  // namespace
}  // namespace ttlpred
