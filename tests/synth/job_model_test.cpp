#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "synth/job_model.hpp"
#include "synth/rng.hpp"

namespace ttlpred::synth {
namespace {

TEST(JobModel, SharesSumToOneAndFollowThe2010Mix) {
  double total = 0;
  for (const auto& m : kJobTypeModels) total += m.share;
  EXPECT_NEAR(total, 1.0, 1e-12);
  // MC + Hyperloop trains ~75 %, user analysis ~15 % (alice-facts.md).
  EXPECT_NEAR(model_of(JobType::MC).share + model_of(JobType::Hyperloop).share + model_of(JobType::HlMerge).share, 0.75,
              1e-12);
  EXPECT_NEAR(model_of(JobType::User).share, 0.15, 1e-12);
}

TEST(JobModel, ParallelSpeedupIsAmdahl) {
  EXPECT_DOUBLE_EQ(parallel_speedup(JobType::MC, 1), 1.0);
  EXPECT_DOUBLE_EQ(parallel_speedup(JobType::MC, 8), 8.0 / (1.0 + 0.08 * 7));
  EXPECT_DOUBLE_EQ(parallel_speedup(JobType::Merge, 4), 1.0);  // merging is serial
}

TEST(JobModel, CappedMeanMatchesMonteCarlo) {
  Rng r(11);
  for (const auto& [mean, sigma, cap] : {std::tuple{10000.0, 0.3, 12000.0}, std::tuple{5000.0, 0.45, 21900.0},
                                         std::tuple{30000.0, 0.2, 25000.0}}) {
    double s = 0;
    const int n = 400000;
    for (int i = 0; i < n; ++i) s += std::min(mean * r.lognormal_mean1(sigma), cap);
    EXPECT_NEAR(capped_lognormal_mean(mean, sigma, cap), s / n, 0.004 * mean) << mean << " " << cap;
  }
  // No effective cap: the plain mean; never above the cap.
  EXPECT_NEAR(capped_lognormal_mean(1000.0, 0.2, 1e9), 1000.0, 1e-6);
  EXPECT_LT(capped_lognormal_mean(1000.0, 0.2, 500.0), 500.0);
  EXPECT_DOUBLE_EQ(capped_lognormal_mean(1000.0, 0.0, 500.0), 500.0);
}

TEST(JobModel, QuantileAndStaticTtl) {
  // The median of mean * LogNormal(-s^2/2, s) is mean * exp(-s^2/2).
  EXPECT_NEAR(lognormal_quantile(1000.0, 0.2, 0.5), 1000.0 * std::exp(-0.02), 1e-6);
  EXPECT_NEAR(lognormal_quantile(1000.0, 0.2, 0.99), 1000.0 * std::exp(0.2 * 2.3263479 - 0.02), 1e-3);
  EXPECT_DOUBLE_EQ(static_ttl(30000, 1.5, 1000, 72000, 82000), 72000);  // floor
  EXPECT_DOUBLE_EQ(static_ttl(50100, 1.5, 1000, 72000, 82000), 76000);  // 75150 rounded up
  EXPECT_DOUBLE_EQ(static_ttl(90000, 1.5, 1000, 72000, 82000), 82000);  // ceiling
}

}  // namespace
}  // namespace ttlpred::synth
