#pragma once
// From a chronologically split trace to a complete model file: history features, the
// feature encoder, the network, the target transform and the safe-TTL calibration.
//
// The training rows are cut once more, in time order: the first (1 - calibration_fraction)
// train the network (whose trainer keeps its own chronological tail for early stopping);
// the last calibration_fraction are never trained on and calibrate the safe TTL, as split
// conformal prediction requires.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "features/encoder.hpp"
#include "model/model_file.hpp"
#include "model/safe_ttl.hpp"
#include "pipeline/split.hpp"
#include "engine/variant.hpp"
#include "train/compression.hpp"
#include "train/train_config.hpp"

namespace ttlpred {

// How many of `train_rows` training rows (their tail) calibrate the safe TTL at `fraction`.
inline std::size_t calibration_rows(std::size_t train_rows, double fraction) {
  return static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(train_rows)));
}

// Piecewise-linear bins per numeric field of the job in a trained model (0: none).
inline constexpr std::uint32_t kDefaultPiecewiseBins = 8;

// The encoder options a trained model starts from: the encoder's own, and the bins above.
inline EncoderOptions trained_encoder_defaults() {
  EncoderOptions e;
  e.piecewise_bins = kDefaultPiecewiseBins;
  return e;
}

struct FitOptions {
  TrainConfig train;
  std::uint32_t ensemble = 1;          // > 1: average of that many seeds, merged into one MLP
  // The job's numeric fields also as piecewise-linear bins (EncoderOptions::piecewise_bins):
  // the models the product trains get kDefaultPiecewiseBins, the encoder alone none
  // (docs/ACCURACY.md, "Piecewise-linear bins", has why and what it cost).
  EncoderOptions encoder = trained_encoder_defaults();
  double calibration_fraction = 0.1;   // of the training rows, held out for the safe TTL
  std::string group_column = "auto";   // safe-TTL groups: "auto", "" (none) or a field name
  SafeTtlOptions safe_ttl;
  // Fine-tuning for compressed inference (QAT, 2:4): when set, the network starts from this
  // model's, and its encoder, history configuration and target transform are kept; the
  // safe TTL is calibrated on the variant the compression targets (compressed_variant()).
  // Compression without `init` trains the fp32 model first (with `train`), then fine-tunes
  // it with set_finetune_defaults(train).
  const ModelFile* init = nullptr;
  CompressionConfig compression;
  // When the model predicts (features/history.hpp): at match time its history sees the
  // outcomes known at each job's start and the jobs running then. A fine-tune keeps its
  // starting model's.
  PredictionTime at = PredictionTime::Submit;
  // Censored outcomes (pipeline/censored_outcomes.hpp) train as lower bounds: the loss only
  // penalizes predictions below their recorded run time.
  bool censored = false;
  // Residual target (model/residual_base.hpp): the network learns each job's distance from
  // one of its history estimates (pipeline/history_estimates.hpp), chosen per job type (the
  // safe TTL's "auto" group column) on the training rows. A fine-tune keeps its model's.
  bool residual = false;
  // The history key (user, requested TTL) (features/history.hpp, UserRequest): on the 1 M
  // ALICE-like trace at match time it lowered the RMSE (1.031 -> 1.018 h, residual models
  // 0.955 -> 0.942 h), on the 50 000-job traces and KTH-SP2 it raised it at most backtest
  // splits (docs/ACCURACY.md, "A key for look-alike jobs"). A fine-tune keeps its model's keys.
  bool request_key = false;
  // The history key (job type, collision system) (features/history.hpp, JobTypeSystem): a new
  // production's first guess from the earlier productions of its kind of work. On the 1 M
  // ALICE-like trace at match time, with the four options above and below, it lowered the
  // RMSE (0.936 -> 0.917 h, three seeds); on the 50 000- and 200 000-job traces it was lower
  // at only 2-4 of 5 backtest splits (docs/ACCURACY.md, "A key for the kind of work"). A
  // fine-tune keeps its model's keys.
  bool system_key = false;
  // Censored work rates (features/history.hpp; match time only): each key's work rate takes
  // its running jobs as lower bounds, in place of the plain one. On the 1 M ALICE-like trace
  // at match time it lowered the RMSE (0.944 -> 0.936 h, three seeds, with the three options
  // above; lower at every backtest split), on the 50 000-job traces it raised it at most
  // splits (docs/ACCURACY.md, "Censored work rates at match time"). A fine-tune keeps its
  // model's.
  bool censored_rates = false;
};

// Fine-tuning settings (a short run at a low learning rate from the starting weights, without
// dropout, whose rescaling would shift the activations QAT measures its ranges on): 6
// epochs, patience 2, learning rate 3e-4, warm-up 0.1 epoch, dropout 0.
void set_finetune_defaults(TrainConfig& config);

// The engine variant a compressed model is made for: int8-static (QAT), fp16-2:4 (2:4),
// int8-2:4 (both), fp32-fused (none).
engine::Variant compressed_variant(const CompressionConfig& c);

struct FitReport {
  TrainResult train;
  std::size_t fit_rows = 0, calibration_rows = 0;
  double calibration_rmse_hours = 0;
  std::string group_column;
  double seconds = 0;
};

// The safe-TTL group column "auto" picks: job_type, else queue, else partition, among the
// categorical columns the encoder encodes; "" when none.
std::string auto_group_column(const FeatureEncoder& encoder);

ModelFile fit_model(const ChronologicalSplit& split, const FitOptions& options, const ProgressFn& progress,
                    FitReport* report = nullptr);

}  // namespace ttlpred
