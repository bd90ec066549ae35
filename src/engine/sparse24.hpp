#pragma once
// The 2:4 selection rule shared by pruning (reference_mlp.cpp) and packing (pack.cpp), so
// the packed kernels keep exactly the weights the pruned reference model keeps.
#include <cmath>
#include <cstdint>

namespace ttlpred::engine {

// Indices (0..3) of the two largest |w| among w[0..n) (n <= 4; missing entries are zeros);
// ties go to the lower index. first < second is not guaranteed.
inline void top2_of_group(const float* w, std::uint32_t n, int& first, int& second) {
  auto mag = [&](int k) { return k < static_cast<int>(n) ? std::fabs(w[k]) : 0.0f; };
  first = -1;
  second = -1;
  for (int k = 0; k < 4; ++k) {
    const float a = mag(k);
    if (first < 0 || a > mag(first)) {
      second = first;
      first = k;
    } else if (second < 0 || a > mag(second)) {
      second = k;
    }
  }
}

}  // namespace ttlpred::engine
