#pragma once
// The maximum-likelihood mean of a normal sample of which some values are known exactly and
// some only from below (right-censored), its standard deviation given. The history's
// censored work rates (features/history.hpp, HistoryConfig::censored_rates) call it with the
// log rates of a key's finished jobs (exact) and of its running jobs (each running job's
// elapsed time is a lower bound on its run time).
//
// Why: at match time a young production's first outcomes are its shortest runs, so their
// plain mean runs low; on the synthetic ALICE trace a rate from 1-4 finished siblings had a
// mean log bias of -0.37 (Hyperloop) and -0.57 (RAW_RECO), and this estimate, with the
// running siblings as lower bounds, -0.00 and -0.05 (docs/ACCURACY.md).
//
// The score in mu, n (mean - mu) / sigma + sum_j h((c_j - mu) / sigma) with h the normal
// hazard phi(z) / (1 - Phi(z)), falls strictly as mu grows, is >= 0 at mu = mean and < 0
// far enough above it: one root, found by Newton steps kept inside a shrinking bracket.
#include <cstdint>
#include <span>

namespace ttlpred {

// The normal hazard (inverse Mills ratio) phi(z) / (1 - Phi(z)), finite for every finite z.
double normal_hazard(double z);

// n_exact >= 1 values with mean `mean_exact`, the censored lower bounds `censored`, sigma > 0
// (all finite). Returns the MLE of mu (>= mean_exact; == mean_exact without censored values).
double censored_normal_mean(double mean_exact, std::uint64_t n_exact, std::span<const double> censored, double sigma);

}  // namespace ttlpred
