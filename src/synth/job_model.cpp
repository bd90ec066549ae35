#include "synth/job_model.hpp"

#include <algorithm>
#include <cmath>

namespace ttlpred::synth {

namespace {
// Standard normal CDF.
double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Inverse standard normal CDF by bisection on phi: only used when building productions
// (a few thousand calls), so simplicity beats speed.
double phi_inverse(double q) {
  double lo = -10.0, hi = 10.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (phi(mid) < q) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}
}  // namespace

double parallel_speedup(JobType t, int cores) {
  if (cores <= 1) return 1.0;
  const double f = model_of(t).serial_fraction;
  return cores / (1.0 + f * (cores - 1));
}

double capped_lognormal_mean(double mean, double sigma, double cap) {
  if (!(cap > 0.0) || !(mean > 0.0)) return std::max(0.0, std::min(mean, cap));
  if (sigma <= 0.0) return std::min(mean, cap);
  // With X = mean * exp(sigma Z - sigma^2/2): P(X < cap) = phi(d) and
  // E[X; X < cap] = mean * phi(d - sigma), d = (ln(cap/mean) + sigma^2/2) / sigma.
  const double d = (std::log(cap / mean) + 0.5 * sigma * sigma) / sigma;
  return mean * phi(d - sigma) + cap * (1.0 - phi(d));
}

double lognormal_quantile(double mean, double sigma, double q) {
  return mean * std::exp(sigma * phi_inverse(q) - 0.5 * sigma * sigma);
}

double static_ttl(double p99_slowest_s, double margin, double step, double lo, double hi) {
  const double ttl = std::ceil(margin * p99_slowest_s / step) * step;
  return std::clamp(ttl, lo, hi);
}

}  // namespace ttlpred::synth
