#pragma once
// One retrain: a candidate model from recent outcomes, kept only when a shadow evaluation
// says it is better than the model serving.
//
// The outcomes of the window are split in submit order: the most recent holdout_fraction
// are never trained on and score both models (the shadow evaluation: the same rows, the same
// history features, each model's own static safe-TTL calibration, as `predict` answers);
// the rest train the candidate through fit_model (its own calibration tail included). The
// candidate is accepted when its RMSE on the held-out outcomes is lower than the current
// model's and its kill rate is not worse: no higher than the current model's, or within the
// promise alpha (a candidate that keeps the promise is not refused for killing 0.4% where the
// current model killed 0.3%). It must win again without the held-out outcomes of the user who
// sent the most of them: a decision that one source's outcomes alone can make (a writer who
// floods forged outcomes, docs/service.md "Security and limits") is refused, and so is one
// where the other users hold fewer than min_holdout_rows outcomes.
//
// A fine-tune (the default, measured in docs/ACCURACY.md, "Replay: retraining on the
// outcomes") starts from the current network and keeps its encoder and history
// configuration, so the service can swap it without a new history state; a retrain from
// scratch fits a new encoder, and is refused when its history configuration differs from
// the current model's (a running service could not swap it in).
#include <cstddef>
#include <string>

#include "data/job_table.hpp"
#include "model/model_file.hpp"
#include "pipeline/fit_model.hpp"
#include "predict/predictor.hpp"

namespace ttlpred {

enum class RetrainStart { FineTune, Scratch };
const char* retrain_start_name(RetrainStart s);
// "fine-tune" or "scratch"; throws Error otherwise.
RetrainStart retrain_start_from_name(const std::string& name);

inline constexpr double kDefaultHoldoutFraction = 0.2;
// With `fit.censored`, outcomes of jobs killed at their limit (pipeline/censored_outcomes.hpp:
// status ERROR_E or TIMEOUT, or a run time of at least 99% of the request) train as lower
// bounds. A service's journal holds such an outcome for every job its safe TTL killed (the
// TTL as run time). Off by default, by measurement (docs/ACCURACY.md, "Replay: retraining on
// the outcomes"): on the replays the killed jobs are about 1% of a retrain's outcomes and
// move nothing, while the 99%-of-request rule also censors 13% of KTH-SP2's jobs, and
// there training them as lower bounds made the retrained RMSE (3.197 h against 3.169 h) and
// kill rate (0.72% against 0.64%) worse.
inline constexpr bool kDefaultRetrainCensored = false;
inline constexpr std::size_t kDefaultMaxOutcomes = 200000;

struct RetrainOptions {
  // Outcomes submitted within this long before the newest; 0 (the default): all of them, up
  // to max_outcomes. Measured on KTH-SP2 (docs/ACCURACY.md, "Replay: retraining on the
  // outcomes"): 30 days of outcomes retrain worse than the frozen model, all of them better.
  double window_s = 0;
  double holdout_fraction = kDefaultHoldoutFraction;  // of the window's outcomes, the most recent: the shadow evaluation
  std::size_t min_holdout_rows = 50;
  // At most this many outcomes, the most recent of the window: a day of ALICE outcomes is a
  // million jobs, more than a retrain beside a running service should train on.
  std::size_t max_outcomes = kDefaultMaxOutcomes;
  RetrainStart start = RetrainStart::FineTune;
  // Training settings. retrain_defaults() gives fine-tunes set_finetune_defaults() and
  // scratch runs the trainer's defaults; either way the hidden widths are the current
  // model's unless the caller sets them (keep_hidden false).
  FitOptions fit;
  bool keep_hidden = true;
  PredictorOptions predictor;  // alpha and bounds of both models' answers
};

RetrainOptions retrain_defaults(RetrainStart start);

struct ShadowScore {
  std::size_t rows = 0;
  double rmse_hours = 0, kill_rate = 0, mean_safe_ttl_hours = 0;
};

struct RetrainResult {
  bool accepted = false;
  std::string reason;  // the decision in words
  RetrainStart start = RetrainStart::FineTune;
  double window_start_s = 0, window_end_s = 0;  // submit times of the window's outcomes
  std::size_t window_rows = 0;    // eligible outcomes in the window
  std::size_t original_rows = 0;  // rows of the original trace trained on besides
  std::size_t train_rows = 0, holdout_rows = 0;
  ShadowScore current, candidate;
  // The same without the held-out outcomes of the user with the most of them (empty user: the
  // outcomes name none, and the check is not made).
  std::string largest_user;
  std::size_t largest_user_rows = 0;
  ShadowScore current_without_largest, candidate_without_largest;
  double seconds = 0;
  ModelFile model;  // the candidate (also when refused, for inspection)
};

// The decision rule: RMSE strictly lower, kill rate no higher than the current model's or at
// most alpha. NaN figures never win.
bool candidate_wins(const ShadowScore& current, const ShadowScore& candidate, double alpha);

// `outcomes`: the journal (or any trace) of outcomes; `original`: jobs submitted before the
// window to train on besides (nullptr: none). Throws Error when the window holds too few
// outcomes to train and evaluate.
RetrainResult retrain(const JobTable& outcomes, const ModelFile& current, const RetrainOptions& options,
                      const JobTable* original = nullptr);

}  // namespace ttlpred
