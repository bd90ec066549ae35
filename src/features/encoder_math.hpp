#pragma once
// The arithmetic of one dense column, shared by fitting, encode_one and encode_batch so that
// all three give bit-identical numbers. Internal to the features library.
#include <cmath>
#include <numbers>

#include "features/encoder.hpp"

namespace ttlpred::encoder_math {

inline double apply_transform(NumericTransform t, double x) {
  if (t == NumericTransform::Log1p) return std::isnan(x) ? x : std::log1p(x > 0.0 ? x : 0.0);
  return x;
}

inline constexpr double kDay = 86400.0;
inline constexpr double kWeek = 7.0 * kDay;
// 1970-01-01 was a Thursday; shifting by 3 days puts Monday 00:00 UTC at phase 0.
inline constexpr double kWeekShift = 3.0 * kDay;

// Fraction of the period elapsed at time t, in [0, 1).
inline double phase_of(double t, double period, double shift) {
  double f = std::fmod(t + shift, period) / period;
  return f < 0.0 ? f + 1.0 : f;
}

inline bool is_daily(DenseSource s) { return s == DenseSource::HourSin || s == DenseSource::HourCos; }
// The phase a cyclic column turns with: of the day (Hour*) or of the week (Week*).
inline double cyclic_phase(DenseSource s, double submit_time) {
  return is_daily(s) ? phase_of(submit_time, kDay, 0.0) : phase_of(submit_time, kWeek, kWeekShift);
}
// A cyclic column's value at `phase` (cyclic_phase of its own period).
inline double cyclic_of_phase(DenseSource s, double phase) {
  const double two_pi = 2.0 * std::numbers::pi;
  switch (s) {
    case DenseSource::HourSin:
    case DenseSource::WeekSin: return std::sin(two_pi * phase);
    case DenseSource::HourCos:
    case DenseSource::WeekCos: return std::cos(two_pi * phase);
    default: return std::nan("");
  }
}
// The untransformed-by-standardization value of a cyclic column (NaN when t is unknown).
inline double cyclic_value(DenseSource s, double submit_time) {
  if (std::isnan(submit_time)) return submit_time;
  return cyclic_of_phase(s, cyclic_phase(s, submit_time));
}

// Standardized float; a missing (or infinite) value is the training mean, i.e. 0.
inline float standardize(const DenseColumn& c, double v) {
  return std::isfinite(v) ? static_cast<float>((v - c.mean) * c.inv_std) : 0.0f;
}

// A column's value for one record before standardization.
inline double column_value(const DenseColumn& c, const JobRecord& r, const float* history) {
  switch (c.source) {
    case DenseSource::Field: return apply_transform(c.transform, r[c.field]);
    case DenseSource::Missing: return r.known(c.field) ? 0.0 : 1.0;
    case DenseSource::History: return history[c.index];
    default: return cyclic_value(c.source, r[Field::SubmitTime]);
  }
}

}  // namespace ttlpred::encoder_math
