// The normal-mean MLE with right-censored values (features/censored_mean.hpp) against a
// plain reference: the log-likelihood maximized by golden-section search in long double,
// on random samples of many shapes; and the hazard against its long-double definition.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "features/censored_mean.hpp"

namespace ttlpred {
namespace {

long double reference_hazard(long double z) {
  const long double pdf = std::exp(-0.5L * z * z) / std::sqrt(2.0L * 3.14159265358979323846264338327950288L);
  return pdf / (0.5L * std::erfc(z / std::sqrt(2.0L)));
}

// log L(mu) up to a constant: the exact values through their mean, each censored value
// through log(1 - Phi((c - mu) / sigma)).
long double log_likelihood(long double mu, double mean, std::uint64_t n, const std::vector<double>& censored, double sigma) {
  const long double d = (mean - mu) / sigma;
  long double ll = -0.5L * static_cast<long double>(n) * d * d;
  for (double c : censored) ll += std::log(0.5L * std::erfc((c - mu) / (sigma * std::sqrt(2.0L))));
  return ll;
}

double reference_mean(double mean, std::uint64_t n, const std::vector<double>& censored, double sigma) {
  // The likelihood is log-concave in mu: golden section over a bracket that holds the maximum.
  long double lo = mean - 1.0, hi = mean + 1.0;
  for (double c : censored) hi = std::max<long double>(hi, c + 40.0 * sigma);
  const long double g = (std::sqrt(5.0L) - 1.0L) / 2.0L;
  long double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  long double fa = log_likelihood(a, mean, n, censored, sigma), fb = log_likelihood(b, mean, n, censored, sigma);
  for (int it = 0; it < 300; ++it) {
    if (fa < fb) {
      lo = a;
      a = b;
      fa = fb;
      b = lo + g * (hi - lo);
      fb = log_likelihood(b, mean, n, censored, sigma);
    } else {
      hi = b;
      b = a;
      fb = fa;
      a = hi - g * (hi - lo);
      fa = log_likelihood(a, mean, n, censored, sigma);
    }
  }
  return static_cast<double>(0.5L * (lo + hi));
}

TEST(CensoredMean, HazardMatchesItsDefinition) {
  for (double z = -40.0; z <= 48.0; z += 0.37) {  // past 37 the asymptotic series answers
    const long double want = reference_hazard(z);
    EXPECT_NEAR(normal_hazard(z), static_cast<double>(want), 1e-12 * (1.0 + std::abs(static_cast<double>(want)))) << z;
  }
  EXPECT_GT(normal_hazard(37.0 + 1e-9), normal_hazard(37.0));
  EXPECT_NEAR(normal_hazard(1e3), 1e3 + 1e-3 - 2e-9, 1e-11);
  EXPECT_EQ(normal_hazard(-50.0), 0.0);
}

TEST(CensoredMean, WithoutCensoredValuesItIsTheMean) {
  EXPECT_EQ(censored_normal_mean(1.25, 3, {}, 0.3), 1.25);
}

// Table-driven: number of exact values, of censored ones, where the censored ones lie
// (below, around or above the exact mean, in sigmas), sigma.
struct Shape {
  std::uint64_t n;
  std::size_t m;
  double offset;
  double sigma;
};

TEST(CensoredMean, MatchesTheReferenceOnRandomSamples) {
  const Shape shapes[] = {{1, 1, 0.0, 0.3},   {1, 64, 1.0, 0.3},  {4, 10, -3.0, 0.2}, {2, 30, 2.0, 0.05},
                          {19, 5, 0.5, 0.5},  {99, 64, 0.0, 1.0}, {1, 3, 8.0, 0.1},   {3, 64, -10.0, 0.4},
                          {10, 1, 25.0, 0.2}, {5, 20, 4.0, 2.0}};
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  int checked = 0;
  for (const Shape& s : shapes)
    for (int rep = 0; rep < 20; ++rep) {
      const double mean = 5.0 * normal(rng);
      std::vector<double> censored(s.m);
      for (double& c : censored) c = mean + s.sigma * (s.offset + normal(rng));
      const double got = censored_normal_mean(mean, s.n, censored, s.sigma);
      const double want = reference_mean(mean, s.n, censored, s.sigma);
      ASSERT_NEAR(got, want, 1e-7 * s.sigma * (1.0 + std::abs(want))) << "n " << s.n << " m " << s.m << " offset " << s.offset;
      ASSERT_GE(got, mean);
      ++checked;
    }
  EXPECT_EQ(checked, 200);
}

TEST(CensoredMean, LowerBoundsOnlyRaiseTheMean) {
  // A bound far below the sample says nearly nothing; more bounds, or higher ones, move mu up.
  const double low = censored_normal_mean(0.0, 2, std::vector<double>{-3.0}, 0.3);
  EXPECT_GT(low, 0.0);
  EXPECT_LT(low, 1e-12);
  const std::vector<double> some{0.1, 0.2}, more{0.1, 0.2, 0.6};
  EXPECT_LT(censored_normal_mean(0.0, 2, some, 0.3), censored_normal_mean(0.0, 2, more, 0.3));
  // One exact value and one bound 10 sigma above it: mu / sigma = h((3 - mu) / sigma), just
  // above halfway (h(z) > z).
  const double torn = censored_normal_mean(0.0, 1, std::vector<double>{3.0}, 0.3);
  EXPECT_GT(torn, 1.5);
  EXPECT_LT(torn, 1.6);
}

}  // namespace
}  // namespace ttlpred
