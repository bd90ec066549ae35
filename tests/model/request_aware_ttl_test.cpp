#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/request_aware_ttl.hpp"
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

struct Jobs {
  std::vector<float> wall, pred, req;
};

// Two kinds of job: "steady" ones (prediction 5-15% of the request, run time within a
// factor ~1.3 of it) and "limit" ones (prediction 40-60% of the request, a third of them
// run to the request). One global quantile would hand everyone the request.
Jobs draw(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> n01(0.0, 1.0);
  Jobs j;
  for (std::size_t i = 0; i < n; ++i) {
    const double req = 3600.0 * (1 + 10 * u(rng));
    double pred, wall;
    if (i % 2 == 0) {
      pred = req * (0.05 + 0.1 * u(rng));
      wall = pred * std::exp(0.15 * n01(rng));
    } else {
      pred = req * (0.4 + 0.2 * u(rng));
      wall = u(rng) < 1.0 / 3 ? req * (0.99 + 0.02 * u(rng)) : pred * std::exp(0.3 * n01(rng));
    }
    j.wall.push_back(static_cast<float>(wall));
    j.pred.push_back(static_cast<float>(std::min(pred, req)));
    j.req.push_back(static_cast<float>(req));
  }
  return j;
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
