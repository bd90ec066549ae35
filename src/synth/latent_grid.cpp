#include "synth/latent_grid.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace ttlpred::synth {

namespace {
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kHalfLog2Pi = 0.91893853320467274;
double normal_cdf(double x) { return 0.5 * std::erfc(-x / kSqrt2); }
}  // namespace

double log_normal_tail(double z) {
  // erfc keeps full relative precision down to ~1e-300 (z ~ 37); past z = 30 the
  // asymptotic series of Mills' ratio is exact to double precision.
  if (z < 30.0) return std::log(0.5 * std::erfc(z / kSqrt2));
  const double r = 1.0 / (z * z);
  return -0.5 * z * z - std::log(z) - kHalfLog2Pi + std::log1p(-r + 3 * r * r - 15 * r * r * r);
}

double log_density_of_run(double wall_s, double mean_s, double sigma) {
  const double z = (std::log(wall_s / mean_s) + 0.5 * sigma * sigma) / sigma;
  return -0.5 * z * z;
}

double log_survival_of_run(double elapsed_s, double mean_s, double sigma) {
  return log_normal_tail((std::log(elapsed_s / mean_s) + 0.5 * sigma * sigma) / sigma);
}

LatentGrid::LatentGrid(const LatentPrior& prior, std::size_t points) {
  if (points < 3) throw Error("LatentGrid: need at least 3 points");
  if (!(prior.median > 0) || !(prior.sigma > 0)) throw Error("LatentGrid: the prior needs median > 0 and sigma > 0");
  const double mu = std::log(prior.median), s = prior.sigma;
  const double lo = prior.lo > 0 ? std::max(std::log(prior.lo), mu - 6 * s) : mu - 6 * s;
  const double hi = std::isfinite(prior.hi) ? std::min(std::log(prior.hi), mu + 6 * s) : mu + 6 * s;
  if (!(hi > lo)) throw Error("LatentGrid: the prior's clamp bounds leave no room");
  const double step = (hi - lo) / static_cast<double>(points - 1);
  values_.resize(points);
  log_prior_.resize(points);
  for (std::size_t i = 0; i < points; ++i) {
    const double x = lo + step * static_cast<double>(i);
    // The cell [x - step/2, x + step/2], widened to -inf / +inf at the ends.
    const double c0 = i == 0 ? 0.0 : normal_cdf((x - 0.5 * step - mu) / s);
    const double c1 = i + 1 == points ? 1.0 : normal_cdf((x + 0.5 * step - mu) / s);
    values_[i] = std::exp(x);
    log_prior_[i] = std::log(std::max(c1 - c0, 1e-300));
  }
}

std::vector<double> posterior_weights(const std::vector<double>& log_posterior) {
  std::vector<double> w(log_posterior.size(), 0.0);
  if (w.empty()) return w;
  const double top = *std::max_element(log_posterior.begin(), log_posterior.end());
  double sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double d = log_posterior[i] - top;
    if (d > -40.0) sum += w[i] = std::exp(d);
  }
  for (double& x : w) x /= sum;
  return w;
}

}  // namespace ttlpred::synth
