// log1p_then_float (features/log1p_float.hpp) gives static_cast<float>(then(std::log1p(x)))
// bit for bit: on arguments spread over the range the history and encoder see, on the
// arguments whose log1p lies nearest a float rounding boundary (where the fast log and
// glibc's log1p could round apart: the rounding test must send those to log1p), and on the
// values the fast path never takes.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "features/log1p_float.hpp"

namespace ttlpred {
namespace {

using features_detail::log1p_float;
using features_detail::log1p_then_float;

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

TEST(Log1pFloat, SameBitsAsLog1pOverTheRange) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-3.0, 15.0);
  for (int i = 0; i < 2'000'000; ++i) {
    const double x = std::pow(10.0, exponent(rng));
    ASSERT_EQ(bits(log1p_float(x)), bits(static_cast<float>(std::log1p(x)))) << x;
  }
}

TEST(Log1pFloat, SameBitsThroughAStandardization) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(0.0, 12.0), mean(-2.0, 20.0), inv_std(0.01, 10.0);
  for (int i = 0; i < 1'000'000; ++i) {
    const double x = std::pow(10.0, exponent(rng)), m = mean(rng), s = inv_std(rng);
    const auto then = [&](double y) { return (y - m) * s; };
    ASSERT_EQ(bits(log1p_then_float(x, then)), bits(static_cast<float>(then(std::log1p(x))))) << x << " " << m << " " << s;
  }
}

// x = expm1(b) for b a midpoint between two adjacent floats: log1p(x) is within a few
// double ulps of a float rounding boundary, the case the rounding test exists for.
TEST(Log1pFloat, SameBitsNextToFloatRoundingBoundaries) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<float> y(0.7f, 40.0f);
  int near = 0;
  for (int i = 0; i < 200'000; ++i) {
    const float f = y(rng);
    const double mid = 0.5 * (static_cast<double>(f) + static_cast<double>(std::nextafter(f, 100.0f)));
    const double x0 = std::expm1(mid);
    double x = x0;
    for (int step = -3; step <= 3; ++step) {
      x = x0 + step * std::ldexp(x0, -52);
      ASSERT_EQ(bits(log1p_float(x)), bits(static_cast<float>(std::log1p(x)))) << x;
      near += std::fabs(std::log1p(x) - mid) < std::ldexp(mid, -50);
    }
  }
  EXPECT_GT(near, 100'000);  // the arguments really land next to the boundaries
}

TEST(Log1pFloat, ValuesOffTheFastPathGoToLog1p) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double x : {0.0, -0.0, 1e-300, 1e-8, 0.25, 0.999999, 1.0, -0.5, -1.0, -2.0, 1e300, 1.5e300, 1e308, inf, -inf}) {
    EXPECT_EQ(bits(log1p_float(x)), bits(static_cast<float>(std::log1p(x)))) << x;
  }
  EXPECT_TRUE(std::isnan(log1p_float(nan)));
}

}  // namespace
}  // namespace ttlpred
