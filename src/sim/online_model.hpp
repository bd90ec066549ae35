#pragma once
// The service's learning loop inside the simulation, from an empty start (`simulate --ttl
// online`): no model at first; once `min_outcomes` jobs have finished in the simulated
// schedule, a model trained on them (fit_model, the trainer `train` runs, with its own
// safe-TTL calibration tail), retrained from scratch every `retrain_every_s` of simulated
// time on the jobs finished by then, as `serve --retrain-every` does on its journal, and
// also whenever the finished jobs have doubled since the last model (the first models learn
// from few jobs, the shortest: 1,000, 2,000, 4,000 ... then the period).
//
// Nothing from the future: a job is predicted when the scheduler asks (at its submission),
// by the model trained on jobs that had finished by the last retrain, with history features
// over the jobs that had finished by then (finished(): the outcomes in the order they end, as
// a service observes them). A finished job teaches what the scheduler saw: its run time in
// the schedule (a job killed at its limit: the limit, as a service's journal holds it).
//
// predict() answers nothing (nullopt) before the first model: the caller's fallback answers
// (the user's last two, the static TTL). With a split, the jobs before it are outcomes known
// once they ended as recorded; over the whole trace (split 0) the loop starts from nothing,
// the literature's online setting.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "features/history.hpp"
#include "learn/retrain.hpp"
#include "pipeline/fit_model.hpp"
#include "predict/predictor.hpp"
#include "sim/batch_scheduler.hpp"

namespace ttlpred::sim {

struct OnlineModelOptions {
  double retrain_every_s = 7 * 86400.0;  // of simulated time (serve --retrain-every's default); 0: never trains
  // Finished jobs before the first model: enough for the trainer's validation tail and the
  // safe TTL's calibration tail (10 % each) to hold a hundred jobs.
  std::size_t min_outcomes = 1000;
  // A retrain learns from at most this many finished jobs, the most recently submitted (as
  // the service's retrain does: learn/retrain.hpp).
  std::size_t max_outcomes = kDefaultMaxOutcomes;
  FitOptions fit;              // the trainer's settings (seed included)
  PredictorOptions predictor;  // alpha and bounds of the answers
};

struct OnlineModelStats {
  std::size_t retrains = 0;          // models trained
  std::size_t predicted = 0, fallbacks = 0;  // jobs answered by a model / before the first one
  double train_seconds = 0;          // wall time spent training (and rebuilding history)
  double first_model_at_s = -1;      // simulated time of the first model (< 0: none)
  std::size_t last_train_rows = 0;   // finished jobs the latest model learnt from
};

using OnlineModelProgress = std::function<void(const std::string& line)>;

class OnlineModel {
 public:
  // The simulated jobs are rows [first_row, jobs.rows()) of `jobs` (not owned: it must outlive
  // this); job i is row first_row + i. The rows before them (a split's first part) become known
  // as the trace recorded them, each at its submit time + run time. Error on options out of
  // range.
  OnlineModel(const JobTable& jobs, std::size_t first_row, OnlineModelOptions options, OnlineModelProgress progress = {});

  // Job `job`'s prediction at simulated time t (its submission), retraining first when a
  // retrain is due; nullopt before the first model. Time never goes back: Error when t is
  // before the latest predict() or finished() time, so that no outcome from after t is known.
  std::optional<Prediction> predict(std::size_t job, double t);
  // Job `job` finished at t after running `run_s` seconds in the schedule.
  void finished(std::size_t job, double t, double run_s);

  const OnlineModelStats& stats() const { return stats_; }
  const Predictor* predictor() const { return predictor_.get(); }

 private:
  struct Outcome {
    std::size_t row;  // of jobs_
    double end_s, run_s;
  };
  void retrain(double t);
  // Moves simulated time to t (Error if it goes back) and learns the recorded outcomes that
  // ended by then.
  void advance(double t);
  void learn(const Outcome& o);

  const JobTable& jobs_;
  std::size_t first_row_;
  OnlineModelOptions options_;
  OnlineModelProgress progress_;
  std::vector<Outcome> finished_;  // known outcomes, in the order they became known
  std::vector<Outcome> recorded_;  // the jobs before the simulated ones, by end
  std::size_t next_recorded_ = 0;  // recorded_[next_recorded_...] are not known yet
  std::unique_ptr<Predictor> predictor_;
  std::unique_ptr<HistoryState> history_;
  double next_retrain_s_;
  double now_s_;  // the latest time asked or told (Error if time goes back)
  std::size_t finished_at_last_model_ = 0;
  OnlineModelStats stats_;
  JobRecord record_;
};

// The batch schedulers' source (Estimator::Online): the model's expected time, its safe TTL
// the first correction.
class OnlineModelEstimates final : public EstimateSource {
 public:
  explicit OnlineModelEstimates(OnlineModel& model) : model_(model) {}
  std::optional<Estimate> estimate(std::size_t job, double t) override;
  void finished(std::size_t job, double t, double run_s) override;

 private:
  OnlineModel& model_;
};

}  // namespace ttlpred::sim
