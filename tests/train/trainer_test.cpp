#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "train/metrics.hpp"
#include "train/mlp_net.hpp"
#include "train/mlp_trainer.hpp"
#include "train/progress.hpp"
#include "train_test_data.hpp"

namespace ttlpred {
namespace {

TrainConfig small_config() { return test::small_train_config(); }

double rmse_vs(const std::vector<float>& pred_s, const std::vector<float>& wall_s, std::size_t from) {
  return rmse_hours(std::span(wall_s).subspan(from), std::span(pred_s).subspan(from));
}

// Noise 0.5 h: the best possible RMSE is about 0.5 h; predicting the mean gives ~1.76 h.
TEST(Trainer, LearnsNoisyFunctionNearNoiseFloor) {
  const auto p = test::noisy_function(5000, 0.5, 1);
  auto c = small_config();
  c.target = TargetKind::Hours;
  const auto r = train_mlp(p.x, p.wall_s, c);
  std::vector<float> pred(p.x.rows);
  predict_mlp(r.model, r.target, p.x, pred);
  const std::size_t from = r.train_rows;
  std::vector<float> truth(p.truth_h.size());
  for (std::size_t i = 0; i < truth.size(); ++i) truth[i] = static_cast<float>(p.truth_h[i] * 3600);
  const double oracle = rmse_vs(truth, p.wall_s, from);
  const double model = rmse_vs(pred, p.wall_s, from);
  EXPECT_NEAR(oracle, 0.5, 0.05);
  EXPECT_LT(model, 1.15 * oracle) << "oracle " << oracle;
  EXPECT_NEAR(model, r.best_val_rmse_hours, 1e-3);
  // The best epoch is a real epoch, flagged in the history, and holds the smallest
  // validation RMSE of all epochs: the weights handed back are that epoch's.
  ASSERT_GE(r.best_epoch, 1u);
  ASSERT_LE(r.best_epoch, r.history.size());
  const EpochStats& best = r.history[r.best_epoch - 1];
  EXPECT_EQ(best.epoch, r.best_epoch);
  EXPECT_TRUE(best.best);
  EXPECT_EQ(best.val_rmse_hours, r.best_val_rmse_hours);
  for (const EpochStats& st : r.history) EXPECT_GE(st.val_rmse_hours, r.best_val_rmse_hours);
}

// A log-space target predicts a median; smearing must bring the RMSE back near the mean's.
TEST(Trainer, Log1pWithSmearingMatchesHoursTarget) {
  const auto p = test::noisy_function(5000, 0.5, 2);
  auto c = small_config();
  c.target = TargetKind::Log1p;
  const auto r = train_mlp(p.x, p.wall_s, c);
  ASSERT_EQ(r.target.smear.size(), 64u);
  std::vector<float> pred(p.x.rows);
  predict_mlp(r.model, r.target, p.x, pred);
  auto plain = r.target;
  plain.smear.clear();
  std::vector<float> median(p.x.rows);
  predict_mlp(r.model, plain, p.x, median);
  const double smeared = rmse_vs(pred, p.wall_s, r.train_rows);
  EXPECT_LT(smeared, 0.65);  // noise floor 0.5 h
  EXPECT_LE(smeared, rmse_vs(median, p.wall_s, r.train_rows) + 1e-6);
}

TEST(Trainer, DeterministicForSeedAndThreadCount) {
  const auto p = test::noisy_function(2000, 0.3, 3);
  auto c = small_config();
  c.max_epochs = 3;
  c.dropout = 0.1f;
  c.target = TargetKind::Log1p;  // covers the smearing fit too
  c.threads = 1;
  const auto a = train_mlp(p.x, p.wall_s, c);
  c.threads = 2;
  const auto b = train_mlp(p.x, p.wall_s, c);
  EXPECT_EQ(pack_parameters(a.model), pack_parameters(b.model));  // bit-identical across thread counts
  ASSERT_FALSE(a.target.smear.empty());
  EXPECT_EQ(a.target.smear, b.target.smear);
  c.seed = 2;
  const auto d = train_mlp(p.x, p.wall_s, c);
  EXPECT_NE(pack_parameters(a.model), pack_parameters(d.model));
}

// Pure-noise targets and a large network: validation gets worse while training loss falls,
// so training stops early and hands back the best epoch's weights.
TEST(Trainer, EarlyStoppingRestoresBestEpoch) {
  auto p = test::noisy_function(600, 0.0, 4);
  std::mt19937_64 rng(8);
  std::exponential_distribution<double> ex(1.0);
  for (auto& w : p.wall_s) w = static_cast<float>(ex(rng) * 3600);
  auto c = small_config();
  c.hidden = {128, 128};
  c.batch_size = 32;
  c.schedule = LrSchedule::Constant;
  c.learning_rate = 1e-2f;
  c.patience = 3;
  c.max_epochs = 60;
  c.target = TargetKind::Hours;
  const auto r = train_mlp(p.x, p.wall_s, c);
  ASSERT_TRUE(r.stopped_early);
  ASSERT_GE(r.best_epoch, 1u);
  EXPECT_EQ(r.history.size(), r.best_epoch + c.patience);
  double best = 1e300;
  std::uint32_t arg = 0;
  for (const auto& h : r.history)
    if (h.val_rmse_hours < best) best = h.val_rmse_hours, arg = h.epoch;
  EXPECT_EQ(arg, r.best_epoch);
  EXPECT_TRUE(r.history[r.best_epoch - 1].best);
  EXPECT_GT(r.history.back().val_rmse_hours, best);
  std::vector<float> pred(p.x.rows);
  predict_mlp(r.model, r.target, p.x, pred);
  EXPECT_NEAR(rmse_vs(pred, p.wall_s, r.train_rows), best, 1e-4 * best);
}

// wall = 1 h + offset[category]: only the embedding can tell the categories apart.
TEST(Trainer, EmbeddingsLearnPerCategoryOffsets) {
  EncodedBatch x;
  x.rows = 3000;
  x.dense_width = 1;
  x.cat_width = 1;
  x.cat_cardinality = {5};
  const double offset[5] = {0, 0.25, 1.0, 2.5, 4.0};
  std::vector<float> wall;
  std::mt19937_64 rng(6);
  for (std::size_t r = 0; r < x.rows; ++r) {
    const std::uint32_t cat = 1 + static_cast<std::uint32_t>(rng() % 4);
    x.dense.push_back(static_cast<float>(rng() % 1000) / 1000.f - 0.5f);  // irrelevant
    x.cats.push_back(cat);
    wall.push_back(static_cast<float>((1.0 + offset[cat]) * 3600));
  }
  auto c = small_config();
  c.hidden = {16};
  c.target = TargetKind::Hours;
  c.max_epochs = 25;
  const auto r = train_mlp(x, wall, c);
  ASSERT_EQ(r.model.embeddings.size(), 1u);
  EXPECT_EQ(r.model.embeddings[0].dim, embedding_dim_for(5, c));
  EncodedBatch probe;
  probe.rows = 4;
  probe.dense_width = 1;
  probe.cat_width = 1;
  probe.cat_cardinality = {5};
  probe.dense = {0, 0, 0, 0};
  probe.cats = {1, 2, 3, 4};
  std::vector<float> pred(4);
  predict_mlp(r.model, r.target, probe, pred);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(pred[k] / 3600.0, 1.0 + offset[k + 1], 0.08) << "category " << k + 1;
}

TEST(Trainer, EmbeddingWidthRule) {
  TrainConfig c;
  EXPECT_EQ(embedding_dim_for(1, c), 2u);     // ceil(1.6)
  EXPECT_EQ(embedding_dim_for(10, c), 6u);    // ceil(1.6 * 10^0.56) = ceil(5.81)
  EXPECT_EQ(embedding_dim_for(100000, c), 16u);
  c.embedding_dim = 4;
  EXPECT_EQ(embedding_dim_for(100000, c), 4u);
}

TEST(Trainer, RefusesBadInput) {
  auto p = test::noisy_function(100, 0.1, 5);
  auto c = small_config();
  auto bad = p.wall_s;
  bad[3] = -1.f;
  EXPECT_THROW(train_mlp(p.x, bad, c), Error);
  bad.pop_back();
  EXPECT_THROW(train_mlp(p.x, bad, c), Error);
  auto x = p.x;
  x.cats[7] = 6;  // cardinality 6
  EXPECT_THROW(train_mlp(x, p.wall_s, c), Error);
  c.hidden = {};
  EXPECT_THROW(train_mlp(p.x, p.wall_s, c), Error);
}

TEST(Trainer, ProgressReportsEveryEpoch) {
  const auto p = test::noisy_function(500, 0.1, 7);
  auto c = small_config();
  c.max_epochs = 3;
  c.patience = 10;
  std::vector<EpochStats> seen;
  const auto r = train_mlp(p.x, p.wall_s, c, [&](const EpochStats& s) { seen.push_back(s); });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].epoch, 3u);
  EXPECT_GT(seen[0].samples_per_s, 0.0);
  EXPECT_TRUE(std::isfinite(seen[0].val_rmse_hours));
  const auto line = format_progress_line(seen[0]);
  EXPECT_NE(line.find("epoch   1/3"), std::string::npos) << line;
  EXPECT_NE(line.find("val "), std::string::npos) << line;
}

// With requested TTLs given, validation scores capped predictions, as the evaluation does.
TEST(Trainer, ValidationCapsPredictionsAtTheRequest) {
  const auto p = test::noisy_function(1000, 0.3, 9);
  auto c = small_config();
  c.max_epochs = 2;
  std::vector<float> cap(p.x.rows, 1800.f);  // every job asked for 30 min
  cap[0] = std::numeric_limits<float>::quiet_NaN();
  const auto r = train_mlp(p.x, p.wall_s, c, {}, cap);
  std::vector<float> pred(p.x.rows);
  predict_mlp(r.model, r.target, p.x, pred);
  for (std::size_t i = 0; i < pred.size(); ++i) pred[i] = std::min(pred[i], cap[i]);
  EXPECT_NEAR(rmse_vs(pred, p.wall_s, r.train_rows), r.best_val_rmse_hours, 1e-4);
  cap.pop_back();
  EXPECT_THROW(train_mlp(p.x, p.wall_s, c, {}, cap), Error);
}

TEST(Trainer, PredictRefusesMismatchedBatch) {
  const auto p = test::noisy_function(300, 0.1, 8);
  auto c = small_config();
  c.max_epochs = 1;
  const auto r = train_mlp(p.x, p.wall_s, c);
  EncodedBatch x = p.x;
  x.dense_width = 3;
  std::vector<float> out(x.rows);
  EXPECT_THROW(predict_mlp(r.model, r.target, x, out), Error);
}

}  // namespace
}  // namespace ttlpred
