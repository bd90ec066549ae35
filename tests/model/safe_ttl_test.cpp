#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/safe_ttl.hpp"

namespace ttlpred {
namespace {

TEST(SafeTtl, FiniteSampleConformalQuantile) {
  // Residuals 1..9 (n = 9): alpha = 0.1 asks for rank ceil(10 * 0.9) = 9 -> the largest;
  // alpha = 0.25 for rank ceil(7.5) = 8; alpha = 0.5 for rank 5.
  std::vector<float> r;
  for (int i = 9; i >= 1; --i) r.push_back(static_cast<float>(i));
  const auto q = ResidualQuantiles::from_residuals(r, 1000);
  EXPECT_EQ(q.conformal_quantile(0.1), 9.0);
  EXPECT_EQ(q.conformal_quantile(0.25), 8.0);
  EXPECT_EQ(q.conformal_quantile(0.5), 5.0);
  EXPECT_EQ(q.conformal_quantile(0.01), 9.0);  // (n+1)(1-alpha) > n: the maximum
}

TEST(SafeTtl, SubsampledTableRoundsUp) {
  std::vector<float> r(10001);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(i);
  const auto full = ResidualQuantiles::from_residuals(r, 1u << 20);
  const auto small = ResidualQuantiles::from_residuals(r, 101);
  ASSERT_EQ(small.values.size(), 101u);
  for (double a : {0.5, 0.1, 0.05, 0.013, 0.01, 0.001}) {
    const double exact = full.conformal_quantile(a);
    const double approx = small.conformal_quantile(a);
    EXPECT_GE(approx, exact) << a;
    EXPECT_LE(approx, exact + 100.0) << a;  // within one stored step
  }
}

TEST(SafeTtl, SafeTtlScalesThePrediction) {
  const std::vector<float> wall = {100, 200, 300};
  const std::vector<float> pred = {100, 100, 100};
  const auto c = calibrate_safe_ttl(wall, pred, {});
  // residuals log 1, log 2, log 3; alpha 0.5 -> rank ceil(4*0.5) = 2 -> log 2.
  EXPECT_NEAR(c.safe_ttl(50, kNoGroup, 0.5), 100.0, 1e-3);
  EXPECT_NEAR(c.safe_ttl(0, kNoGroup, 0.5), 2.0, 1e-5);  // prediction clamped to the 1 s floor
  EXPECT_THROW(c.safe_ttl(50, kNoGroup, 0.0), Error);
  EXPECT_THROW(c.safe_ttl(50, kNoGroup, 1.0), Error);
}

// Coverage on exchangeable synthetic residuals: the kill rate on fresh jobs is close to alpha,
// per group too, and a small group falls back to the global quantile.
TEST(SafeTtl, CoverageMatchesAlpha) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01(0.0, 1.0);
  const double sigma[2] = {0.3, 1.2};  // group 0 tight, group 1 wide
  auto draw = [&](std::size_t n, std::vector<float>& wall, std::vector<float>& pred, std::vector<std::uint32_t>& g) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t grp = static_cast<std::uint32_t>(i % 2);
      const double p = 600.0 * std::exp(n01(rng));
      pred.push_back(static_cast<float>(p));
      wall.push_back(static_cast<float>(p * std::exp(sigma[grp] * n01(rng))));
      g.push_back(grp);
    }
  };
  std::vector<float> cw, cp, tw, tp;
  std::vector<std::uint32_t> cg, tg;
  draw(20000, cw, cp, cg);
  draw(40000, tw, tp, tg);
  const auto c = calibrate_safe_ttl(cw, cp, cg, {}, "job_type");
  for (double alpha : {0.01, 0.05, 0.2}) {
    std::size_t killed[2] = {0, 0}, total[2] = {0, 0};
    for (std::size_t i = 0; i < tw.size(); ++i) {
      total[tg[i]]++;
      if (tw[i] > c.safe_ttl(tp[i], tg[i], alpha)) killed[tg[i]]++;
    }
    for (int g = 0; g < 2; ++g) {
      const double rate = static_cast<double>(killed[g]) / static_cast<double>(total[g]);
      // Four standard deviations of the two sampling errors: the test jobs' binomial one and
      // the calibration quantile's (its coverage is Beta-distributed, variance about
      // alpha (1 - alpha) / n_calibration). Alpha 1%: +-0.0049 around 0.01.
      const double sd = std::sqrt(alpha * (1 - alpha) * (1.0 / static_cast<double>(total[g]) + 1.0 / 10000.0));
      EXPECT_NEAR(rate, alpha, 4 * sd) << "group " << g << " alpha " << alpha;
    }
  }
  // Per-group margins differ as the groups' spreads do.
  EXPECT_LT(c.log_margin(0, 0.01), c.log_margin(1, 0.01));
  // An unknown group uses the global residuals.
  EXPECT_EQ(c.log_margin(77, 0.01), c.global.conformal_quantile(0.01));
}

TEST(SafeTtl, SmallGroupFallsBackToGlobal) {
  std::vector<float> wall, pred;
  std::vector<std::uint32_t> grp;
  for (int i = 0; i < 500; ++i) {
    wall.push_back(static_cast<float>(100 + i));
    pred.push_back(100);
    grp.push_back(i < 10 ? 3 : 4);
  }
  SafeTtlOptions o;
  o.min_group_rows = 50;
  const auto c = calibrate_safe_ttl(wall, pred, grp, o);
  EXPECT_EQ(c.log_margin(3, 0.1), c.global.conformal_quantile(0.1));
  EXPECT_NE(c.log_margin(4, 0.1), c.global.conformal_quantile(0.1));
}

TEST(SafeTtl, RoundTripsAndRefusesUnsorted) {
  const std::vector<float> wall = {100, 250, 300, 1000};
  const std::vector<float> pred = {100, 100, 200, 500};
  const std::vector<std::uint32_t> grp = {0, 0, 1, 1};
  const auto c = calibrate_safe_ttl(wall, pred, grp, {}, "queue");
  BinaryWriter w;
  c.write(w);
  BinaryReader r(w.bytes(), "cal");
  const auto d = SafeTtlCalibration::read(r);
  EXPECT_EQ(d.global.values, c.global.values);
  EXPECT_EQ(d.group_column, "queue");
  EXPECT_EQ(d.group_residuals[1].values, c.group_residuals[1].values);

  auto bad = c;
  std::swap(bad.global.values.front(), bad.global.values.back());
  BinaryWriter w2;
  bad.write(w2);
  BinaryReader r2(w2.bytes(), "cal");
  EXPECT_THROW(SafeTtlCalibration::read(r2), Error);
}

TEST(SafeTtl, RefusesMismatchedInput) {
  const std::vector<float> a = {1, 2}, b = {1};
  EXPECT_THROW(calibrate_safe_ttl(a, b, {}), Error);
  EXPECT_THROW(calibrate_safe_ttl({}, {}, {}), Error);
}

}  // namespace
}  // namespace ttlpred
