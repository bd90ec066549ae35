#include "synth/latent_grid.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "util/error.hpp"

namespace ttlpred::synth {
namespace {

// log P(Z > z) in long double, the reference for the double version.
long double log_tail_ref(long double z) { return std::log(0.5L * std::erfc(z / std::sqrt(2.0L))); }

TEST(LatentGrid, NormalTailMatchesItsLongDoubleDefinitionAndStaysFinite) {
  for (double z = -30; z <= 36; z += 0.25) {
    const double ref = static_cast<double>(log_tail_ref(z));
    EXPECT_NEAR(log_normal_tail(z), ref, 1e-12 * std::max(1.0, std::abs(ref))) << "z=" << z;
  }
  // Past erfc's range the asymptotic series carries on smoothly.
  for (double z : {40.0, 100.0, 1e4}) {
    const double v = log_normal_tail(z);
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_NEAR(v, -0.5 * z * z - std::log(z) - 0.918938533204672742, 1e-6 * z * z);
  }
  EXPECT_LT(log_normal_tail(100.0), log_normal_tail(40.0));
}

TEST(LatentGrid, PriorMassIsOneAndTheClampsAtomsSitOnTheBounds) {
  for (const LatentPrior& p : {kMcHoursPrior, kRecoCostFactorPrior, kTrainCostPrior, kUserCostPrior}) {
    const LatentGrid g(p, 1001);
    double sum = 0;
    for (double lp : g.log_prior()) sum += std::exp(lp);
    EXPECT_NEAR(sum, 1.0, 1e-12);
    if (p.lo > 0) {
      EXPECT_NEAR(g.values().front(), p.lo, 1e-9 * p.lo);
      // The atom: P(X <= lo) = Phi((log lo - log median) / sigma), plus half a cell.
      const double atom = 0.5 * std::erfc(-(std::log(p.lo / p.median) / p.sigma) / std::sqrt(2.0));
      EXPECT_GE(std::exp(g.log_prior().front()), atom);
      EXPECT_LT(std::exp(g.log_prior().front()), atom + 0.01);
    } else {
      EXPECT_NEAR(std::log(g.values().front() / p.median), -6 * p.sigma, 1e-9);
    }
  }
  EXPECT_THROW(LatentGrid(kTrainCostPrior, 2), Error);
  EXPECT_THROW(LatentGrid(LatentPrior{1.0, 0.0}, 100), Error);
}

// With no clamp and a = 0 the model is conjugate: log theta ~ N(m0, s0^2) and each exact
// run time gives log w ~ N(log b + log theta - s^2/2, s^2), so the posterior of log theta is
// normal with closed-form moments. The grid's posterior mean must reproduce it.
TEST(LatentGrid, PosteriorMeanMatchesTheConjugateNormalOnRandomShapes) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> n01;
  for (int shape = 0; shape < 40; ++shape) {
    const double median = std::exp(6 * u(rng) - 3), s0 = 0.1 + 0.9 * u(rng), s = 0.1 + 0.4 * u(rng);
    const int jobs = shape % 5 == 0 ? 0 : 1 + static_cast<int>(u(rng) * 200);
    const double theta = median * std::exp(s0 * n01(rng));
    const LatentGrid g(LatentPrior{median, s0}, 4096);
    std::vector<double> lp = g.log_prior();
    long double prec = 1.0L / (s0 * s0), num = std::log(median) / (s0 * s0);
    for (int j = 0; j < jobs; ++j) {
      const double b = std::exp(2 * u(rng));
      const double wall = b * theta * std::exp(s * n01(rng) - 0.5 * s * s);
      for (std::size_t i = 0; i < g.size(); ++i) lp[i] += log_density_of_run(wall, b * g.values()[i], s);
      const long double y = std::log(wall / b) + 0.5L * s * s;  // an observation of log theta
      prec += 1.0L / (s * s);
      num += y / (s * s);
    }
    const long double m = num / prec, v = 1.0L / prec;
    const double ref = static_cast<double>(std::exp(m + v / 2));
    const auto w = posterior_weights(lp);
    double mean = 0;
    for (std::size_t i = 0; i < g.size(); ++i) mean += w[i] * g.values()[i];
    EXPECT_NEAR(mean, ref, 2e-4 * ref) << "shape " << shape << " jobs " << jobs;
  }
}

// A job still running after t says theta is large: the posterior mean moves up, the more the
// longer it has run, and a job killed at its cap says the same as one running at the cap.
TEST(LatentGrid, SurvivalEvidenceMovesThePosteriorUp) {
  const LatentGrid g(kTrainCostPrior, 2048);
  auto mean_after = [&](double elapsed) {
    std::vector<double> lp = g.log_prior();
    for (std::size_t i = 0; i < g.size(); ++i) lp[i] += log_survival_of_run(elapsed, 100 + 20 * g.values()[i], 0.3);
    const auto w = posterior_weights(lp);
    double m = 0;
    for (std::size_t i = 0; i < g.size(); ++i) m += w[i] * g.values()[i];
    return m;
  };
  const double none = mean_after(1.0), short_run = mean_after(2000), long_run = mean_after(8000);
  EXPECT_NEAR(none, 150 * std::exp(0.18), 8);  // ~ the clamped log-normal's mean
  EXPECT_GT(short_run, none);
  EXPECT_GT(long_run, short_run);
  EXPECT_GT(long_run, (8000 - 100) / 20.0);  // at least the cost that would take 8000 s on average
}

}  // namespace
}  // namespace ttlpred::synth
