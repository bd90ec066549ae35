#include "report/density_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/chart_frame.hpp"

namespace ttlpred::report {
namespace {

// Light to dark blue by the share of the largest count, on a log scale (counts are skewed).
std::string shade(double share) {
  const double t = std::clamp(share, 0.0, 1.0);
  const int r = static_cast<int>(230 - 222 * t), g = static_cast<int>(240 - 192 * t), b = static_cast<int>(250 - 143 * t);
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

}  // namespace

std::string draw_density_chart(const DensityChart& c) {
  Axis x = c.x, y = c.y;
  x.log = y.log = true;
  std::vector<double> all;
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < c.xs.size() && i < c.ys.size(); ++i) {
    if (c.xs[i] > 0 && c.ys[i] > 0 && std::isfinite(c.xs[i]) && std::isfinite(c.ys[i])) all.push_back(c.xs[i]), all.push_back(c.ys[i]);
    else ++dropped;
  }
  // One domain for both axes, so the diagonal is the 45-degree line.
  double lo, hi;
  domain_for(x, all, lo, hi);
  lo = std::pow(10.0, std::floor(std::log10(lo))), hi = std::pow(10.0, std::ceil(std::log10(hi)));
  ChartFrame f(c.title, x, lo, hi, y, lo, hi);
  const int n = std::max(4, c.bins);
  std::vector<std::size_t> counts(static_cast<std::size_t>(n * n), 0);
  const double llo = std::log10(lo), span = std::log10(hi) - llo;
  for (std::size_t i = 0; i + 1 < all.size(); i += 2) {
    const int bx = std::clamp(static_cast<int>((std::log10(all[i]) - llo) / span * n), 0, n - 1);
    const int by = std::clamp(static_cast<int>((std::log10(all[i + 1]) - llo) / span * n), 0, n - 1);
    ++counts[static_cast<std::size_t>(by * n + bx)];
  }
  const std::size_t most = *std::max_element(counts.begin(), counts.end());
  const double cw = (f.plot_right() - f.plot_left()) / n, ch = (f.plot_bottom() - f.plot_top()) / n;
  for (int by = 0; by < n; ++by)
    for (int bx = 0; bx < n; ++bx) {
      const std::size_t k = counts[static_cast<std::size_t>(by * n + bx)];
      if (k == 0) continue;
      const double share = std::log1p(static_cast<double>(k)) / std::log1p(static_cast<double>(most));
      f.svg().rect(f.plot_left() + bx * cw, f.plot_bottom() - (by + 1) * ch, cw + 0.3, ch + 0.3, shade(0.15 + 0.85 * share));
    }
  f.svg().line(f.x()(lo), f.y()(lo), f.x()(hi), f.y()(hi), "#D55E00", 1.5, "6,4");
  f.add_legend({"perfect prediction", "#D55E00", true});
  char buf[64];
  f.add_legend({"1 job per cell", shade(0.15), false, true});
  std::snprintf(buf, sizeof buf, "%zu jobs per cell", most);
  f.add_legend({buf, shade(1.0), false, true});
  std::snprintf(buf, sizeof buf, "%zu jobs drawn", all.size() / 2);
  f.add_note(buf);
  if (dropped > 0) {
    std::snprintf(buf, sizeof buf, "%zu without a positive value", dropped);
    f.add_note(buf);
  }
  f.add_note("shade: log of the job count");
  for (const std::string& note : c.notes) f.add_note(note);
  return f.finish();
}

}  // namespace ttlpred::report
