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

TEST(Ensemble, TrainEnsembleIsNoWorseThanItsFirstMember) {
  const auto p = test::noisy_function(2000, 0.5, 23);
  TrainConfig c;
  c.hidden = {24, 24};
  c.batch_size = 128;
  c.max_epochs = 10;
  c.learning_rate = 5e-3f;
  c.validation_fraction = 0.2;
  c.target = TargetKind::Hours;
  c.threads = 2;
  const auto single = train_mlp(p.x, p.wall_s, c);
  const auto ens = train_ensemble(p.x, p.wall_s, c, 3);
  EXPECT_LE(ens.best_val_rmse_hours, single.best_val_rmse_hours * 1.01);
  std::vector<float> pred(p.x.rows);
  predict_mlp(ens.model, ens.target, p.x, pred);
  const std::size_t b = ens.train_rows;
  EXPECT_NEAR(rmse_hours(std::span(p.wall_s).subspan(b), std::span(pred).subspan(b)), ens.best_val_rmse_hours, 1e-4);
}

}  // namespace
}  // namespace ttlpred
