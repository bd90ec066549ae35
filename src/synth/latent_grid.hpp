#pragma once
// One latent constant of the synthetic world (a production's cost, a user's cost per file)
// as a posterior on a grid. The generator draws the constant from its LatentPrior and runs
// each job that shares it for mean(theta) x LogNormal(-s^2/2, s), mean(theta) = a + b theta
// (a and b from the job's row); so every job adds one term to the constant's log-posterior:
// its density where it finished, its survival where it was killed at its cap or is still
// running. Exact Bayes on a fine grid rather than a conjugate shortcut, because a > 0
// (set-up and I/O time) and the clamp of the prior break conjugacy.
#include <cstddef>
#include <vector>

#include "synth/world.hpp"

namespace ttlpred::synth {

// log P(Z > z) for a standard normal Z, finite for every finite z (no underflow to -inf).
double log_normal_tail(double z);

// Log-likelihood terms of one job of mean `mean_s` and noise sigma `sigma`, each up to a
// constant that does not depend on the mean: the job ran exactly `wall_s`; the job ran
// longer than `elapsed_s` (killed at its cap, or still running).
double log_density_of_run(double wall_s, double mean_s, double sigma);
double log_survival_of_run(double elapsed_s, double mean_s, double sigma);

class LatentGrid {
 public:
  // `points` (>= 3) values equally spaced in log between the prior's clamp bounds, or 6
  // sigma from the median where there is no bound. Each point carries the prior mass of its
  // cell; an end point also the mass beyond it (the clamp's atom, or a 6-sigma tail).
  LatentGrid(const LatentPrior& prior, std::size_t points);
  std::size_t size() const { return values_.size(); }
  const std::vector<double>& values() const { return values_; }
  const std::vector<double>& log_prior() const { return log_prior_; }

 private:
  std::vector<double> values_, log_prior_;
};

// Normalized posterior weights from log-posterior values; points more than 40 below the
// largest (weight < 4e-18) get exactly 0, so callers can skip them.
std::vector<double> posterior_weights(const std::vector<double>& log_posterior);

}  // namespace ttlpred::synth
