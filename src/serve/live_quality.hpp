#pragma once
// How good the served answers are, measured live on the outcomes matched to the prediction
// served for them (recent_predictions.hpp): over the last 1 000 and 10 000 matched outcomes,
// and over those received in the last hour and day. Per window:
//  - kill rate: share of jobs the served safe TTL would have killed (ran longer than it and
//    not longer than their request: killed_by, model/online_calibration.hpp);
//  - coverage: share of jobs that ran no longer than their safe TTL;
//  - RMSE of the expected wall time, hours;
//  - mean log error: mean of ln(max(expected, 1 s)) - ln(max(wall, 1 s)) (> 0: the model
//    expects longer runs than happen);
//  - safe TTL over request: sum of safe TTLs over sum of requests, jobs with a request only
//    (the "mean safe / requested" of docs/ACCURACY.md).
// The count windows keep the last 10 000 outcomes and sum them when asked (exact, no running
// sums that drift); the time windows keep per-minute sums for a day, so "last hour" is the
// current minute of the received time and the 59 before it.
#include <array>
#include <cstdint>
#include <vector>

#include "serve/live_groups.hpp"
#include "util/binary_io.hpp"

namespace ttlpred::serve {

struct ScoredOutcome {
  double received_at = 0;  // unix seconds
  double wall_s = 0;
  double expected_s = 0;
  double safe_ttl_s = 0;
  double requested_s = 0;  // <= 0: none
};

// A window's figures. With no outcome in the window every rate and error is NaN (the
// exposition format's "no value"), not 0: a kill rate of 0 before any outcome reads as
// healthy.
struct QualityFigures {
  std::uint64_t outcomes = 0;
  double kill_rate = 0, coverage = 0, rmse_h = 0, mean_log_error = 0;
  double rmse_s = 0;             // rmse_h in seconds, the base unit Prometheus names want
  double safe_over_request = 0;  // NaN when no outcome of the window had a request
};

inline constexpr std::array<std::size_t, 2> kCountWindows = {1000, 10000};
inline constexpr std::array<double, 2> kTimeWindowsS = {3600, 86400};

class LiveQuality {
 public:
  LiveQuality();
  void add(const ScoredOutcome& o);
  // Over the last `n` outcomes (n <= the largest count window).
  QualityFigures last(std::size_t n) const;
  // Over the outcomes received in the minute of `now` and the seconds / 60 - 1 minutes before.
  QualityFigures within(double now, double seconds) const;

  void write_state(BinaryWriter& w) const;
  void read_state(BinaryReader& r);

 private:
  // One outcome's terms, or a minute's sums of them.
  struct Sums {
    double n = 0, kills = 0, covered = 0, sq_err_h = 0, log_err = 0, safe_req = 0, req = 0, n_req = 0;
    void add(const Sums& s);
  };
  static Sums terms(const ScoredOutcome& o);
  static QualityFigures figures(const Sums& s);

  std::vector<Sums> ring_;  // the last kCountWindows.back() outcomes
  std::size_t next_ = 0, filled_ = 0;
  struct Minute {
    std::int64_t minute = -1;
    Sums sums;
  };
  std::vector<Minute> minutes_;  // indexed by minute modulo a day's minutes
};

// The same windows per job type / queue group (live_groups.hpp): each group's count windows
// are its own last 1 000 / 10 000 outcomes. About 0.75 MB per group at most (the ring of
// 10 000 outcomes and a day of minutes), so at most 13 MB for the 17 labels.
using GroupQuality = GroupTable<LiveQuality>;

}  // namespace ttlpred::serve
