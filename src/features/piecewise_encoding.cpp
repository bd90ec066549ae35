#include "features/piecewise_encoding.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace ttlpred {

std::vector<PiecewiseColumn> fit_piecewise(std::span<const float> values, std::size_t rows, std::size_t width,
                                           std::span<const std::uint32_t> columns, std::uint32_t bins) {
  if (bins < 2 || bins > kMaxPiecewiseBins)
    throw Error("piecewise encoding: " + std::to_string(bins) + " bins (use 2 to " +
                std::to_string(kMaxPiecewiseBins) + ", or 0 for none)");
  if (values.size() != rows * width) throw Error("piecewise encoding: the matrix is not rows x width");
  std::vector<PiecewiseColumn> out;
  if (rows == 0) return out;
  std::vector<float> v(rows);
  for (const std::uint32_t j : columns) {
    if (j >= width) throw Error("piecewise encoding: column " + std::to_string(j) + " is past the matrix");
    for (std::size_t i = 0; i < rows; ++i) v[i] = values[i * width + j];
    std::sort(v.begin(), v.end());
    PiecewiseColumn pc;
    pc.column = j;
    for (std::uint32_t q = 0; q <= bins; ++q) {
      const float x = v[q * (rows - 1) / bins];
      if (std::isfinite(x) && (pc.edges.empty() || x > pc.edges.back())) pc.edges.push_back(x);
    }
    if (pc.edges.size() >= 3) out.push_back(std::move(pc));
  }
  return out;
}

void apply_piecewise(std::span<const PiecewiseColumn> pcs, const float* row, float* out) {
  for (const PiecewiseColumn& pc : pcs) {
    const float x = row[pc.column];
    for (std::size_t t = 1; t < pc.edges.size(); ++t) {
      const float lo = pc.edges[t - 1], hi = pc.edges[t];
      const float e = x < lo ? 0.0f : x >= hi ? 1.0f : (x - lo) / (hi - lo);
      *out++ = 2.0f * e - 1.0f;
    }
  }
}

std::size_t piecewise_width(std::span<const PiecewiseColumn> pcs) {
  std::size_t n = 0;
  for (const PiecewiseColumn& pc : pcs) n += pc.bins();
  return n;
}

void check_piecewise(std::span<const PiecewiseColumn> pcs, std::size_t dense_width, const std::string& what) {
  for (std::size_t i = 0; i < pcs.size(); ++i) {
    const PiecewiseColumn& pc = pcs[i];
    const std::string where = what + ": piecewise column " + std::to_string(i);
    if (pc.column >= dense_width) throw Error(where + " encodes dense column " + std::to_string(pc.column) + " of " + std::to_string(dense_width));
    if (i > 0 && pc.column <= pcs[i - 1].column) throw Error(where + ": columns out of order");
    if (pc.edges.size() < 3 || pc.edges.size() > kMaxPiecewiseBins + 1)
      throw Error(where + ": " + std::to_string(pc.edges.size()) + " edges (3 to " + std::to_string(kMaxPiecewiseBins + 1) + ")");
    for (std::size_t t = 0; t < pc.edges.size(); ++t)
      if (!std::isfinite(pc.edges[t]) || (t > 0 && !(pc.edges[t] > pc.edges[t - 1])))
        throw Error(where + ": edges must be finite and strictly ascending");
  }
}

}  // namespace ttlpred
