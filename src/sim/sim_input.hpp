#pragma once
// From a trace to simulator jobs, through the same readers, chronological split and
// Predictor the service and `eval` use: what is simulated is what would be served.
//
// The simulated jobs are the eligible jobs (run time > 0, and a request > 0 when the trace
// has requests) after the first `split` fraction in submit order: the part a model trained
// with that split never saw. split 0 simulates every eligible job.
#include <memory>
#include <string>
#include <vector>

#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "sim/batch_scheduler.hpp"
#include "sim/host_classes.hpp"
#include "sim/jalien_broker.hpp"

namespace ttlpred::sim {

struct SimTrace {
  ChronologicalSplit split;
  std::size_t first_row = 0;            // simulated rows are split.jobs[first_row, rows())
  std::vector<Prediction> predictions;  // per simulated row, when a predictor was given
  const Predictor* predictor = nullptr;  // the one given (not owned: it must outlive the trace)
  HostClasses hosts;                    // with host classes asked for (--host-speed slot)
  std::size_t rows() const { return split.jobs.rows() - first_row; }
};

// `predictor` may be null (policies without a model). Predictions use the history features
// of the split (each job sees the outcomes known at its submit time) and the job's fields
// as the trace records them, exactly as `eval` scores them. With `host_classes`, also the
// trace's host classes and, with a predictor, every job predicted on each (host_classes.hpp).
SimTrace prepare_trace(JobTable trace, double split, const Predictor* predictor, bool host_classes = false);

// Batch jobs: request = requested_ttl_s, procs = cpu_cores (else slot_cores), user code.
std::vector<BatchJob> batch_jobs(const SimTrace& t);

enum class GridTtl : std::uint8_t { Static, Model, Oracle, JalienStats, Online };
// JAliEn's TTL for a job whose JDL names none (TaskQueueUtils: 6 h).
inline constexpr double kJalienDefaultTtlS = 21600;
// Grid jobs: work = recorded wall time (the pilot stands for the host the job ran on), or,
// when the trace's host classes were found, recorded wall time x recorded host_speed (the
// run time on a host of speed 1); cores = cpu_cores (1 when unknown), TTL by policy: static
// = requested_ttl_s, or `default_ttl_s` when missing or not positive (JAliEn's
// TaskQueueUtils); model = safe TTL on the recorded host; jalien-stats and online = static
// (their TtlSource answers, falling back to it).
std::vector<GridJob> grid_jobs(const SimTrace& t, GridTtl policy, double default_ttl_s = kJalienDefaultTtlS);

// Pilot slots whose cores add up to at least `total_cores`: cores drawn from the trace's
// slot_cores column (jobs' cores when absent, at least 8), lifetimes 24 h / 48 h / 72 h
// with shares 50 / 30 / 20 % (docs/SIMULATION.md). Deterministic for a seed. With host
// classes, each slot's host is that of the row its cores were drawn from (its class and the
// class's speed; the same draws, so the same cores and lifetimes); without, speed 1.
std::vector<SlotKind> slots_from_trace(const SimTrace& t, double total_cores, std::uint64_t seed);

// Cores needed to run the simulated jobs' work at `load` (offered core-seconds per second
// over the submit span / load).
double cores_for_load(const SimTrace& t, double load);

}  // namespace ttlpred::sim
