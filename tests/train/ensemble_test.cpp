#include <gtest/gtest.h>

#include "train/ensemble.hpp"
#include "train/metrics.hpp"
#include "train/mlp_net.hpp"
#include "train/mlp_trainer.hpp"
#include "train_test_data.hpp"

namespace ttlpred {
namespace {

TEST(Ensemble, MergedModelOutputsTheMembersMean) {
  const auto p = test::noisy_function(600, 0.3, 21);
  TrainConfig c;
  c.hidden = {12, 8};
  c.max_epochs = 2;
  c.threads = 2;
  std::vector<MlpModel> members;
  std::vector<std::vector<float>> z;
  for (std::uint64_t seed : {1, 2, 3}) {
    c.seed = seed;
    c.embedding_dim = static_cast<std::uint32_t>(seed + 1);  // members may differ in embedding width
    members.push_back(train_mlp(p.x, p.wall_s, c).model);
    z.emplace_back(p.x.rows);
    predict_mlp_raw(members.back(), p.x, z.back());
  }
  const auto merged = merge_ensemble(members);
  EXPECT_EQ(merged.layers[0].out, 36u);
  EXPECT_EQ(merged.embeddings[0].dim, 2u + 3u + 4u);
  std::vector<float> zm(p.x.rows);
  predict_mlp_raw(merged, p.x, zm);
  for (std::size_t r = 0; r < p.x.rows; ++r)
    EXPECT_NEAR(zm[r], (z[0][r] + z[1][r] + z[2][r]) / 3.0f, 1e-5f) << r;
}

TEST(Ensemble, RefusesMismatchedMembers) {
  const auto p = test::noisy_function(200, 0.3, 22);
  TrainConfig c;
  c.hidden = {8};
  c.max_epochs = 1;
  const auto a = train_mlp(p.x, p.wall_s, c).model;
  c.hidden = {8, 8};
  const auto b = train_mlp(p.x, p.wall_s, c).model;
  const std::vector<MlpModel> both = {a, b};
  EXPECT_THROW(merge_ensemble(both), Error);
  EXPECT_THROW(merge_ensemble(std::span<const MlpModel>{}), Error);
}

// What averaging guarantees for any trained members (so on any host, native or not): the
// mean's squared error is the members' mean squared error less their spread (the variance
// across members, exactly), and the trainer's clamp of negative hours to 0 only moves a
// prediction towards the (non-negative) run time. So the ensemble's validation MSE is at
// most the members' mean MSE, before the clamp, minus the spread. Comparing with one member
// (the first) instead would hold on most hosts only.
TEST(Ensemble, TrainEnsembleBeatsItsMembersByTheirSpread) {
  const auto p = test::noisy_function(2000, 0.5, 23);
  TrainConfig c;
  c.hidden = {24, 24};
  c.batch_size = 128;
  c.max_epochs = 10;
  c.learning_rate = 5e-3f;
  c.validation_fraction = 0.2;
  c.target = TargetKind::Hours;
  c.threads = 2;
  constexpr std::uint32_t kMembers = 3;
  const auto ens = train_ensemble(p.x, p.wall_s, c, kMembers);
  const std::size_t b = ens.train_rows, n = ens.validation_rows;
  ASSERT_GT(n, 0u);
  std::vector<std::vector<double>> hours(kMembers, std::vector<double>(n));  // before the clamp
  for (std::uint32_t k = 0; k < kMembers; ++k) {
    TrainConfig ck = c;
    ck.seed = c.seed + k;  // the seeds train_ensemble gives its members
    const auto member = train_mlp(p.x, p.wall_s, ck);
    std::vector<float> z(p.x.rows);
    predict_mlp_raw(member.model, p.x, z);
    for (std::size_t i = 0; i < n; ++i) hours[k][i] = double{z[b + i]} * member.target.stddev + member.target.mean;
  }
  double members_mse = 0.0, spread = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double mean = 0.0;
    for (std::uint32_t k = 0; k < kMembers; ++k) mean += hours[k][i] / kMembers;
    for (std::uint32_t k = 0; k < kMembers; ++k) {
      const double d = hours[k][i] - p.wall_s[b + i] / 3600.0;
      members_mse += d * d / static_cast<double>(n * kMembers);
      spread += (hours[k][i] - mean) * (hours[k][i] - mean) / static_cast<double>(n * kMembers);
    }
  }
  EXPECT_GT(spread, 0.0) << "the members must differ, or there is nothing to average";
  const double ens_mse = ens.best_val_rmse_hours * ens.best_val_rmse_hours;
  // Slack: float round-off of the merged layers and of the seconds the RMSE is taken over.
  EXPECT_LE(ens_mse, members_mse - spread + 1e-4 * members_mse) << "members " << members_mse << ", spread " << spread;
  std::vector<float> pred(p.x.rows);
  predict_mlp(ens.model, ens.target, p.x, pred);
  EXPECT_NEAR(rmse_hours(std::span(p.wall_s).subspan(b), std::span(pred).subspan(b)), ens.best_val_rmse_hours, 1e-4);
}

}  // namespace
}  // namespace ttlpred
