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
// Killed jobs: a retrain learns what a service's journal would hold for them. A job its served
// safe TTL (plus kill_margin_s, where the scheduler allows a margin) killed is delivered with
// that as its run time, known at that moment, and with status ERROR_E (TIMEOUT when the
// trace's statuses have no ERROR_E): an outcome the retrain trains as a lower bound
// (RetrainOptions::fit.censored, pipeline/censored_outcomes.hpp). killed_as RunTime delivers
// the true run time instead (how the replay worked before; kept for the comparison in
// docs/ACCURACY.md). Remaining simplification: the history features the predictions read are
// computed over the trace's true run times (pipeline/split_history.hpp), where a service's
// history would also see the killed jobs' TTLs.
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
  enum class Killed { Censored, RunTime } killed_as = Killed::Censored;
  double kill_margin_s = 0;           // a job runs this long past its safe TTL before it is killed
};

const char* killed_as_name(ReplayOptions::Killed k);
ReplayOptions::Killed killed_as_from_name(const std::string& name);  // "censored" or "run-time"; throws Error

// One replayed job's outcome as each side's service would receive it, in the order the jobs
// end (killed ones included at their true end: the order is one for both sides).
struct ReplayOutcome {
  double known_at_s = 0, wall_s = 0;  // the true run time
  struct Side {
    double expected_s = 0;  // what the side served
    double delivered_s = 0;  // the run time its service learns: the TTL (+ margin) for a job it killed
    std::uint32_t group = kNoGroup;  // the side's model's safe-TTL group id
    std::uint32_t model = 0;  // the model that answered: 0 the first, k the k-th swapped in
  };
  Side frozen, retrained;
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
  std::size_t killed_rows = 0;  // outcomes known by then that were killed (delivered censored)
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
