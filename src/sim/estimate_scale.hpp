#pragma once
// The backfilling estimate of `easy` and `easy++` with --ttl model or online, chosen for the
// schedule. Both schedulers read an estimate twice: to order the waiting jobs (easy++:
// shortest first) and to test whether a candidate ends before the head's reservation. The
// model's expected time is fitted for squared error on the run time, for neither use. Scaled
// down, it keeps the order and lets more candidates pass the test; a job that outlives its
// estimate is corrected to its safe TTL, then to its request, as before. Gaussier, Glesser,
// Reis and Trystram (SC 2015) made the same choice for their learner by the schedule's own
// metric (an asymmetric loss picked by cross-validating the bounded slowdown), and which
// scale pays depends on the machine and its users, so it is not a constant here either:
// `auto` chooses it online, by replay. Every `every_s` of simulated time the jobs submitted
// in the `window_s` before the oldest job still waiting or running (all of them ended) are
// simulated again, alone, once per candidate scale times the estimates they were given. The
// replays' evidence is pooled (ReplayEvidence): the least aggressive scale within one standard
// error of the lowest average bounded slowdown over every replay so far answers the next jobs.
// One week's replay is noisy (a 100-processor machine's month swings by 5-10 % with one
// training); pooling keeps what the earlier weeks showed, and the standard error shrinks as
// evidence grows. Only ended jobs are replayed: a job's estimate never depends on an outcome
// that was not known when it arrived. docs/SIMULATION.md has what it bought.
#include <cstddef>
#include <string>
#include <vector>

namespace ttlpred::sim {

// --estimate-scale's default: the scale chosen by replay.
inline constexpr const char* kDefaultEstimateScale = "auto";

struct EstimateScaleOptions {
  // One scale: fixed. Several: chosen by replay; the first answers until the first choice
  // and wins ties (so list the least aggressive first).
  std::vector<double> candidates{1.0};
  double every_s = 7 * 86400.0;    // a choice a week of simulated time
  double window_s = 28 * 86400.0;  // replaying the last four weeks' ended jobs
  std::size_t min_jobs = 200;      // fewer ended jobs in the window: the scale is kept
  bool chosen() const { return candidates.size() > 1; }
};

// Every replay's per-job bounded slowdowns under each candidate, pooled: a job replayed in
// several windows counts once per replay.
class ReplayEvidence {
 public:
  explicit ReplayEvidence(std::size_t candidates);
  // One replay: bsld[k][i], replayed job i's bounded slowdown under candidate k. Error unless
  // there is one row per candidate, all of one length.
  void add(const std::vector<std::vector<double>>& bsld);
  // The first (least aggressive) candidate whose pooled mean is within one standard error of
  // the paired differences of the lowest pooled mean; 0 before any evidence.
  std::size_t pick() const;
  std::size_t jobs() const { return n_; }

 private:
  std::size_t k_, n_ = 0;
  std::vector<double> sum_;    // per candidate (their differences are the paired differences' sums)
  std::vector<double> dsum2_;  // per pair a < b, at a * k_ + b: the sum of (bsld_a - bsld_b)^2
};

// `auto`: the powers of two 1, 1/2, 1/4, 1/8, 1/16, chosen by replay; a number in (0, 1]: that
// scale, fixed. Error on anything else, naming --estimate-scale.
EstimateScaleOptions estimate_scale_from_text(const std::string& text);

}  // namespace ttlpred::sim
