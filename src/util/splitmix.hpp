#pragma once
// splitmix64 (Steele, Lea and Flood): its finalizer, the one mixing function the history
// keys' hash, the synthetic trace's seeding and the trainer share, and a small, fully
// specified random generator on it. std::normal_distribution and friends differ between
// standard libraries; ours do not, so a seed means the same model everywhere.
#include <cmath>
#include <cstdint>

namespace ttlpred {

inline constexpr std::uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ull;

constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return splitmix64_mix(state_ += kSplitMix64Gamma); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [0, n), n > 0 (multiply-shift; the bias is below 2^-32 for our n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Standard normal by Box-Muller (one value per call; simple beats fast here).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace ttlpred
