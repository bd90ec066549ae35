#pragma once
// Maps data values to pixels along one axis, linear or log10, and picks the ticks people
// read: 1-2-5 steps on a linear axis, powers of ten (with 2 and 5 between them when the
// range is short) on a log axis. Log axes are what run times need: they span seconds to days.
#include <limits>
#include <string>
#include <vector>

namespace ttlpred::report {

struct Axis {
  static constexpr double kAuto = std::numeric_limits<double>::quiet_NaN();
  std::string label;  // what the axis shows, e.g. "actual run time"
  std::string unit;   // shown in parentheses after the label, e.g. "h"; "" for none
  bool log = false;
  // Fixed domain ends; NaN = from the data (with a little room on linear axes).
  double min = kAuto, max = kAuto;
  bool percent = false;  // tick labels as percentages of 1 (0.01 -> "1%")
  std::string title() const { return unit.empty() ? label : label + " (" + unit + ")"; }
};

class Scale {
 public:
  // Domain [d0, d1] onto pixels [r0, r1]; a log scale needs d0 > 0.
  Scale(double d0, double d1, double r0, double r1, bool log);
  double operator()(double v) const;
  std::vector<double> ticks() const;
  bool log() const { return log_; }
  double d0() const { return d0_; }
  double d1() const { return d1_; }

 private:
  double d0_, d1_, r0_, r1_;
  bool log_;
};

// The domain an axis gets from the data values it shows (finite ones; positive ones on a
// log axis): fixed ends kept, a degenerate range widened.
void domain_for(const Axis& axis, const std::vector<double>& values, double& lo, double& hi);
// A tick label: "0.05", "10", "2k", "1M"; percent axes "1%".
std::string tick_label(double v, bool percent);

}  // namespace ttlpred::report
