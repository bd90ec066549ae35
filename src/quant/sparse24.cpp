#include "quant/sparse24.hpp"

#include <vector>

namespace ttlpred::quant {

MlpModel prune_2_4(const MlpModel& model) {
  MlpModel pruned = model;
  std::vector<std::uint8_t> keep;
  for (DenseLayer& l : pruned.layers) {
    keep.resize(l.in);
    for (std::uint32_t o = 0; o < l.out; ++o) {
      float* row = l.weight.data() + std::size_t{o} * l.in;
      mask_2_4(row, l.in, keep.data());
      for (std::uint32_t k = 0; k < l.in; ++k)
        if (!keep[k]) row[k] = 0.0f;
    }
  }
  return pruned;
}

}  // namespace ttlpred::quant
