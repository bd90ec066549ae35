#pragma once
// Hourly time series of a simulation: time-weighted mean utilization and queue length per
// hour, and the core-hours wasted in each hour. Levels are piecewise constant between
// events, so each hour's mean is the exact integral of the level over the hour / 3600 s.
#include <cstddef>
#include <vector>

namespace ttlpred::sim {

struct HourSample {
  double utilization = 0;      // busy cores / capacity (capacity: cores present that hour)
  double queue_length = 0;     // waiting jobs, time-weighted
  double wasted_core_hours = 0;
};

class TimeSeries {
 public:
  // Hours are counted from `start` (the first submit time).
  explicit TimeSeries(double start) : start_(start), last_(start) {}

  // Integrates the current levels up to time t (t never goes back).
  void advance(double t);
  void set_busy(double busy_cores) { busy_ = busy_cores; }
  void set_capacity(double cores) { capacity_ = cores; }
  void set_queue(double jobs) { queue_ = jobs; }
  void add_waste(double t, double core_hours);
  // Closes the series at time t: the partial last hour is averaged over its own length.
  std::vector<HourSample> finish(double t);

 private:
  struct Integrals {
    double busy = 0, capacity = 0, queue = 0, waste = 0;
  };
  double start_, last_;
  double busy_ = 0, capacity_ = 0, queue_ = 0;
  std::vector<Integrals> hours_;
};

}  // namespace ttlpred::sim
