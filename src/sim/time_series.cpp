#include "sim/time_series.hpp"

#include <algorithm>
#include <cmath>

namespace ttlpred::sim {
namespace {
constexpr double kHour = 3600;
}

void TimeSeries::advance(double t) {
  while (last_ < t) {
    auto h = static_cast<std::size_t>(std::floor((last_ - start_) / kHour));
    double hour_end = start_ + static_cast<double>(h + 1) * kHour;
    // At an hour's end, (last_ - start_) / kHour can round just below the hour's number: the
    // hour found is then the one that just ended, and the loop would stand still.
    if (hour_end <= last_) hour_end = start_ + static_cast<double>(++h + 1) * kHour;
    const double until = std::min(t, hour_end);
    const double dt = until - last_;
    if (hours_.size() <= h) hours_.resize(h + 1);
    hours_[h].busy += busy_ * dt;
    hours_[h].capacity += capacity_ * dt;
    hours_[h].queue += queue_ * dt;
    last_ = until;
  }
}

void TimeSeries::add_waste(double t, double core_hours) {
  const auto h = static_cast<std::size_t>(std::max(0.0, std::floor((t - start_) / kHour)));
  if (hours_.size() <= h) hours_.resize(h + 1);
  hours_[h].waste += core_hours;
}

std::vector<HourSample> TimeSeries::finish(double t) {
  advance(t);
  std::vector<HourSample> out(hours_.size());
  for (std::size_t h = 0; h < hours_.size(); ++h) {
    const double begin = start_ + static_cast<double>(h) * kHour;
    const double length = std::clamp(t - begin, 0.0, kHour);
    out[h].utilization = hours_[h].capacity > 0 ? hours_[h].busy / hours_[h].capacity : 0;
    out[h].queue_length = length > 0 ? hours_[h].queue / length : 0;
    out[h].wasted_core_hours = hours_[h].waste;
  }
  return out;
}

}  // namespace ttlpred::sim
