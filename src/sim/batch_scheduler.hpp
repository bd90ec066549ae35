#pragma once
// Batch-cluster schedulers over one pool of identical processors: FCFS, EASY backfilling
// (Lifka 1995; Mu'alem and Feitelson 2001) and EASY++ (Tsafrir, Etsion and Feitelson 2007).
//
// Rules (docs/SIMULATION.md gives each with its source):
// - A job needs `procs` processors for its whole run; it ends at its real run time, or is
//   killed at its request when it would run longer (run = min(run, request)).
// - FCFS starts jobs in arrival order while the queue head fits; nothing overtakes the head.
// - EASY: when the head does not fit, it gets a reservation at the shadow time, the earliest
//   time enough processors are free by the running jobs' estimated ends; a later job is
//   backfilled if it fits now and either ends (by its estimate) before the shadow time or
//   uses only processors the head will not need then ("extra" processors).
// - EASY++: the same reservation, but candidates are tried shortest estimate first.
// - Estimates come from the estimator: the request, the mean of the user's last two finished
//   run times (Tsafrir 2007), the model's expected time, the true run time, or a source asked
//   at each arrival and told of each end (online: the service's learning loop,
//   sim/online_model.hpp; the user's last two where it has no answer yet). When a running
//   job outlives its estimate, the estimate is corrected (counted): last2 -> the request;
//   model and online -> the safe TTL, then the request.
// - The model's (and online's) expected time is scaled for backfilling: by a fixed scale, or
//   by one chosen each week by replaying the ended jobs (sim/estimate_scale.hpp).
// - The true run time can be given overestimated by a seeded draw per job (never short of it,
//   never above the request): how far the clairvoyant schedule moves when its estimates move.
// Deterministic: the one draw is seeded; ties are broken by arrival order.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/estimate_scale.hpp"
#include "sim/time_series.hpp"

namespace ttlpred::sim {

enum class BatchPolicy : std::uint8_t { Fcfs, Easy, EasyPlusPlus };
enum class Estimator : std::uint8_t { Request, Last2, Model, Oracle, Online };

// Estimates that are not fixed per job in advance (Estimator::Online), in simulated time.
// The source knows jobs by their index in the vector given to simulate_batch.
class EstimateSource {
 public:
  virtual ~EstimateSource() = default;
  struct Estimate {
    double expected_s = 0;  // the estimate
    double safe_s = 0;      // its first correction (ignored unless longer than the time run)
  };
  // Job `job` arrived at t; nullopt: no answer (the user's last two answer).
  virtual std::optional<Estimate> estimate(std::size_t job, double t) = 0;
  // Job `job` ended at t after running `run_s` seconds (killed at its request: the request).
  virtual void finished(std::size_t job, double t, double run_s) = 0;
};

struct BatchJob {
  std::int64_t id = 0;
  double submit = 0;
  double run = 0;          // real run time (s); the simulator caps it at the request
  double request = 0;      // requested time (s); <= 0: none (Request and Last2 need one)
  int procs = 1;
  std::uint32_t user = 0;  // for Last2
  double model_expected = 0;  // the model's expected run time (Estimator::Model)
  double model_safe = 0;      // the model's safe TTL: its first correction
};

struct BatchConfig {
  BatchPolicy policy = BatchPolicy::Easy;
  Estimator estimator = Estimator::Request;
  int machine_procs = 0;
  EstimateSource* source = nullptr;  // Estimator::Online's (not owned)
  EstimateScaleOptions scale;        // Estimator::Model's and Online's model answers
  // Estimator::Oracle: a job's estimate is its run time times 1 + oracle_overestimate x u, u
  // uniform in [0, 1) drawn for the job from oracle_seed, and never above its request; 0: exact.
  double oracle_overestimate = 0;
  std::uint64_t oracle_seed = 1;
};

struct BatchJobOutcome {
  double start = 0, end = 0;
  bool killed_at_request = false;  // the trace's run time was longer than its request
  int corrections = 0;
};

struct BatchMetrics {
  std::size_t jobs = 0;
  double avg_bounded_slowdown = 0;  // threshold 10 s
  double mean_wait_s = 0, max_wait_s = 0;
  double utilization = 0;  // sum(procs x run) / (machine procs x makespan)
  double makespan_s = 0;   // last end - first submit
  std::size_t corrections = 0;
  std::size_t backfilled = 0;  // jobs started ahead of an earlier-arrived waiting job
  double cpu_hours_used = 0;
  // The backfilling estimate's scale (sim/estimate_scale.hpp): the last one chosen (the fixed
  // one), the replays that chose, and its mean over the jobs the model answered.
  double estimate_scale = 1, mean_estimate_scale = 1;
  std::size_t estimate_scale_replays = 0;
};

struct BatchResult {
  std::vector<BatchJobOutcome> outcomes;  // by job index
  BatchMetrics metrics;
  std::vector<HourSample> hours;
};

// Throws Error when a job needs more processors than the machine has, when the estimator
// needs requests a job lacks, or Estimator::Online has no source.
BatchResult simulate_batch(const std::vector<BatchJob>& jobs, const BatchConfig& config);

// Bounded slowdown with the customary 10 s threshold (Feitelson et al. 1997).
double bounded_slowdown(double wait_s, double run_s, double threshold_s = 10);

}  // namespace ttlpred::sim
