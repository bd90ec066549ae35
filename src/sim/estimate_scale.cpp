#include "sim/estimate_scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "util/error.hpp"

namespace ttlpred::sim {

EstimateScaleOptions estimate_scale_from_text(const std::string& text) {
  EstimateScaleOptions o;
  if (text == kDefaultEstimateScale) {
    o.candidates = {1.0, 0.5, 0.25, 0.125, 0.0625};
    return o;
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0 || v > 1)
    throw Error("simulate: --estimate-scale must be auto or a number in (0, 1], got '" + text + "'");
  o.candidates = {v};
  return o;
}

ReplayEvidence::ReplayEvidence(std::size_t candidates) : k_(candidates), sum_(candidates, 0.0), dsum2_(candidates * candidates, 0.0) {}

void ReplayEvidence::add(const std::vector<std::vector<double>>& bsld) {
  if (bsld.size() != k_) throw Error("estimate scale: a replay without one row per candidate");
  const std::size_t n = bsld.empty() ? 0 : bsld[0].size();
  for (const auto& row : bsld)
    if (row.size() != n) throw Error("estimate scale: a replay's rows differ in length");
  for (std::size_t a = 0; a < k_; ++a) {
    for (std::size_t i = 0; i < n; ++i) sum_[a] += bsld[a][i];
    for (std::size_t b = a + 1; b < k_; ++b)
      for (std::size_t i = 0; i < n; ++i) {
        const double d = bsld[a][i] - bsld[b][i];
        dsum2_[a * k_ + b] += d * d;
      }
  }
  n_ += n;
}

std::size_t ReplayEvidence::pick() const {
  if (n_ == 0) return 0;
  const std::size_t lowest = static_cast<std::size_t>(std::min_element(sum_.begin(), sum_.end()) - sum_.begin());
  const double n = static_cast<double>(n_);
  for (std::size_t a = 0; a < lowest; ++a) {
    const double m = (sum_[a] - sum_[lowest]) / n;  // the mean of the paired differences
    const double var = n_ > 1 ? std::max(0.0, (dsum2_[a * k_ + lowest] - n * m * m) / (n - 1)) : 0.0;
    if (m <= std::sqrt(var / n)) return a;
  }
  return lowest;
}

}  // namespace ttlpred::sim
