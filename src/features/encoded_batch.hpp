#pragma once
// What the feature encoder hands to a model: per row, `dense_width` standardized floats and
// `cat_width` category indices (index 0 = out-of-vocabulary / unknown). Row-major, so that
// row r's dense features are dense[r*dense_width ... +dense_width).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ttlpred {

struct EncodedBatch {
  std::size_t rows = 0;
  std::size_t dense_width = 0;
  std::size_t cat_width = 0;
  std::vector<float> dense;          // rows x dense_width
  std::vector<std::uint32_t> cats;   // rows x cat_width, each < cat_cardinality[j]
  std::vector<std::uint32_t> cat_cardinality;  // per categorical column, OOV bucket included

  const float* dense_row(std::size_t r) const { return dense.data() + r * dense_width; }
  const std::uint32_t* cat_row(std::size_t r) const { return cats.data() + r * cat_width; }
};

}  // namespace ttlpred
