#include "train/blas_threads.hpp"

#include <cblas.h>

namespace ttlpred {

void use_single_threaded_blas() {
  static const bool pinned = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)pinned;
}

}  // namespace ttlpred
