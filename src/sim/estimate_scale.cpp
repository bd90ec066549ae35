#include "sim/estimate_scale.hpp"

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

}  // namespace ttlpred::sim
