// Censored outcomes train as lower bounds (net_backward's `lower_bound`): the loss of a
// flagged row is max(0, y - out)^2. Checked by value, by finite differences, and by what a
// trained model learns when a third of its run times were cut short.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "train/mlp_net.hpp"
#include "train/mlp_trainer.hpp"
#include "train_test_data.hpp"

namespace ttlpred {
namespace {

struct Tiny {
  NetShape s;
  EncodedBatch x;
  std::vector<float> y;
  std::vector<std::uint32_t> rows;
  std::vector<double> params;
};

Tiny tiny_net() {
  Tiny t;
  t.s.dense_inputs = 3;
  t.s.emb_card = {3};
  t.s.emb_dim = {2};
  t.s.widths = {6, 1};
  t.s.acts = {Activation::LeakyRelu, Activation::None};
  t.x.rows = 8;
  t.x.dense_width = 3;
  t.x.cat_width = 1;
  t.x.cat_cardinality = {3};
  std::mt19937_64 rng(5);
  std::normal_distribution<float> n01;
  for (std::size_t i = 0; i < t.x.rows * 3; ++i) t.x.dense.push_back(n01(rng));
  for (std::size_t r = 0; r < t.x.rows; ++r) t.x.cats.push_back(static_cast<std::uint32_t>(r % 3));
  for (std::size_t r = 0; r < t.x.rows; ++r) t.rows.push_back(static_cast<std::uint32_t>(r));
  t.params = init_parameters<double>(t.s, 4);
  // Targets half a unit either side of the outputs: flagged rows on both sides of their bound.
  const NetLayout L(t.s);
  NetWorkspace<double> ws;
  std::vector<double> out(t.x.rows);
  net_forward<double>(t.s, L, t.params.data(), t.x, t.rows, ws, out.data());
  for (std::size_t r = 0; r < t.x.rows; ++r) t.y.push_back(static_cast<float>(out[r] + (r % 2 == 0 ? 0.5 : -0.5)));
  return t;
}

TEST(CensoredLoss, FlaggedRowsCountOnlyBelowTheirBound) {
  const Tiny t = tiny_net();
  const NetLayout L(t.s);
  NetWorkspace<double> ws;
  std::vector<double> out(t.x.rows);
  net_forward<double>(t.s, L, t.params.data(), t.x, t.rows, ws, out.data());
  // Rows 0..3 flagged: rows 0 and 2 are predicted below their bound (y = out + 0.5), rows 1
  // and 3 above it (no error); rows 4..7 count as exact values.
  const std::vector<std::uint8_t> bound = {1, 1, 1, 1, 0, 0, 0, 0};
  double expected = 0;
  for (std::size_t r = 0; r < t.x.rows; ++r) {
    const double e = out[r] - static_cast<double>(t.y[r]);
    if (!(bound[r] && e > 0)) expected += e * e;
  }
  std::vector<double> grad;
  const double loss = net_loss_and_gradient<double>(t.s, t.params.data(), t.x, t.rows, t.y.data(), grad, bound.data());
  EXPECT_NEAR(loss, expected, 1e-9);
  EXPECT_NEAR(loss, 6 * 0.25, 1e-5);  // six rows off by 0.5 (float targets), two rows free
  const double exact = net_loss_and_gradient<double>(t.s, t.params.data(), t.x, t.rows, t.y.data(), grad);
  EXPECT_NEAR(exact, 8 * 0.25, 1e-5);
}

TEST(CensoredLoss, GradientMatchesFiniteDifferences) {
  const Tiny t = tiny_net();
  const NetLayout L(t.s);
  const std::vector<std::uint8_t> bound = {1, 1, 0, 1, 1, 0, 1, 0};
  std::vector<double> grad, scratch;
  net_loss_and_gradient<double>(t.s, t.params.data(), t.x, t.rows, t.y.data(), grad, bound.data());
  const double eps = 1e-6;
  double worst = 0;
  for (std::size_t i = 0; i < L.total; ++i) {
    auto p = t.params;
    p[i] += eps;
    const double up = net_loss_and_gradient<double>(t.s, p.data(), t.x, t.rows, t.y.data(), scratch, bound.data());
    p[i] -= 2 * eps;
    const double down = net_loss_and_gradient<double>(t.s, p.data(), t.x, t.rows, t.y.data(), scratch, bound.data());
    const double numeric = (up - down) / (2 * eps);
    worst = std::max(worst, std::abs(numeric - grad[i]) / std::max(1e-4, std::abs(numeric) + std::abs(grad[i])));
  }
  EXPECT_LT(worst, 1e-5);
}

// A third of the jobs were killed at half their run time: trained as exact values they
// teach the model a run time that is too short; as lower bounds, the model keeps what the
// complete jobs say.
TEST(CensoredLoss, ATrainedModelIsNotPulledDownByCutShortRunTimes) {
  test::Problem p = test::noisy_function(6000, 0.2, 21);
  std::vector<std::uint8_t> killed(p.x.rows, 0);
  std::vector<float> recorded = p.wall_s;
  for (std::size_t i = 0; i < p.x.rows; ++i)
    if (i % 3 == 0) {
      killed[i] = 1;
      recorded[i] = 0.5f * p.wall_s[i];
    }
  const TrainConfig c = test::small_train_config();
  const TrainResult exact = train_mlp(p.x, recorded, c);
  const TrainResult bounded = train_mlp(p.x, recorded, c, {}, {}, killed);
  std::vector<float> pe(p.x.rows), pb(p.x.rows);
  predict_mlp(exact.model, exact.target, p.x, pe, 2);
  predict_mlp(bounded.model, bounded.target, p.x, pb, 2);
  // Mean prediction against the noise-free truth, in hours, over every row.
  double bias_exact = 0, bias_bounded = 0;
  for (std::size_t i = 0; i < p.x.rows; ++i) {
    bias_exact += pe[i] / 3600.0 - p.truth_h[i];
    bias_bounded += pb[i] / 3600.0 - p.truth_h[i];
  }
  bias_exact /= static_cast<double>(p.x.rows);
  bias_bounded /= static_cast<double>(p.x.rows);
  // As exact values the cut jobs lower the mean by about a sixth of it (1/3 x 1/2); the
  // truth's mean is about 3.7 h here.
  EXPECT_LT(bias_exact, -0.35);
  EXPECT_GT(bias_bounded, -0.15);
  EXPECT_THROW(train_mlp(p.x, recorded, c, {}, {}, std::span<const std::uint8_t>(killed.data(), 10)), Error);
}

}  // namespace
}  // namespace ttlpred
