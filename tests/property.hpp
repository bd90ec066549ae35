#pragma once
// Property-based checks with a small seeded generator: a property is run for many seeds,
// each drawing its own random case, and a failure names the seed that broke it, so that
// `for_each_seed` narrowed to that one seed replays the case exactly (std::mt19937_64 and
// libstdc++'s distributions are the same on every host).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace ttlpred::test {

// Runs `property(rng, seed)` for seeds first .. first + count - 1; stops at the first seed
// with a fatal failure.
template <class Property>
void for_each_seed(std::uint64_t first, std::uint64_t count, Property property) {
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    SCOPED_TRACE("property case seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    property(rng, seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

inline double uniform(std::mt19937_64& rng, double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }
inline std::size_t below(std::mt19937_64& rng, std::size_t n) { return static_cast<std::size_t>(rng() % n); }

}  // namespace ttlpred::test
