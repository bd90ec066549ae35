#include "report/scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ttlpred::report {

Scale::Scale(double d0, double d1, double r0, double r1, bool log) : d0_(d0), d1_(d1), r0_(r0), r1_(r1), log_(log) {}

double Scale::operator()(double v) const {
  const double a = log_ ? std::log10(d0_) : d0_, b = log_ ? std::log10(d1_) : d1_;
  const double x = log_ ? std::log10(std::max(v, d0_ * 1e-3)) : v;
  return r0_ + (x - a) / (b - a) * (r1_ - r0_);
}

std::vector<double> Scale::ticks() const {
  std::vector<double> out;
  if (log_) {
    const int lo = static_cast<int>(std::floor(std::log10(d0_))), hi = static_cast<int>(std::ceil(std::log10(d1_)));
    const bool short_range = hi - lo <= 2;
    for (int e = lo; e <= hi; ++e)
      for (double m : short_range ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, e);
        if (v >= d0_ * (1 - 1e-9) && v <= d1_ * (1 + 1e-9)) out.push_back(v);
      }
    return out;
  }
  const double raw = (d1_ - d0_) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(d0_ / step) * step; v <= d1_ + step * 1e-9; v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

void domain_for(const Axis& axis, const std::vector<double>& values, double& lo, double& hi) {
  lo = INFINITY;
  hi = -INFINITY;
  for (double v : values)
    if (std::isfinite(v) && (!axis.log || v > 0)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!std::isfinite(lo)) lo = axis.log ? 1 : 0, hi = axis.log ? 10 : 1;
  if (!axis.log && lo > 0 && lo < 0.5 * hi) lo = 0;  // bars and rates read from zero
  if (!std::isnan(axis.min)) lo = axis.min;
  if (!std::isnan(axis.max)) hi = axis.max;
  if (hi <= lo) {
    if (axis.log) lo /= 2, hi = lo * 4;
    else hi = lo + (lo == 0 ? 1 : std::abs(lo));
  }
  if (!axis.log && std::isnan(axis.max)) hi += (hi - lo) * 0.05;
}

std::string tick_label(double v, bool percent) {
  char buf[32];
  if (percent) {
    const double p = v * 100;
    std::snprintf(buf, sizeof buf, p != 0 && std::abs(p) < 1 ? "%.2g%%" : "%.3g%%", p);
    return buf;
  }
  const double a = std::abs(v);
  if (a >= 1e6) std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  else if (a >= 1e4) std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace ttlpred::report
