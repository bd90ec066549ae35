// The safe TTL's promise as a property over many random exchangeable worlds
// (tests/property.hpp): calibration and later jobs drawn from the same distribution (a random
// log-normal spread around the prediction, a random calibration size), the kill rate of the
// later jobs averages at most alpha, and not much less: split-conformal coverage is between
// 1 - alpha and 1 - alpha + 1 / (n + 1) for continuous residuals.
#include <gtest/gtest.h>

#include <cmath>

#include "model/safe_ttl.hpp"
#include "property.hpp"

namespace ttlpred {
namespace {

TEST(KillRateProperty, AveragesAtMostAlphaOnExchangeableJobs) {
  for (double alpha : {0.01, 0.05}) {
    double sum_rate = 0;
    constexpr int kWorlds = 40;
    constexpr std::size_t kLater = 5000;
    test::for_each_seed(1000, kWorlds, [&](std::mt19937_64& rng, std::uint64_t) {
      const double sigma = test::uniform(rng, 0.1, 1.5), bias = test::uniform(rng, -0.5, 0.5);
      const std::size_t n = 300 + test::below(rng, 3000);
      std::normal_distribution<double> z(0.0, 1.0);
      auto draw = [&](std::size_t count, std::vector<float>& wall, std::vector<float>& pred) {
        for (std::size_t i = 0; i < count; ++i) {
          const double p = 60.0 * std::exp(test::uniform(rng, 0.0, 6.0));
          pred.push_back(static_cast<float>(p));
          wall.push_back(static_cast<float>(p * std::exp(bias + sigma * z(rng))));
        }
      };
      std::vector<float> cw, cp, tw, tp;
      draw(n, cw, cp);
      draw(kLater, tw, tp);
      SafeTtlOptions o;
      o.request_aware = false;
      const auto c = calibrate_safe_ttl(cw, cp, {}, o);
      std::size_t killed = 0;
      for (std::size_t i = 0; i < kLater; ++i) killed += tw[i] > c.safe_ttl(tp[i], kNoGroup, alpha);
      sum_rate += static_cast<double>(killed) / kLater;
    });
    const double mean = sum_rate / kWorlds;
    // Standard deviation of the mean over worlds: the later jobs' binomial error and the
    // calibration quantile's (coverage ~ Beta, variance about alpha (1 - alpha) / n, n >= 300).
    const double sd = std::sqrt(alpha * (1 - alpha) * (1.0 / kLater + 1.0 / 300.0) / kWorlds);
    EXPECT_LE(mean, alpha + 3 * sd) << "alpha " << alpha;
    EXPECT_GE(mean, alpha - 1.0 / 301.0 - 3 * sd) << "alpha " << alpha;
  }
}

}  // namespace
}  // namespace ttlpred
