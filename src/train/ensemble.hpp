#pragma once
// Averaging several independently seeded networks lowers the variance that dominates on
// small traces (a few thousand training jobs). The average of K MLPs that read the same
// inputs is itself one MLP: embeddings concatenated, layers side by side (block-diagonal),
// and an output layer that sums the members' outputs divided by K. So an ensemble needs no
// new model format and no engine support; it costs K times the width.
#include <span>
#include <vector>

#include "model/model_input.hpp"
#include "model/mlp.hpp"
#include "train/train_config.hpp"

namespace ttlpred {

// Exactly the mean of the members' outputs. Members must have the same dense inputs, the
// same embedding cardinalities, the same depth and per-layer activations. Throws Error
// otherwise or when `members` is empty.
MlpModel merge_ensemble(std::span<const MlpModel> members);

// Trains `members` networks with seeds config.seed, config.seed + 1, ... on the same rows
// and merges them. The target transform (and its smearing) is refitted on the validation
// tail for the merged model; cap_s and lower_bound as in train_mlp. history holds the first member's epochs; best_val_rmse_hours
// the merged model's validation RMSE.
TrainResult train_ensemble(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& config,
                           std::uint32_t members, const ProgressFn& progress = {}, std::span<const float> cap_s = {},
                           std::span<const std::uint8_t> lower_bound = {});

}  // namespace ttlpred
