// Normal-mean MLE with right-censored values (features/censored_mean.hpp).
#include "features/censored_mean.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ttlpred {

double normal_hazard(double z) {
  // erfc and the density underflow a little past z = 37; from there the asymptotic series
  // z + 1/z - 2/z^3 + 10/z^5 - 74/z^7 + 706/z^9 is exact to double precision (the next
  // term, 8162/z^11, is below 1e-15 relative).
  if (z > 37.0) {
    const double iz2 = 1.0 / (z * z);
    return z + 1.0 / z * (1.0 - iz2 * (2.0 - iz2 * (10.0 - iz2 * (74.0 - 706.0 * iz2))));
  }
  const double pdf = std::exp(-0.5 * z * z) * (0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
  return pdf / (0.5 * std::erfc(z * (0.5 * std::numbers::sqrt2)));
}

double censored_normal_mean(double mean_exact, std::uint64_t n_exact, std::span<const double> censored, double sigma) {
  if (censored.empty()) return mean_exact;
  const double n = static_cast<double>(n_exact), inv_sigma = 1.0 / sigma;
  // score(mu) * sigma and its derivative in mu times sigma^2 (h'(z) = h (h - z), in (0, 1)).
  auto score = [&](double mu, double* slope) {
    double s = n * (mean_exact - mu) * inv_sigma, d = n;
    for (double c : censored) {
      const double z = (c - mu) * inv_sigma, h = normal_hazard(z);
      s += h;
      d += h * (h - z);
    }
    *slope = d;
    return s;
  };
  // The bracket: score(lo) >= 0 at the exact mean; above it, step up until the score is < 0
  // (each censored term is < z + 1/z + ..., so mu = max(c) + a few sigma always ends it).
  double lo = mean_exact, hi = std::max(mean_exact, *std::max_element(censored.begin(), censored.end())) + sigma;
  double slope = 0;
  while (score(hi, &slope) >= 0) hi += (hi - lo) + sigma;
  double mu = lo;
  for (int it = 0; it < 100; ++it) {
    const double s = score(mu, &slope);
    if (s == 0) return mu;
    (s > 0 ? lo : hi) = mu;
    double next = mu + s * sigma / slope;  // Newton: d score / d mu = -slope / sigma
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - mu) <= 1e-12 * (1.0 + std::abs(mu))) return next;
    mu = next;
  }
  return mu;
}

}  // namespace ttlpred
