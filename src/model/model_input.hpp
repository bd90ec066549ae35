#pragma once
// The model's input contract, shared by the feature encoder (which produces it), the trainer
// and every inference backend (which consume it): per row, `dense_width` standardized floats
// and `cat_width` category indices, each below its column's cardinality (index 0 = the
// out-of-vocabulary / unknown bucket). Row-major, so that row r's dense features are
// dense[r*dense_width ... +dense_width). An index at or past the cardinality is an error on
// every backend (check_category_indices), never silently read as the unknown bucket: it
// means the encoder and the network disagree, and a quiet answer would hide that.
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

// Throws ttlpred::Error naming `who`, the row, the column and the bound for the first index
// cats[r * n_cat + j] >= cardinality[j] of `rows` rows. (Pointers, not std::span: the CUDA
// backend's kernels include the model headers in nvcc's C++17.)
void check_category_indices(const std::uint32_t* cardinality, std::size_t n_cat, const std::uint32_t* cats,
                            std::size_t rows, const char* who);

}  // namespace ttlpred
