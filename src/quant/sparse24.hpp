#pragma once
// The 2:4 selection rule shared by pruning (prune_2_4 below), packing
// (engine/pack.cpp) and sparsity-aware training (train/compression.cpp), so that the packed
// kernels keep exactly the weights a pruned or sparsity-trained model keeps.
#include <cmath>
#include <cstdint>

#include "model/mlp.hpp"

namespace ttlpred::quant {

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

// keep[k] = 1 for the weights of row[0..n) that 2:4 pruning keeps: in every group of 4
// consecutive inputs (from input 0; a trailing partial group counts its missing inputs as
// zeros), the two of largest magnitude.
inline void mask_2_4(const float* row, std::uint32_t n, std::uint8_t* keep) {
  for (std::uint32_t g = 0; g < n; g += 4) {
    const std::uint32_t len = n - g < 4 ? n - g : 4;
    int a = -1, b = -1;
    top2_of_group(row + g, len, a, b);
    for (std::uint32_t k = 0; k < len; ++k)
      keep[g + k] = static_cast<int>(k) == a || static_cast<int>(k) == b ? 1 : 0;
  }
}

// Keeps, in every group of 4 consecutive inputs of every output row of every layer, the 2
// weights mask_2_4 keeps and zeroes the rest. Embeddings and biases are untouched. The
// sparse variants run the pruned model, so tests compare them with its reference forward.
MlpModel prune_2_4(const MlpModel& model);

}  // namespace ttlpred::quant
