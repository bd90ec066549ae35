#include "model/model_input.hpp"

#include <string>

#include "util/error.hpp"

namespace ttlpred {

void check_category_indices(const std::uint32_t* cardinality, std::size_t n, const std::uint32_t* cats,
                            std::size_t rows, const char* who) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < n; ++j)
      if (cats[r * n + j] >= cardinality[j])
        throw Error(std::string(who) + ": row " + std::to_string(r) + ", categorical column " + std::to_string(j) +
                    ": index " + std::to_string(cats[r * n + j]) + " >= cardinality " + std::to_string(cardinality[j]));
}

}  // namespace ttlpred
