// The quantile heads' loss (model/quantile_heads.hpp) inside the network's backward pass:
// the gradient against finite differences, and the pinball loss against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/quantile_heads.hpp"
#include "train/mlp_net.hpp"

namespace ttlpred {
namespace {

TEST(QuantileLoss, BackwardMatchesFiniteDifferencesWithHeadsAndCensoring) {
  NetShape s;
  s.dense_inputs = 3;
  s.emb_card = {4};
  s.emb_dim = {2};
  s.widths = {6, 1 + 3};  // the mean and three heads
  s.acts = {Activation::LeakyRelu, Activation::None};
  EncodedBatch x;
  x.rows = 9;
  x.dense_width = 3;
  x.cat_width = 1;
  x.cat_cardinality = {4};
  std::mt19937_64 rng(5);
  std::normal_distribution<float> n01;
  for (std::size_t i = 0; i < x.rows * 3; ++i) x.dense.push_back(n01(rng));
  for (std::size_t r = 0; r < x.rows; ++r) x.cats.push_back(static_cast<std::uint32_t>(r % 4));
  std::vector<float> y(x.rows);
  for (float& v : y) v = 2.0f * n01(rng);
  std::vector<std::uint8_t> censored(x.rows, 0);
  censored[2] = censored[7] = 1;
  const std::vector<std::uint32_t> rows = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> levels = {0.5f, 0.9f, 0.99f};
  const QuantileLoss ql{levels, 0.7f};

  auto params = init_parameters<double>(s, 11);
  const NetLayout L(s);
  for (std::size_t o = 0; o < s.widths[0]; ++o) params[L.bias[0] + o] = 0.1 * static_cast<double>(o % 3) - 0.05;
  std::vector<double> grad, scratch;
  net_loss_and_gradient<double>(s, params.data(), x, rows, y.data(), grad, censored.data(), &ql);
  ASSERT_EQ(grad.size(), L.total);
  // 1e-5, not smaller: the loss sums nine rows, and at 1e-6 its rounding (about 1e-15 of it,
  // divided by 2 eps) reached 1e-5 of the smallest gradients once FMA contraction was on.
  const double eps = 1e-5;
  double worst = 0;
  for (std::size_t i = 0; i < L.total; ++i) {
    auto p = params;
    p[i] += eps;
    const double up = net_loss_and_gradient<double>(s, p.data(), x, rows, y.data(), scratch, censored.data(), &ql);
    p[i] -= 2 * eps;
    const double down = net_loss_and_gradient<double>(s, p.data(), x, rows, y.data(), scratch, censored.data(), &ql);
    const double numeric = (up - down) / (2 * eps);
    worst = std::max(worst, std::abs(numeric - grad[i]) / std::max(1e-4, std::abs(numeric) + std::abs(grad[i])));
  }
  // The pinball loss has kinks where a quantile meets its target; none of these random rows
  // sits within eps of one, so the difference quotient is the derivative.
  EXPECT_LT(worst, 1e-5);
}

TEST(QuantileLoss, HeadsAreMonotoneWhateverTheirRawOutputs) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> wide(0.0, 30.0);
  for (int t = 0; t < 1000; ++t) {
    double raw[6], q[6];
    for (double& v : raw) v = wide(rng);
    decode_quantile_heads(raw, 6, 0.25, q);
    EXPECT_DOUBLE_EQ(q[0], raw[0] + 0.25);
    for (int j = 1; j < 6; ++j) EXPECT_GE(q[j], q[j - 1]);
  }
  // Large raw outputs: softplus(x) = x without overflow; very negative: a tiny positive step.
  EXPECT_DOUBLE_EQ(softplus(800.0), 800.0);
  EXPECT_GT(softplus(-30.0), 0.0);
  EXPECT_LT(softplus(-30.0), 1e-12);
}

TEST(QuantileLoss, PinballAgainstHandComputedValues) {
  // Heads raw (0.2, ln(e^0.5 - 1)): quantiles 0.2 and 0.7 exactly.
  const double raw[2] = {0.2, std::log(std::exp(0.5) - 1.0)};
  const std::vector<float> levels = {0.5f, 0.9f};
  double g[2];
  // y = 1.0: above both. Loss 0.5 * 0.8 + 0.9 * 0.3 = 0.67.
  EXPECT_NEAR(quantile_heads_loss<double>(raw, levels, 1.0, false, g), 0.5 * 0.8 + 0.9f * 0.3, 1e-7);
  // dL/dq = (-0.5, -0.9); raw_0 moves both, raw_1 the second through logistic(raw_1) = 1 - e^-0.5.
  EXPECT_NEAR(g[0], -0.5 - 0.9f, 1e-7);
  EXPECT_NEAR(g[1], -0.9f * (1.0 - std::exp(-0.5)), 1e-7);
  // y = 0.5: between them. 0.5 * 0.3 + (1 - 0.9) * 0.2 = 0.17.
  EXPECT_NEAR(quantile_heads_loss<double>(raw, levels, 0.5, false, g), 0.15 + (1 - 0.9f) * 0.2, 1e-7);
  // Censored at 0.5 (the run time is at least 0.5): the head above the bound costs nothing.
  EXPECT_NEAR(quantile_heads_loss<double>(raw, levels, 0.5, true, g), 0.15, 1e-7);
  EXPECT_NEAR(g[1], 0.0, 1e-12);
  EXPECT_NEAR(g[0], -0.5, 1e-7);
}

}  // namespace
}  // namespace ttlpred
