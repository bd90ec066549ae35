#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "train/mlp_net.hpp"

namespace ttlpred {
namespace {

// The backward pass against central finite differences, in double, on a tiny network with
// two embeddings and both ReLU-family activations.
TEST(GradientCheck, BackwardMatchesFiniteDifferences) {
  NetShape s;
  s.dense_inputs = 3;
  // Table 0 has a fifth row that no batch row selects (rows use r % 4): its gradient must be
  // exactly zero, or the backward pass scatters into rows it never gathered.
  s.emb_card = {5, 3};
  s.emb_dim = {2, 3};
  s.widths = {6, 5, 1};
  s.acts = {Activation::LeakyRelu, Activation::Relu, Activation::None};
  EncodedBatch x;
  x.rows = 7;
  x.dense_width = 3;
  x.cat_width = 2;
  x.cat_cardinality = {5, 3};
  std::mt19937_64 rng(3);
  std::normal_distribution<float> n01;
  for (std::size_t i = 0; i < x.rows * 3; ++i) x.dense.push_back(n01(rng));
  for (std::size_t r = 0; r < x.rows; ++r) {
    x.cats.push_back(static_cast<std::uint32_t>(r % 4));
    x.cats.push_back(static_cast<std::uint32_t>((r * 2) % 3));
  }
  std::vector<float> y(x.rows);
  for (float& v : y) v = n01(rng);
  std::vector<std::uint32_t> rows = {0, 1, 2, 3, 4, 5, 6};

  auto params = init_parameters<double>(s, 9);
  // Biases away from zero so that few units sit exactly on a ReLU kink.
  const NetLayout L(s);
  for (std::size_t l = 0; l < s.widths.size(); ++l)
    for (std::size_t o = 0; o < s.widths[l]; ++o) params[L.bias[l] + o] = 0.1 * static_cast<double>(o % 3) - 0.05;

  std::vector<double> grad;
  net_loss_and_gradient<double>(s, params.data(), x, rows, y.data(), grad);
  ASSERT_EQ(grad.size(), L.total);
  std::vector<double> scratch;
  const double eps = 1e-6;
  double worst = 0;
  for (std::size_t i = 0; i < L.total; ++i) {
    auto p = params;
    p[i] += eps;
    const double up = net_loss_and_gradient<double>(s, p.data(), x, rows, y.data(), scratch);
    p[i] -= 2 * eps;
    const double down = net_loss_and_gradient<double>(s, p.data(), x, rows, y.data(), scratch);
    const double numeric = (up - down) / (2 * eps);
    const double err = std::abs(numeric - grad[i]) / std::max(1e-4, std::abs(numeric) + std::abs(grad[i]));
    worst = std::max(worst, err);
  }
  EXPECT_LT(worst, 1e-5);
  // Unused embedding row (table 0, row 4): exactly zero, and the finite difference agrees
  // because moving it cannot change the loss. Every used row (table 0 rows 0..3, table 1
  // rows 0..2: (2r) % 3 over r = 0..6 hits all three) gets a nonzero gradient.
  auto row_abs = [&](std::size_t table, std::size_t row) {
    double a = 0;
    for (std::size_t d = 0; d < s.emb_dim[table]; ++d) a += std::abs(grad[L.emb[table] + row * s.emb_dim[table] + d]);
    return a;
  };
  EXPECT_EQ(row_abs(0, 4), 0.0);
  for (std::size_t row = 0; row < 4; ++row) EXPECT_GT(row_abs(0, row), 0.0) << "table 0 row " << row;
  for (std::size_t row = 0; row < 3; ++row) EXPECT_GT(row_abs(1, row), 0.0) << "table 1 row " << row;
}

TEST(GradientCheck, PackAndUnpackAreInverse) {
  NetShape s;
  s.dense_inputs = 2;
  s.emb_card = {3};
  s.emb_dim = {2};
  s.widths = {4, 1};
  s.acts = {Activation::Relu, Activation::None};
  const auto p = init_parameters<float>(s, 1);
  const auto m = unpack_parameters(s, p);
  EXPECT_EQ(m.first_layer_inputs(), 4u);
  EXPECT_EQ(pack_parameters(m), p);
  EXPECT_EQ(shape_of(m).widths, s.widths);
}

}  // namespace
}  // namespace ttlpred
