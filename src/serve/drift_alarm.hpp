#pragma once
// Drift alarm on the log residuals of matched outcomes, r = ln(max(wall, 1 s)) -
// ln(max(expected, 1 s)): a Page-Hinkley test of both directions (Page 1954; the cumulative form of
// Gama et al. 2013 and river's PageHinkley). With x_t the running mean of r since the last
// reset, after each outcome
//   up   = max(0, up   + r - x_t - delta)     (jobs run longer than predicted: kills ahead)
//   down = max(0, down + x_t - r - delta)     (jobs run shorter: TTLs looser than needed)
// and the alarm fires when `up` passes `threshold` (direction Longer, the default) or either
// does (Both), after at least `min_outcomes` since the reset; then the test restarts from
// nothing, so that a further shift raises it again. The service runs one test per job type /
// queue group (group_drift.hpp).
// Defaults, measured (docs/ACCURACY.md, "Tuning the drift alarm"): delta 0.1 (a tenth of a log
// unit, about 10% in run time, is noise), threshold 400, longer only. The random-walk argument
// for independent residuals (with a spread of 1.5 log units, a false alarm every 10^5-10^6
// outcomes already at threshold 100) does not hold for real workloads: a production's jobs
// arrive in bursts and share its error (lag-1 autocorrelation 0.4-0.6 within a job type), and
// at 100 the test fired every ~900 outcomes of a no-drift synthetic trace; at 400, per group
// and one-sided, never, while a release of MC jobs running slower raised it 2 days in.
// A shift of +0.4 (jobs 1.5x slower, all of a group) accumulates 0.3 per outcome and raises
// it after about 1 300 of that group's outcomes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "util/binary_io.hpp"

namespace ttlpred::serve {

// The residual the test watches: ln(max(wall, 1 s)) - ln(max(expected, 1 s)).
inline double log_residual(double wall_s, double expected_s) {
  return std::log(std::max(wall_s, 1.0)) - std::log(std::max(expected_s, 1.0));
}

// Which outcomes one test watches (group_drift.hpp): all of them, or each job type / queue
// group's own.
enum class DriftScope { All, Group };
const char* drift_scope_name(DriftScope s);
DriftScope drift_scope_from_name(const std::string& name);  // "all" or "group"; throws Error otherwise

// Which statistic raises the alarm: `up` alone (jobs run longer than predicted: the served
// safe TTLs will kill more than promised) or either. Both are computed and exported either way.
enum class DriftDirection { Longer, Both };
const char* drift_direction_name(DriftDirection d);
DriftDirection drift_direction_from_name(const std::string& name);  // "longer" or "both"; throws Error otherwise

struct DriftOptions {
  double delta = 0.1;
  double threshold = 400;
  std::uint64_t min_outcomes = 30;
  DriftScope scope = DriftScope::Group;
  DriftDirection direction = DriftDirection::Longer;
};

class PageHinkley {
 public:
  explicit PageHinkley(DriftOptions options = {});
  // Adds one residual; true when it raised the alarm (the test has restarted).
  bool add(double residual);
  double up() const { return up_; }
  double down() const { return down_; }
  double mean() const { return mean_; }
  std::uint64_t count() const { return n_; }
  // The test as it stood when it last raised the alarm (before restarting).
  struct Alarm {
    double up = 0, down = 0, mean = 0;
    std::uint64_t count = 0;
  };
  const Alarm& last_alarm() const { return last_alarm_; }
  const DriftOptions& options() const { return options_; }

  void write_state(BinaryWriter& w) const;
  void read_state(BinaryReader& r);

 private:
  void reset();
  DriftOptions options_;
  std::uint64_t n_ = 0;
  double mean_ = 0, up_ = 0, down_ = 0;
  Alarm last_alarm_;
};

}  // namespace ttlpred::serve
