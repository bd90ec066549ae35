#pragma once
// The match-time floor of a synthetic trace: the RMSE of the best prediction anyone can make
// from what the broker knows when it matches each job. The oracle (expected_wall_s) knows
// every production's and user's latent cost; a model knows only what the outcomes so far
// tell of it. The floor sits between the two, so a model's distance from the oracle splits
// into what the trace does not tell (floor - oracle) and what the model leaves (model - floor).
//
// Taken as known, generously, so that the floor is a lower bound: every column of the job's
// row; the world's shared constants (package cost factors, site storage factors, the slowest
// host, each production's nominal job size); the priors build_world draws the latent costs
// from (world.hpp); the observed static TTL of the production or user, which the TTL rules
// tie to the latent cost; the outcomes of the jobs sharing the latent cost that finished by
// the job's start (submit + wait), and the elapsed times of those still running. The running
// ones matter: early in a production's life the jobs that have finished are its short ones,
// and a posterior from them alone is biased low (on the default trace it scores 0.914 h
// against 0.892 h with them).
// Unknown: the latent cost itself. The prediction is the posterior mean of the job's expected
// wall time (synth/latent_grid.hpp); its squared error, averaged over the scored rows, is
// the floor.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "synth/generator.hpp"

namespace ttlpred::synth {

struct FloorOptions {
  double split = 0.8;  // score the rows after this fraction of the trace, as `eval --split`
  // Measured on the default trace (1 M jobs, split 0.8): 2048 points against 4096, and the
  // 512 longest-running siblings against all of them, move the floor by less than 0.001 h.
  std::size_t grid_points = 2048;
  std::size_t max_running = 512;  // running siblings' evidence: the longest-running ones
  int threads = 0;  // 0 = all cores
};

struct FloorBucket {
  std::string name;  // "all", a job type, or "<job type>, none finished" (no finished sibling at start)
  std::size_t jobs = 0;
  double floor_sq_s2 = 0, oracle_sq_s2 = 0;  // sums of squared errors, s^2
  double floor_rmse_h() const;
  double oracle_rmse_h() const;
};

// One scored row: its floor prediction and the evidence it had: its finished siblings, and
// the running ones (of the max_running longest-running) whose elapsed time moved it.
struct FloorJob {
  double job_id = 0;
  double floor_s = 0;
  std::uint32_t finished = 0, running = 0;
};

struct MatchFloor {
  std::vector<FloorBucket> buckets;  // "all", then per job type, then the none-finished rows per type
  std::vector<FloorJob> jobs;        // the scored rows, in row order
  // Rows whose expected_wall_s the reconstruction of its mean did not reproduce within 1 s
  // (0 unless the generator and this file disagree), and latent costs whose observed TTL no
  // grid value explains (their TTL evidence is dropped).
  std::size_t mean_mismatches = 0, ttl_unexplained = 0;
};

using FloorProgress = std::function<void(std::size_t done, std::size_t total)>;

// Replays the trace of `config` (no drift scenario: its hidden factors have no prior) and
// returns the floor over the rows after options.split. Throws ttlpred::Error on a drift
// config or a split outside (0, 1).
MatchFloor match_time_floor(const GeneratorConfig& config, const FloorOptions& options,
                            const FloorProgress& progress = {});

}  // namespace ttlpred::synth
