#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "synth/rng.hpp"

namespace ttlpred::synth {
namespace {

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // First outputs of Vigna's reference splitmix64.c seeded with 0.
  std::uint64_t s = 0;
  EXPECT_EQ(splitmix64(s), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64(s), 0x6E789E6AA1B965F4ull);
}

TEST(Rng, SameSeedSameStreamDifferentSeedDifferentStream) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 1000; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
  Rng f1 = Rng(7).fork(1), f2 = Rng(7).fork(2);
  EXPECT_NE(f1.next(), f2.next());
}

struct Moments {
  double mean = 0, var = 0;
};
template <class Draw>
Moments moments(int n, Draw draw) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    s += x;
    s2 += x * x;
  }
  Moments m;
  m.mean = s / n;
  m.var = s2 / n - m.mean * m.mean;
  return m;
}

TEST(Rng, UniformAndIntegersCoverTheirRanges) {
  Rng r(1);
  const auto u = moments(200000, [&] { return r.uniform(); });
  EXPECT_NEAR(u.mean, 0.5, 0.003);
  EXPECT_NEAR(u.var, 1.0 / 12.0, 0.001);
  std::vector<int> seen(6, 0);
  for (int i = 0; i < 60000; ++i) {
    const auto k = r.between(3, 8);
    ASSERT_GE(k, 3);
    ASSERT_LE(k, 8);
    ++seen[static_cast<std::size_t>(k - 3)];
  }
  for (int c : seen) EXPECT_NEAR(c, 10000, 400);
}

TEST(Rng, NormalLogNormalExponentialParetoPoissonHaveTheirMoments) {
  Rng r(2);
  const auto n = moments(200000, [&] { return r.normal(); });
  EXPECT_NEAR(n.mean, 0.0, 0.01);
  EXPECT_NEAR(n.var, 1.0, 0.015);
  // The generator's noise: mean exactly 1 for any sigma.
  for (double sigma : {0.2, 0.45}) {
    const auto ln = moments(200000, [&] { return r.lognormal_mean1(sigma); });
    EXPECT_NEAR(ln.mean, 1.0, 0.004) << sigma;
    EXPECT_NEAR(ln.var, std::exp(sigma * sigma) - 1.0, 0.01) << sigma;
  }
  EXPECT_NEAR(moments(200000, [&] { return r.exponential(3.0); }).mean, 3.0, 0.03);
  // Pareto(1, 3): mean 1.5.
  EXPECT_NEAR(moments(200000, [&] { return r.pareto(1.0, 3.0); }).mean, 1.5, 0.02);
  for (double lambda : {0.6, 7.0, 120.0}) {
    const auto p = moments(100000, [&] { return static_cast<double>(r.poisson(lambda)); });
    EXPECT_NEAR(p.mean, lambda, 0.02 * lambda + 0.01) << lambda;
    EXPECT_NEAR(p.var, lambda, 0.05 * lambda + 0.02) << lambda;
  }
  EXPECT_EQ(r.poisson(0.0), 0u);
}

TEST(WeightedPicker, PicksInProportionAndNeverAZeroWeight) {
  const std::vector<double> w = {1.0, 0.0, 3.0, 0.0};
  WeightedPicker p(w);
  Rng r(3);
  std::vector<int> c(4, 0);
  for (int i = 0; i < 40000; ++i) ++c[p.pick(r)];
  EXPECT_EQ(c[1], 0);
  EXPECT_EQ(c[3], 0);
  EXPECT_NEAR(c[0], 10000, 400);
  EXPECT_NEAR(c[2], 30000, 400);
}

}  // namespace
}  // namespace ttlpred::synth
