#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/target_transform.hpp"

namespace ttlpred {
namespace {

TEST(TargetTransform, InvertsEachKind) {
  for (auto kind : {TargetKind::Hours, TargetKind::Log1p, TargetKind::Power}) {
    TargetTransform t;
    t.kind = kind;
    t.lambda = 0.3;
    t.mean = 0.7;
    t.stddev = 1.9;
    for (double s : {0.0, 60.0, 3600.0, 86400.0 * 3}) {
      EXPECT_NEAR(t.decode_seconds(t.encode_seconds(s)), s, 1e-4 * s + 0.05) << target_kind_name(kind) << " " << s;
    }
  }
}

TEST(TargetTransform, KnownValues) {
  TargetTransform t;
  t.kind = TargetKind::Log1p;
  EXPECT_NEAR(t.to_t(1.0), std::log(2.0), 1e-12);
  t.kind = TargetKind::Power;
  t.lambda = 0.5;
  EXPECT_NEAR(t.to_t(3.0), (2.0 - 1.0) / 0.5, 1e-12);  // ((1+3)^0.5 - 1) / 0.5
  t.kind = TargetKind::Hours;
  EXPECT_EQ(t.to_t(2.5), 2.5);
}

TEST(TargetTransform, SmearingRecoversTheMeanOfALogNormal) {
  // Run times lognormal around a median of 1 h: a log-space model predicts the median; the
  // smeared inverse must return the mean exp(mu + sigma^2/2) instead.
  TargetTransform t;
  t.kind = TargetKind::Log1p;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 0.8);
  std::vector<float> wall, pred;
  double sum = 0;
  const float z_med = 0.f;  // with mean/stddev below, z=0 decodes to t = log1p(1h)
  t.mean = std::log1p(1.0);
  t.stddev = 1.0;
  for (int i = 0; i < 20000; ++i) {
    const double h = std::expm1(std::log1p(1.0) + noise(rng));
    wall.push_back(static_cast<float>(std::max(h, 0.0) * 3600));
    sum += wall.back();
    pred.push_back(z_med);
  }
  t.fit_smearing(wall, pred, 64);
  ASSERT_EQ(t.smear.size(), 64u);
  const double mean = sum / static_cast<double>(wall.size());
  EXPECT_NEAR(t.decode_seconds(z_med), mean, 0.03 * mean);
  EXPECT_NEAR(t.decode_median_seconds(z_med), 3600.0, 1e-6);
}

TEST(TargetTransform, ParsesNames) {
  EXPECT_EQ(parse_target_kind("log1p"), TargetKind::Log1p);
  EXPECT_THROW(parse_target_kind("logg"), Error);
}

}  // namespace
}  // namespace ttlpred
