#pragma once
// The epoch loop behind train_mlp and finetune_mlp (train/mlp_trainer.hpp), one method per
// phase: setup (constructor), the fine-tune's starting point, one epoch of mini-batch
// steps, validation with early stopping, and the result. Private to the train library.
//
// Determinism (mlp_trainer.hpp): every batch is cut into config.shards fixed shards whose
// gradients are summed in shard order, and predictions run in fixed chunks, so the thread
// count never changes a number.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/model_input.hpp"
#include "model/target_transform.hpp"
#include "quant/activation_ranges.hpp"
#include "train/adamw.hpp"
#include "train/compression.hpp"
#include "train/mlp_net.hpp"
#include "train/train_config.hpp"
#include "util/aligned_vector.hpp"
#include "util/splitmix.hpp"
#include "util/thread_pool.hpp"

namespace ttlpred::train_detail {

// The mean output (output 0) for rows [begin, end) of x, in fixed chunks spread over threads (fixed:
// results do not depend on the thread count). What validation and predict_mlp run.
void forward_range(const NetShape& s, const NetLayout& L, const float* params, const EncodedBatch& x, std::size_t begin,
                   std::size_t end, float* out, ThreadPool& pool, const ActQuantPlan* act_quant = nullptr);

// The rows and targets of one training: x in submit order, the last validation_fraction of
// its rows the validation tail; cap_s and lower_bound empty or one per row (mlp_trainer.hpp).
struct TrainingData {
  const EncodedBatch& x;
  std::span<const float> wall_s;
  std::span<const float> cap_s;
  std::span<const std::uint8_t> lower_bound;
};

class TrainingRun {
 public:
  // Setup: `init` are the starting parameters (NetLayout order of `shape`), `tt` the target
  // transform without smearing, `comp` the compressed-training rules (none: plain float).
  // Throws Error when cap_s or lower_bound do not match the rows or no training row is left.
  TrainingRun(TrainingData data, const TrainConfig& config, const NetShape& shape, std::span<const float> init,
              TargetTransform tt, const CompressionConfig& comp);

  // Trains and returns the best epoch's model. start_is_candidate (fine-tuning): the
  // starting weights are scored first as epoch 0 and win unless an epoch beats them.
  TrainResult run(const ProgressFn& progress, bool start_is_candidate);

 private:
  static std::size_t validation_rows(const TrainingData& d, const TrainConfig& c);

  // The fine-tune's starting point, scored as epoch 0.
  EpochStats score_start();
  // One pass over the shuffled training rows; the stats of its training part.
  EpochStats train_epoch(std::uint32_t epoch);
  // One optimizer step on order_[start, start + bsz); adds the batch's squared error to sse.
  void train_batch(std::size_t start, std::size_t bsz, double& sse);
  // grad_ <- the sum of the shard gradients, in shard order; `per` rows a shard.
  void reduce_gradients(std::span<const std::uint32_t> batch, std::size_t per, double& sse);
  void clip_gradient();
  // Scores the current parameters on the validation tail and keeps them if they are the best.
  void validate(std::uint32_t epoch, EpochStats& st);
  // Early stopping: patience epochs without a better validation score, before the last.
  bool should_stop(std::uint32_t epoch) const;
  // QAT: the activation ranges of the current (fake-quantized) network on range_rows_.
  void measure_ranges();
  // The parameters the forward pass runs on: params_, or their compressed image.
  const float* forward_params();
  // The best epoch's model, its activation ranges and the smearing of its residuals.
  TrainResult finish();

  const TrainingData d_;
  const TrainConfig& c_;
  const CompressionConfig& comp_;
  const NetShape& shape_;
  const NetLayout layout_;
  const std::size_t n_val_, n_tr_;
  const std::size_t smear_points_;  // training on hours already targets the mean: none there
  ThreadPool pool_;
  TrainResult result_;
  std::vector<float> y_;  // encoded targets, one per row
  QuantileLoss quantile_loss_;  // the target's quantile heads (none: a mean-only network)

  // Compressed training: the forward pass runs on eff_ (masked and/or fake-quantized
  // weights) and, under QAT, rounds every layer's input to the epoch's ranges.
  AlignedVector<float> params_;
  std::optional<WeightCompressor> wc_;
  AlignedVector<float> eff_;
  EncodedBatch range_rows_;
  quant::ActivationRanges ranges_, best_ranges_;
  ActQuantPlan act_quant_;
  const ActQuantPlan* aq_;

  AlignedVector<float> best_;
  AdamW opt_;
  std::vector<std::uint8_t> decay_;  // 1 on weight matrices: biases and embeddings are not shrunk
  std::vector<NetWorkspace<float>> ws_;  // one per shard
  std::vector<double> shard_sse_;
  AlignedVector<float> grad_;
  std::vector<std::uint32_t> order_;
  SplitMix64 shuffle_rng_;
  const std::uint64_t steps_per_epoch_;
  std::uint64_t step_ = 0;
  double lr_ = 0;  // the learning rate of the last step
  std::vector<float> val_z_, best_val_z_;
  std::vector<float> y_batch_;
  std::vector<std::uint8_t> bound_batch_;
  double best_rmse_;
  std::uint32_t since_best_ = 0;
};

}  // namespace ttlpred::train_detail
