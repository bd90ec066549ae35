#pragma once
// A portable, hand-written random number generator for the synthetic trace. The std::
// distributions are implementation-defined (libstdc++ and libc++ give different numbers for
// the same engine), so every sampler here is our own: a seed yields the same trace on any
// platform whose libm agrees on log/exp/sqrt (glibc does, bit for bit, across x86-64 and
// aarch64).
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "util/splitmix.hpp"

namespace ttlpred::synth {

// splitmix64: expands one 64-bit seed into well-mixed words (used to seed xoshiro, whose
// state must not be all zero, and to derive independent streams).
constexpr std::uint64_t splitmix64(std::uint64_t& state) { return splitmix64_mix(state += kSplitMix64Gamma); }

// xoshiro256** (Blackman & Vigna): fast, 256-bit state, passes BigCrush.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // An independent generator for a sub-model (the world, one production ...), so that adding
  // draws in one place does not shift every number drawn elsewhere.
  Rng fork(std::uint64_t stream) {
    std::uint64_t x = next() ^ (stream * 0xD1B54A32D192ED03ull);
    return Rng(splitmix64(x));
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), n > 0 (multiply-high; the bias is below 2^-64 * n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Uniform integer in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  bool chance(double p) { return uniform() < p; }

  // Standard normal by Marsaglia's polar method (only log and sqrt: no trigonometry, whose
  // last-bit results differ more between libms). The second value of each pair is kept.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }
  double normal(double mean, double sd) { return mean + sd * normal(); }
  // exp(N(mu, sigma)).
  double lognormal(double mu, double sigma) { return std::exp(mu + sigma * normal()); }
  // Log-normal with mean exactly 1: exp(N(-sigma^2/2, sigma)). The generator's noise
  // factor, so that the noise-free expectation is the RMSE-optimal prediction.
  double lognormal_mean1(double sigma) { return std::exp(sigma * normal() - 0.5 * sigma * sigma); }
  // Log-normal whose median is `median`.
  double lognormal_median(double median, double sigma) { return median * std::exp(sigma * normal()); }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }
  // Pareto type I: x_m * U^(-1/alpha), U in (0, 1].
  double pareto(double x_min, double alpha) { return x_min * std::pow(1.0 - uniform(), -1.0 / alpha); }
  // Poisson: Knuth's product method for small means; for large means a rounded normal
  // (error well below what the trace needs, and bounded cost).
  std::uint64_t poisson(double mean) {
    if (!(mean > 0.0)) return 0;
    if (mean < 30.0) {
      const double limit = std::exp(-mean);
      std::uint64_t k = 0;
      double p = uniform();
      while (p > limit) {
        ++k;
        p *= uniform();
      }
      return k;
    }
    const double x = std::round(normal(mean, std::sqrt(mean)));
    return x < 0.0 ? 0 : static_cast<std::uint64_t>(x);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Weighted choice among a fixed set by binary search over cumulative weights.
class WeightedPicker {
 public:
  WeightedPicker() = default;
  explicit WeightedPicker(std::span<const double> weights) {
    cumulative_.reserve(weights.size());
    double total = 0.0;
    for (double w : weights) cumulative_.push_back(total += (w > 0.0 ? w : 0.0));
  }
  bool empty() const { return cumulative_.empty() || cumulative_.back() <= 0.0; }
  std::size_t pick(Rng& rng) const {
    const double x = rng.uniform() * cumulative_.back();
    std::size_t lo = 0, hi = cumulative_.size() - 1;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (cumulative_[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

 private:
  std::vector<double> cumulative_;
};

}  // namespace ttlpred::synth
