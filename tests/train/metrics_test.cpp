#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "train/metrics.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr float H = 3600.f;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(AccuracyMetrics, HandComputedErrors) {
  const std::vector<float> wall = {1 * H, 2 * H, 3 * H, 6 * H};
  const std::vector<float> pred = {2 * H, 2 * H, 1 * H, 6 * H};
  // errors 1, 0, -2, 0 -> RMSE sqrt(5/4), MAE 3/4; mean 3, SS_tot 4+1+0+9 = 14, SS_res 5.
  EXPECT_NEAR(rmse_hours(wall, pred), std::sqrt(1.25), 1e-9);
  EXPECT_NEAR(mae_hours(wall, pred), 0.75, 1e-9);
  EXPECT_NEAR(r2_score(wall, pred), 1.0 - 5.0 / 14.0, 1e-9);
  EXPECT_TRUE(std::isnan(r2_score(std::vector<float>{H, H}, std::vector<float>{H, 2 * H})));
}

TEST(AccuracyMetrics, KillRateCountsOnlyJobsTheRequestWouldHaveLetFinish) {
  const std::vector<float> wall = {1 * H, 5 * H, 10 * H, 3 * H, 4 * H};
  const std::vector<float> pred = {1 * H, 1 * H, 1 * H, 1 * H, 1 * H};
  const std::vector<float> safe = {2 * H, 4 * H, 4 * H, 2 * H, 6 * H};
  const std::vector<float> req = {8 * H, 8 * H, 8 * H, kNaN, 8 * H};
  // job 0 fine; job 1 killed (5 > 4, 5 <= 8); job 2 ran past its request (10 > 8): not counted;
  // job 3 killed (no request known); job 4 fine.
  const auto m = compute_metrics(wall, pred, safe, req);
  EXPECT_EQ(m.rows, 5u);
  EXPECT_EQ(m.killed, 2u);
  EXPECT_NEAR(m.kill_rate, 0.4, 1e-12);
  EXPECT_NEAR(m.mean_safe_ttl_hours, 18.0 / 5.0, 1e-9);
  EXPECT_EQ(m.requested_known, 4u);
  EXPECT_NEAR(m.mean_requested_ttl_hours, 8.0, 1e-9);
}

TEST(AccuracyMetrics, BreakdownByGroup) {
  const std::vector<float> wall = {1 * H, 2 * H, 3 * H};
  const std::vector<float> pred = {1 * H, 3 * H, 3 * H};
  const std::vector<float> safe = {2 * H, 1 * H, 4 * H};
  const std::vector<std::uint32_t> grp = {7, 2, 7};
  const auto g = compute_metrics_by_group(wall, pred, safe, {}, grp);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].group, 2u);
  EXPECT_EQ(g[0].metrics.rows, 1u);
  EXPECT_NEAR(g[0].metrics.rmse_hours, 1.0, 1e-9);
  EXPECT_NEAR(g[0].metrics.kill_rate, 1.0, 1e-12);
  EXPECT_EQ(g[1].group, 7u);
  EXPECT_NEAR(g[1].metrics.rmse_hours, 0.0, 1e-9);
  EXPECT_NEAR(g[1].metrics.kill_rate, 0.0, 1e-12);
  EXPECT_TRUE(std::isnan(g[1].metrics.mean_requested_ttl_hours));
}

TEST(AccuracyMetrics, RefusesMismatchedLengths) {
  const std::vector<float> a = {1, 2}, b = {1};
  EXPECT_THROW(rmse_hours(a, b), Error);
  EXPECT_THROW(compute_metrics(a, a, b, {}), Error);
}

}  // namespace
}  // namespace ttlpred
