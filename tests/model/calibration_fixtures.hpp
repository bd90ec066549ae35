#pragma once
// A static safe-TTL calibration with known residuals, shared by the online-calibration tests
// (model/ and pipeline/): 100 jobs predicted at 100 s whose run times are 100 e^(i/100) s,
// i = 0..99, so the log residuals are exactly 0.00, 0.01, ..., 0.99.
#include <cmath>
#include <vector>

#include "model/safe_ttl.hpp"

namespace ttlpred::test {

inline SafeTtlCalibration hundred_residuals() {
  std::vector<float> wall, pred;
  for (int i = 0; i < 100; ++i) {
    pred.push_back(100.0f);
    wall.push_back(static_cast<float>(100.0 * std::exp(i / 100.0)));
  }
  SafeTtlOptions o;
  o.request_aware = false;
  return calibrate_safe_ttl(wall, pred, {}, o);
}

}  // namespace ttlpred::test
