#pragma once
// Piecewise-linear encoding of numeric columns (Gorishniy, Rubachev and Babenko, "On
// Embeddings for Numerical Features in Tabular Deep Learning", NeurIPS 2022): a value x of a
// column with bin edges b_0 < b_1 < ... < b_T becomes T numbers, one per bin,
//   e_t = 0 below b_{t-1}, 1 at or above b_t, (x - b_{t-1}) / (b_t - b_{t-1}) between,
// written as 2 e_t - 1 (in [-1, 1], the scale of the standardized columns beside them).
// The edges are quantiles of the column's standardized training values, so each bin holds
// about as many training jobs. An MLP reads a number through one weight per input; these
// give it one per bin, a shape a tree gets from its splits: on the real traces that is where
// the network lost to gradient-boosted trees (docs/ACCURACY.md has the numbers).
//
// The encoder (features/encoder.hpp) appends the bins of its numeric field columns after its
// dense columns; fit and apply live here so that they can be tested alone, and the sidecar
// (interop/sidecar.cpp) writes the same edges for serving stacks outside ttlpred.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ttlpred {

inline constexpr std::uint32_t kMaxPiecewiseBins = 64;
// The encoder takes the edges from at most this many training rows (evenly spaced): a 1 M-job
// fit encodes and sorts a sample, not every row.
inline constexpr std::size_t kPiecewiseSampleRows = 100000;

struct PiecewiseColumn {
  std::uint32_t column = 0;   // the dense column it encodes
  std::vector<float> edges;   // strictly ascending, finite; edges.size() - 1 bins (>= 2)
  std::size_t bins() const { return edges.size() - 1; }
};

// Edges for every column of `columns` (indices into a row-major `rows` x `width` matrix of
// standardized values): the quantiles 0, 1/bins, ..., 1 of the column's values, repeated
// edges merged. A column whose values give fewer than two bins (a constant or a 0/1
// indicator) gets none. Throws Error for bins outside [2, kMaxPiecewiseBins].
std::vector<PiecewiseColumn> fit_piecewise(std::span<const float> values, std::size_t rows, std::size_t width,
                                           std::span<const std::uint32_t> columns, std::uint32_t bins);

// Writes the bins of every column of `pcs`, in order, for one row of dense values `row`,
// to `out` (piecewise_width(pcs) floats). No allocation: the serving path calls it.
void apply_piecewise(std::span<const PiecewiseColumn> pcs, const float* row, float* out);
std::size_t piecewise_width(std::span<const PiecewiseColumn> pcs);

// Throws Error (prefixed `what`) unless every column is below `dense_width`, the columns
// ascend, and every column's edges are finite, strictly ascending and give 2 to
// kMaxPiecewiseBins bins: what a model file's reader checks.
void check_piecewise(std::span<const PiecewiseColumn> pcs, std::size_t dense_width, const std::string& what);

}  // namespace ttlpred
