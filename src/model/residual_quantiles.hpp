#pragma once
// Sorted order statistics of calibration scores, from which split conformal prediction reads
// the quantile that a new exchangeable score exceeds with probability at most alpha. Shared
// by the log-ratio margins and request-aware tables (model/safe_ttl.hpp) and the per-job
// quantile rule (model/quantile_ttl.hpp). Stored capped: all order statistics up to a cap, an
// evenly spaced subset beyond it, read rounded up (never below the exact quantile).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/binary_io.hpp"

namespace ttlpred {

// Sorted residual order statistics of `n` residuals; values[j] is the residual of 0-based
// rank floor(j*(n-1)/(m-1)), m = values.size() (all ranks when m == n).
struct ResidualQuantiles {
  std::uint64_t n = 0;
  std::vector<float> values;

  static ResidualQuantiles from_residuals(std::vector<float> residuals, std::size_t max_stored);
  // The conformal quantile at level 1 - alpha; never below the exact one. When
  // (n+1)(1-alpha) > n the guarantee cannot be met and the largest residual is returned.
  double conformal_quantile(double alpha) const;
};

// The stored form (n, then the values); reading checks sizes, finiteness and order.
void write_residual_quantiles(BinaryWriter& w, const ResidualQuantiles& q);
ResidualQuantiles read_residual_quantiles(BinaryReader& r);

}  // namespace ttlpred
