#pragma once
// static_cast<float>(then(std::log1p(x))), the same bits, about twice as fast: the serving
// path takes up to 28 such logarithms per job (history: one per key for the request ratio
// and one per key and work field; encoder: the log1p fields), and glibc's log1p costs two
// to three times its log. Internal to the features library.
//
// How the bits stay the same (a rounding test, as correctly rounded libraries do it): for
// x >= 1, y = log(1 + x) is within 2^-53 (the rounding of 1 + x, which moves the log by its
// relative error) plus one ulp (glibc's log, < 0.52 ulp) of the true log1p(x), and glibc's
// log1p is within one ulp of it too; so both lie in [y - m, y + m] for m = 2^-46 y, 16 times
// what they need. `then` must be nondecreasing (a standardization (v - mean) * inv_std with
// inv_std > 0, or the identity), and rounding is monotonic, so when both ends of that
// interval round to the same float, every value in it does, glibc's log1p included. Else
// (about one argument in a few million, and every x < 1, NaN or infinity) glibc's log1p
// decides. tests/features/log1p_float_test.cpp checks it against std::log1p.
#include <cmath>

namespace ttlpred::features_detail {

template <class Then>
inline float log1p_then_float(double x, Then then) {
  if (x >= 1.0 && x <= 1e300) {
    const double y = std::log(1.0 + x);
    const double m = y * 0x1p-46;
    const float f = static_cast<float>(then(y));
    if (static_cast<float>(then(y - m)) == f && static_cast<float>(then(y + m)) == f) return f;
  }
  return static_cast<float>(then(std::log1p(x)));
}

inline float log1p_float(double x) {
  return log1p_then_float(x, [](double y) { return y; });
}

}  // namespace ttlpred::features_detail
