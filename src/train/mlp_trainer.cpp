#include "train/mlp_trainer.hpp"

#include <algorithm>
#include <cmath>

#include "model/mlp_io.hpp"
#include "train/compression.hpp"
#include "train/mlp_net.hpp"
#include "train/residual_choice.hpp"
#include "train/training_run.hpp"
#include "util/aligned_vector.hpp"
#include "util/error.hpp"
#include "util/thread_pool.hpp"

namespace ttlpred {

namespace {

void check_inputs(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& c) {
  if (x.dense.size() != x.rows * x.dense_width || x.cats.size() != x.rows * x.cat_width ||
      x.cat_cardinality.size() != x.cat_width)
    throw Error("training batch is inconsistent: array sizes do not match rows x widths");
  if (wall_s.size() != x.rows)
    throw Error("training: " + std::to_string(wall_s.size()) + " run times for " + std::to_string(x.rows) + " rows");
  for (std::size_t i = 0; i < wall_s.size(); ++i)
    if (!std::isfinite(wall_s[i]) || wall_s[i] < 0.0f)
      throw Error("training: run time of row " + std::to_string(i) + " is negative or not finite");
  for (std::size_t j = 0; j < x.cat_width; ++j)
    if (x.cat_cardinality[j] == 0) throw Error("training: categorical column " + std::to_string(j) + " has cardinality 0");
  for (std::size_t r = 0; r < x.rows; ++r)
    for (std::size_t j = 0; j < x.cat_width; ++j)
      if (x.cats[r * x.cat_width + j] >= x.cat_cardinality[j])
        throw Error("training: row " + std::to_string(r) + " categorical column " + std::to_string(j) + " index " +
                    std::to_string(x.cats[r * x.cat_width + j]) + " is not below its cardinality " +
                    std::to_string(x.cat_cardinality[j]));
  if (c.hidden.empty() || std::find(c.hidden.begin(), c.hidden.end(), 0u) != c.hidden.end())
    throw Error("training: hidden widths must be positive and at least one layer is needed");
  if (c.batch_size == 0 || c.shards == 0 || c.max_epochs == 0) throw Error("training: batch size, shards and epochs must be positive");
  if (!(c.validation_fraction >= 0.0 && c.validation_fraction < 1.0)) throw Error("training: validation fraction must lie in [0, 1)");
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f)) throw Error("training: dropout must lie in [0, 1)");
  if (!(c.learning_rate > 0.0f)) throw Error("training: learning rate must be positive");
  if (c.target == TargetKind::Power && !(c.power_lambda > 0.0 && c.power_lambda <= 1.0))
    throw Error("training: power target needs 0 < lambda <= 1");
}

NetShape make_shape(const EncodedBatch& x, const TrainConfig& c) {
  NetShape s;
  s.dense_inputs = static_cast<std::uint32_t>(x.dense_width);
  for (auto card : x.cat_cardinality) {
    s.emb_card.push_back(card);
    s.emb_dim.push_back(embedding_dim_for(card, c));
  }
  for (auto w : c.hidden) {
    s.widths.push_back(w);
    s.acts.push_back(c.activation);
  }
  s.widths.push_back(static_cast<std::uint32_t>(1 + c.quantile_levels.size()));  // the mean, then the heads
  s.acts.push_back(Activation::None);
  return s;
}

}  // namespace

std::uint32_t embedding_dim_for(std::uint32_t cardinality, const TrainConfig& c) {
  if (c.embedding_dim > 0) return c.embedding_dim;
  const double d = std::ceil(1.6 * std::pow(static_cast<double>(cardinality), 0.56));
  return std::clamp<std::uint32_t>(static_cast<std::uint32_t>(d), 1, std::max<std::uint32_t>(1, c.max_embedding_dim));
}

TrainResult train_mlp(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& c,
                      const ProgressFn& progress, std::span<const float> cap_s, std::span<const std::uint8_t> lower_bound) {
  check_inputs(x, wall_s, c);
  const std::size_t n = x.rows;
  const std::size_t n_tr = n - static_cast<std::size_t>(std::floor(static_cast<double>(n) * c.validation_fraction));
  if (n_tr == 0) throw Error("training: no training rows");
  // Target transform fitted on the training rows only.
  TargetTransform tt;
  tt.kind = c.target;
  tt.lambda = c.power_lambda;
  tt.quantiles.levels = c.quantile_levels;
  tt.quantiles.check("training");
  double sum = 0, sq = 0;
  for (std::size_t i = 0; i < n_tr; ++i) {
    const double v = tt.to_t(wall_s[i] / 3600.0);
    sum += v;
    sq += v * v;
  }
  tt.mean = sum / static_cast<double>(n_tr);
  const double var = sq / static_cast<double>(n_tr) - tt.mean * tt.mean;
  tt.stddev = var > 1e-12 ? std::sqrt(var) : 1.0;
  if (!c.residual_candidates.empty())
    tt.residual = choose_residual_base(x, wall_s, n_tr, tt, c.residual_candidates, c.residual_group_cat);
  const NetShape shape = make_shape(x, c);
  const auto init = init_parameters<float>(shape, c.seed);
  const CompressionConfig none;
  return train_detail::TrainingRun({x, wall_s, cap_s, lower_bound}, c, shape, init, tt, none).run(progress, false);
}

TrainResult finetune_mlp(const MlpModel& start, const TargetTransform& target, const EncodedBatch& x,
                         std::span<const float> wall_s, const TrainConfig& c, const CompressionConfig& compression,
                         const ProgressFn& progress, std::span<const float> cap_s,
                         std::span<const std::uint8_t> lower_bound) {
  check_inputs(x, wall_s, c);
  validate_mlp(start, "starting model");
  if (x.dense_width != start.dense_inputs || x.cat_width != start.embeddings.size())
    throw Error("fine-tuning: the batch has " + std::to_string(x.dense_width) + " dense and " +
                std::to_string(x.cat_width) + " categorical columns, the starting model expects " +
                std::to_string(start.dense_inputs) + " and " + std::to_string(start.embeddings.size()));
  for (std::size_t j = 0; j < x.cat_width; ++j)
    if (x.cat_cardinality[j] > start.embeddings[j].cardinality)
      throw Error("fine-tuning: categorical column " + std::to_string(j) + " has " +
                  std::to_string(x.cat_cardinality[j]) + " values, the starting model's embedding " +
                  std::to_string(start.embeddings[j].cardinality));
  TargetTransform tt = target;  // the starting model's quantile heads included
  tt.smear.clear();
  const std::vector<float> init = pack_parameters(start);
  const NetShape shape = shape_of(start);
  return train_detail::TrainingRun({x, wall_s, cap_s, lower_bound}, c, shape, init, tt, compression).run(progress, true);
}

void predict_mlp_raw(const MlpModel& model, const EncodedBatch& x, std::span<float> out_z, int threads) {
  validate_mlp(model, "model");
  if (out_z.size() != x.rows) throw Error("predict: output size differs from the number of rows");
  if (x.dense_width != model.dense_inputs || x.cat_width != model.embeddings.size())
    throw Error("predict: the batch has " + std::to_string(x.dense_width) + " dense and " + std::to_string(x.cat_width) +
                " categorical columns, the model expects " + std::to_string(model.dense_inputs) + " and " +
                std::to_string(model.embeddings.size()));
  if (x.dense.size() != x.rows * x.dense_width || x.cats.size() != x.rows * x.cat_width)
    throw Error("predict: batch array sizes do not match rows x widths");
  const NetShape shape = shape_of(model);
  const NetLayout L(shape);
  const auto packed = pack_parameters(model);
  const AlignedVector<float> params(packed.begin(), packed.end());
  ThreadPool pool(threads);
  train_detail::forward_range(shape, L, params.data(), x, 0, x.rows, out_z.data(), pool);
}

void predict_mlp(const MlpModel& model, const TargetTransform& target, const EncodedBatch& x,
                 std::span<float> out_wall_s, int threads) {
  predict_mlp_raw(model, x, out_wall_s, threads);
  add_offsets(target, x, 0, out_wall_s);
  for (float& v : out_wall_s) v = static_cast<float>(target.decode_seconds(v));
}

}  // namespace ttlpred
