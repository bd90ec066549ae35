// The piecewise-linear encoding alone (features/piecewise_encoding.hpp): quantile edges and
// the bins of a value, computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "features/piecewise_encoding.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// Column 0: 0, 1, ..., 100; column 1: constant 7; column 2: a 0/1 indicator.
std::vector<float> three_columns() {
  std::vector<float> v;
  for (int i = 0; i <= 100; ++i) v.insert(v.end(), {static_cast<float>(i), 7.0f, static_cast<float>(i % 2)});
  return v;
}

TEST(Piecewise, EdgesAreTheQuantilesAndFlatColumnsGetNone) {
  const auto v = three_columns();
  const std::uint32_t columns[] = {0, 1, 2};
  const auto pcs = fit_piecewise(v, 101, 3, columns, 4);
  ASSERT_EQ(pcs.size(), 1u);  // the constant and the indicator give fewer than two bins
  EXPECT_EQ(pcs[0].column, 0u);
  EXPECT_EQ(pcs[0].edges, (std::vector<float>{0, 25, 50, 75, 100}));
  EXPECT_EQ(piecewise_width(pcs), 4u);
}

TEST(Piecewise, RepeatedQuantilesMerge) {
  // 90 zeros, 5 ones, 5 twos: the quantiles 0, 1/4, 1/2, 3/4 are all 0, so the edges would be
  // {0, 2}, one bin: the column gets none.
  std::vector<float> v(90, 0.0f);
  for (int i = 0; i < 10; ++i) v.push_back(i < 5 ? 1.0f : 2.0f);
  const std::uint32_t columns[] = {0};
  EXPECT_TRUE(fit_piecewise(v, 100, 1, columns, 4).empty());
  // 60 zeros, 35 ones, 5 twos: the quantile 3/4 is 1, so the edges are {0, 1, 2}.
  for (int i = 0; i < 30; ++i) v[static_cast<std::size_t>(i)] = 1.0f;
  const auto pcs = fit_piecewise(v, 100, 1, columns, 4);
  ASSERT_EQ(pcs.size(), 1u);
  EXPECT_EQ(pcs[0].edges, (std::vector<float>{0, 1, 2}));
}

TEST(Piecewise, ValuesByHand) {
  const PiecewiseColumn pc{1, {0, 25, 50, 75, 100}};
  const std::vector<PiecewiseColumn> pcs{pc};
  struct Case {
    float x;
    std::vector<float> bins;  // 2 e_t - 1
  };
  const Case cases[] = {
      {-3.0f, {-1, -1, -1, -1}},   // below the first edge: every bin empty
      {0.0f, {-1, -1, -1, -1}},    // at it
      {12.5f, {0, -1, -1, -1}},    // half of the first bin
      {25.0f, {1, -1, -1, -1}},    // the first bin full
      {60.0f, {1, 1, -0.2f, -1}},  // 10 of 25 into the third
      {100.0f, {1, 1, 1, 1}},      // the last edge
      {1e6f, {1, 1, 1, 1}},        // far above
  };
  for (const Case& c : cases) {
    const float row[] = {99.0f, c.x};
    float out[4];
    apply_piecewise(pcs, row, out);
    for (std::size_t t = 0; t < 4; ++t) EXPECT_NEAR(out[t], c.bins[t], 1e-6) << "x " << c.x << " bin " << t;
  }
}

TEST(Piecewise, RefusesBadBinsAndBadColumns) {
  const auto v = three_columns();
  const std::uint32_t columns[] = {0};
  EXPECT_THROW(fit_piecewise(v, 101, 3, columns, 1), Error);
  EXPECT_THROW(fit_piecewise(v, 101, 3, columns, kMaxPiecewiseBins + 1), Error);
  const std::uint32_t past[] = {3};
  EXPECT_THROW(fit_piecewise(v, 101, 3, past, 4), Error);

  const float inf = std::numeric_limits<float>::infinity();
  struct Bad {
    std::vector<PiecewiseColumn> pcs;
    const char* names;
  };
  const Bad bad[] = {
      {{{5, {0, 1, 2}}}, "dense column 5"},
      {{{1, {0, 1, 2}}, {0, {0, 1, 2}}}, "out of order"},
      {{{0, {0, 1}}}, "2 edges"},
      {{{0, {0, 2, 1}}}, "strictly ascending"},
      {{{0, {0, 1, inf}}}, "finite"},
  };
  for (const Bad& b : bad) {
    try {
      check_piecewise(b.pcs, 3, "model");
      ADD_FAILURE() << b.names << ": accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(b.names), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(check_piecewise(fit_piecewise(v, 101, 3, columns, 4), 3, "model"));
}

}  // namespace
}  // namespace ttlpred
