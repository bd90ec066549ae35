#pragma once
// Trains the MLP regressor of run time (AdamW, warm-up + cosine learning rate, mini
// batches, early stopping on the chronological validation tail, best weights restored).
//
// Determinism: the same data, config and seed give a bit-identical model for ANY thread
// count. Each batch is cut into `config.shards` fixed shards, each shard's gradient is
// computed single-threaded (Eigen's own threading is off), and shard gradients are summed
// in shard order; threads only decide who computes a shard. Results do differ between
// machines whose SIMD width differs (the build uses -march=native where enabled).
#include <cstdint>
#include <span>

#include "model/model_input.hpp"
#include "model/mlp.hpp"
#include "model/target_transform.hpp"
#include "train/compression.hpp"
#include "train/train_config.hpp"

namespace ttlpred {

// `x` rows are in submit order; the last validation_fraction of them form the validation
// tail. wall_s[i] is row i's run time in seconds (finite, >= 0). cap_s is empty or row i's
// requested TTL in seconds (NaN or <= 0 = none): validation scores predictions capped there,
// as the evaluation protocol does. lower_bound is empty or, per row, non-zero where
// wall_s[i] is only a lower bound on the run time (a censored outcome: killed at its limit):
// such a row is trained with a loss that penalizes only predictions below it (mlp_net.hpp,
// net_backward); the target transform and the validation score treat it as given. Throws
// Error on a size mismatch, a bad run time, a category index outside its cardinality, or a
// bad config.
TrainResult train_mlp(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& config,
                      const ProgressFn& progress = {}, std::span<const float> cap_s = {},
                      std::span<const std::uint8_t> lower_bound = {});

// Fine-tunes `start` (trained with `target`, whose mean and scale are kept) on x for
// compressed inference (train/compression.hpp): QAT, 2:4 sparsity, or both. Same loop,
// early stopping and determinism as train_mlp; validation runs the compressed forward pass.
// The result's act_ranges hold the QAT calibration; its model is 2:4-pruned when asked.
// x must be encoded by the encoder `start` was trained with.
TrainResult finetune_mlp(const MlpModel& start, const TargetTransform& target, const EncodedBatch& x,
                         std::span<const float> wall_s, const TrainConfig& config,
                         const CompressionConfig& compression, const ProgressFn& progress = {},
                         std::span<const float> cap_s = {}, std::span<const std::uint8_t> lower_bound = {});

// Reference predictor (until the inference engine exists): expected run time in seconds per
// row, using the transform's smearing. out_wall_s.size() must equal x.rows. threads 0 = all.
void predict_mlp(const MlpModel& model, const TargetTransform& target, const EncodedBatch& x,
                 std::span<float> out_wall_s, int threads = 0);

// Raw network outputs (standardized target space, before a residual base's add_offsets),
// for calibration and diagnostics.
void predict_mlp_raw(const MlpModel& model, const EncodedBatch& x, std::span<float> out_z, int threads = 0);

// The embedding width the trainer picks for a column of `cardinality` values.
std::uint32_t embedding_dim_for(std::uint32_t cardinality, const TrainConfig& config);

}  // namespace ttlpred
