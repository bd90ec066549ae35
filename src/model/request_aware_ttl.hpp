#pragma once
// Request-aware safe TTLs: a job that has a requested TTL R and a prediction p < R gets
//   safe(q) = p * (R / p)^q        (q <= 1; q = 1 is the request itself)
// i.e. a point on the log-scale road from the prediction to the request. The score of a
// calibration job that finished within its request is s = log(w / p) / log(R / p), and the
// job is killed exactly when s > q. Jobs that outran their request, or whose prediction is
// already capped at it, can never be killed by the safe TTL (the kill rate does not count
// them), so they score -inf but still count in the denominator, as they do in the kill rate.
//
// Why not one global quantile (the plain log-ratio conformal): on real traces some 10% of
// jobs run up to their request, so a single 99% quantile is the request for everyone. Jobs
// are binned by p / R (how close the model thinks the job comes to its request) and the
// kill budget floor(alpha * n) is spent where it buys the most TTL: a greedy allocation of
// kills to bins by seconds of TTL saved per kill. Bins full of jobs that run to their
// limit keep q = 1; bins of jobs that finish well before it get tight TTLs. The overall kill
// rate on the calibration rows is at most alpha * alpha_scale; alpha_scale < 1 leaves room
// for drift between the calibration tail and later jobs (see docs/ACCURACY.md), and a kill
// is only spent where it frees at least `min_saving_per_kill` mean requests of TTL.
//
// Counting kills is not what a broker pays for: a killed job loses the CPU time it ran, and
// the jobs near their limit are often the long ones (synthetic trace, JAliEn broker: 1% kills
// by count lost 2.2% of the CPU). With `KillBudget::CpuTime` each calibration row also has a
// weight (the CPU time it needs: run time x cores) and the killed rows' weight is held to
// alpha * alpha_scale of all rows' weight as well: a weighted conformal quantile of the
// scores per bin, spent where it frees the most TTL per unit of the scarcer budget.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/binary_io.hpp"

namespace ttlpred {

// What a kill costs the calibration's budget: one kill, or also the CPU time it loses.
enum class KillBudget : std::uint8_t { Count = 0, CpuTime };

struct RequestAwareOptions {
  std::size_t max_bins = 10;       // bins of p / R, by quantiles of the calibration rows
  std::size_t min_bin_rows = 200;  // fewer rows per bin -> fewer bins
  double alpha_scale = 0.5;        // calibrate for alpha * alpha_scale kills (drift margin)
  // A kill wastes up to a request's worth of work and is paid for by the budget of all
  // later jobs: a move must free at least this many mean requests (of its bin) per kill.
  double min_saving_per_kill = 0.2;
  // Exponents above this are the request itself: they shave a few percent off it while
  // killing the jobs that run to their limit (KTH-SP2: 1.2% kills for 0.001 h of TTL).
  double max_exponent = 0.9;
  double floor_s = 1.0;            // run times and predictions are clamped to >= this
  KillBudget budget = KillBudget::Count;
};

// "count" / "cpu-time"; the parser throws Error naming the accepted names.
const char* kill_budget_name(KillBudget b);
KillBudget kill_budget_from_name(const std::string& name);

struct RequestAwareCalibration {
  std::vector<float> edges;            // ascending upper edges of p / R; bins = edges.size() + 1
  std::vector<double> alphas;          // ascending grid of calibrated alphas
  std::vector<std::vector<float>> q;   // q[alpha][bin], each <= 1
  double floor_s = 1.0;

  bool empty() const { return alphas.empty(); }
  std::size_t bin_of(double ratio) const;
  // The exponent for the largest calibrated alpha <= `alpha` (1 = the request when `alpha`
  // is below the whole grid).
  double exponent(double ratio, double alpha) const;
  // Safe TTL of a job with prediction `pred_s` and request `requested_s` > 0; <= requested_s.
  double safe_ttl(double pred_s, double requested_s, double alpha) const;

  void write(BinaryWriter& w) const;
  static RequestAwareCalibration read(BinaryReader& r);
};

// The alphas calibrated for (0.1% .. 10%).
const std::vector<double>& request_aware_alpha_grid();

// Score of one job (see above); -inf when the safe TTL can never kill it.
double request_aware_score(double wall_s, double pred_s, double requested_s, double floor_s);

// Calibrates on held-out rows that all have a request (> 0). `pred_s` must already be capped
// at the request. `weight` (KillBudget::CpuTime only; empty: the run time) is what a kill of
// each row would lose, e.g. run time x cores. Throws Error when sizes differ, a request is
// missing, a weight is not a positive number, or no row is given.
RequestAwareCalibration calibrate_request_aware(std::span<const float> wall_s, std::span<const float> pred_s,
                                                std::span<const float> requested_s,
                                                const RequestAwareOptions& options = {},
                                                std::span<const float> weight = {});

}  // namespace ttlpred
