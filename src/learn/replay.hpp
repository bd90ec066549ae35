#pragma once
// Prequential replay: the service's loop run offline over a trace, in time order. A first
// model is trained on the first initial_fraction of the eligible jobs; every later job is
// predicted when it is submitted, by the model serving then, its safe TTL answered through the
// online calibration the service runs (serve --calibration, aci by default) and its outcome
// delivered when the job ends (pipeline/online_scoring.hpp: at its run time, or at the TTL
// that killed it). Every retrain_every of submit time, retrain() runs on the outcomes known
// by then (learn/window_table.hpp) and, when its shadow evaluation accepts the candidate,
// the candidate serves from that moment on; the calibrator is rebased onto it as the
// service's reload does. Beside it runs the frozen first model with the same calibration,
// never retrained: the difference between the two is what retraining buys.
//
// Simplification: a killed job's retraining outcome is its true run time (the trace knows
// it), where a service would learn a censored one.
#include <cstddef>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "learn/retrain.hpp"
#include "model/online_calibration.hpp"
#include "pipeline/fit_model.hpp"

namespace ttlpred {

struct ReplayOptions {
  double initial_fraction = 0.3;      // of the eligible jobs in submit order: the first model's
  double retrain_every_s = 7 * 86400.0;  // of submit time; 0: never (both sides frozen)
  RetrainOptions retrain;
  FitOptions initial_fit;
  PredictorOptions predictor;
  OnlineCalibrationOptions online = [] {
    OnlineCalibrationOptions c;
    c.method = OnlineMethod::Aci;
    return c;
  }();
  std::string key_column = "user";    // mondrian keys
  double week_s = 7 * 86400.0;        // reporting windows of submit time
  std::size_t min_window_rows = 1000;
  double kill_limit = 0.015;          // a window "keeps the promise" at or below this kill rate
  bool keep_outcomes = false;         // fill ReplayResult::outcomes (for the drift-alarm grid)
};

// One replayed job's outcome as the service would receive it, in the order outcomes arrive.
struct ReplayOutcome {
  double known_at_s = 0, wall_s = 0;
  double frozen_expected_s = 0, retrained_expected_s = 0;  // what each side served
};

struct ReplaySide {
  std::size_t rows = 0, killed = 0;
  double rmse_hours = 0, kill_rate = 0, mean_safe_ttl_hours = 0;
};

struct ReplayWeek {
  double start_s = 0;
  ReplaySide retrained, frozen;
};

struct ReplayRetrain {
  double at_s = 0;  // submit time the retrain ran at
  bool ran = false;  // false: too few outcomes (reason says)
  bool accepted = false;
  std::string reason;
  std::size_t window_rows = 0, train_rows = 0, holdout_rows = 0;
  ShadowScore current, candidate;
  double seconds = 0;
};

struct ReplayResult {
  std::size_t initial_rows = 0;  // the first model's training jobs
  double scored_start_s = 0;
  ReplaySide retrained, frozen;  // over the whole scored period
  std::vector<ReplayWeek> weeks;
  std::vector<ReplayRetrain> retrains;
  std::vector<ReplayOutcome> outcomes;  // with keep_outcomes, by known_at_s (ties: submit order)
  std::size_t swaps = 0;
  // Weeks with >= min_window_rows scored jobs, and of them those at or below kill_limit.
  std::size_t weeks_counted = 0, weeks_within_limit_retrained = 0, weeks_within_limit_frozen = 0;
  ReplayOptions options;
};

using ReplayProgress = std::function<void(const std::string& line)>;

ReplayResult run_replay(const JobTable& trace, const ReplayOptions& options, const ReplayProgress& progress = {});

}  // namespace ttlpred
