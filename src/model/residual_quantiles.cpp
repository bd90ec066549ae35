#include "model/residual_quantiles.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace ttlpred {

ResidualQuantiles ResidualQuantiles::from_residuals(std::vector<float> residuals, std::size_t max_stored) {
  ResidualQuantiles q;
  q.n = residuals.size();
  if (residuals.empty()) return q;
  std::sort(residuals.begin(), residuals.end());
  const std::size_t n = residuals.size();
  const std::size_t m = std::max<std::size_t>(2, std::min(max_stored, n));
  if (m >= n) {
    q.values = std::move(residuals);
    return q;
  }
  q.values.resize(m);
  for (std::size_t j = 0; j < m; ++j) q.values[j] = residuals[j * (n - 1) / (m - 1)];
  return q;
}

double ResidualQuantiles::conformal_quantile(double alpha) const {
  if (n == 0 || values.empty()) throw Error("safe-TTL calibration has no residuals");
  const double level = std::ceil(static_cast<double>(n + 1) * (1.0 - alpha) - 1e-9);
  if (level > static_cast<double>(n)) return values.back();
  const std::uint64_t rank0 = static_cast<std::uint64_t>(std::max(level, 1.0)) - 1;  // 0-based rank
  const std::uint64_t m = values.size();
  if (m == n) return values[rank0];
  // Smallest stored j whose rank j*(n-1)/(m-1) (floored) is >= rank0: rounding up keeps the
  // TTL on the safe side of the exact quantile.
  const std::uint64_t j = (rank0 * (m - 1) + (n - 2)) / (n - 1);
  return values[std::min<std::uint64_t>(j, m - 1)];
}

void write_residual_quantiles(BinaryWriter& w, const ResidualQuantiles& q) {
  w.put<std::uint64_t>(q.n);
  w.put_vector(q.values);
}

ResidualQuantiles read_residual_quantiles(BinaryReader& r) {
  ResidualQuantiles q;
  q.n = r.get<std::uint64_t>();
  q.values = r.get_vector<float>(1u << 24);
  if (q.values.size() > q.n || (q.n > 0 && q.values.size() < std::min<std::uint64_t>(q.n, 2)))
    r.fail("safe-TTL residual table stores " + std::to_string(q.values.size()) + " values for " + std::to_string(q.n) + " residuals");
  for (std::size_t i = 0; i < q.values.size(); ++i) {
    if (!std::isfinite(q.values[i])) r.fail("safe-TTL residual is not finite");
    if (i > 0 && q.values[i] < q.values[i - 1]) r.fail("safe-TTL residuals are not sorted");
  }
  return q;
}

}  // namespace ttlpred
