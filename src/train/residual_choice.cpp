#include "train/residual_choice.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/error.hpp"

namespace ttlpred {

namespace {

// Count, sum and sum of squares of t over some rows: their squared error around their mean.
struct Moments {
  double n = 0, s = 0, ss = 0;
  void add(double t) {
    n += 1;
    s += t;
    ss += t * t;
  }
  double sse() const { return n > 0 ? ss - s * s / n : 0.0; }
};

}  // namespace

ResidualBase choose_residual_base(const EncodedBatch& x, std::span<const float> wall_s, std::size_t rows,
                                  const TargetTransform& tt, std::span<const BaseColumn> candidates,
                                  std::int32_t group_cat) {
  std::size_t groups = 1;
  if (group_cat >= 0) {
    if (static_cast<std::size_t>(group_cat) >= x.cat_width)
      throw Error("residual base: group column " + std::to_string(group_cat) + " is not in the batch");
    groups = x.cat_cardinality[static_cast<std::size_t>(group_cat)];
  }
  for (const auto& c : candidates)
    if (c.dense >= x.dense_width)
      throw Error("residual base: candidate '" + c.name + "' is dense column " + std::to_string(c.dense) +
                  ", past the batch's " + std::to_string(x.dense_width));
  if (candidates.empty() || rows == 0) return {};
  if (rows > x.rows || rows > wall_s.size()) throw Error("residual base: more rows than the batch has");

  const std::size_t nc = candidates.size();
  auto group_of = [&](std::size_t r) { return group_cat < 0 ? 0 : x.cat_row(r)[static_cast<std::size_t>(group_cat)]; };
  std::vector<double> t(rows);
  for (std::size_t r = 0; r < rows; ++r) t[r] = tt.to_t(static_cast<double>(wall_s[r]) / 3600.0);

  std::vector<std::vector<std::uint32_t>> chain(groups);  // candidate indices, in order
  std::vector<std::uint8_t> covered(rows, 0);             // the row knows a listed candidate (its
                                                          // error from it is fixed from then on)
  std::vector<std::uint8_t> open(groups, 1);              // the group's list may still grow
  for (std::size_t step = 0; step < kMaxResidualChain; ++step) {
    // Per group and candidate not yet listed: the squared error of the rows it would cover,
    // and the moments of the rows still uncovered after it; and the uncovered rows' own.
    std::vector<double> sse_new(groups * nc, 0.0);
    std::vector<Moments> left(groups * nc), now(groups);
    for (std::size_t r = 0; r < rows; ++r) {
      if (covered[r]) continue;
      const std::size_t g = group_of(r);
      if (!open[g]) continue;
      now[g].add(t[r]);
      const float* dense = x.dense_row(r);
      for (std::size_t c = 0; c < nc; ++c) {
        if (!candidates[c].known(dense)) {
          left[g * nc + c].add(t[r]);
          continue;
        }
        const double e = t[r] - tt.to_t(candidates[c].hours(dense));
        sse_new[g * nc + c] += e * e;
      }
    }
    bool grew = false;
    for (std::size_t g = 0; g < groups; ++g) {
      if (!open[g]) continue;
      double best = now[g].sse();
      std::size_t pick = nc;
      for (std::size_t c = 0; c < nc; ++c) {
        if (std::find(chain[g].begin(), chain[g].end(), c) != chain[g].end()) continue;
        const double j = sse_new[g * nc + c] + left[g * nc + c].sse();
        if (j < best) {
          best = j;
          pick = c;
        }
      }
      if (pick == nc) {
        open[g] = 0;
        continue;
      }
      chain[g].push_back(static_cast<std::uint32_t>(pick));
      grew = true;
    }
    if (!grew) break;
    // The rows the new candidates cover.
    for (std::size_t r = 0; r < rows; ++r) {
      if (covered[r]) continue;
      const std::size_t g = group_of(r);
      if (!open[g] || chain[g].size() != step + 1) continue;
      const BaseColumn& c = candidates[chain[g].back()];
      if (c.known(x.dense_row(r))) covered[r] = 1;
    }
  }

  // Keep only the listed candidates, renumbered in order of first use.
  ResidualBase out;
  out.group_cat = group_cat;
  out.by_group.resize(groups);
  std::vector<std::int64_t> kept(nc, -1);
  for (std::size_t g = 0; g < groups; ++g)
    for (const std::uint32_t c : chain[g]) {
      if (kept[c] < 0) {
        kept[c] = static_cast<std::int64_t>(out.columns.size());
        out.columns.push_back(candidates[c]);
      }
      out.by_group[g].push_back(static_cast<std::uint32_t>(kept[c]));
    }
  if (out.columns.empty()) return {};
  return out;
}

}  // namespace ttlpred
