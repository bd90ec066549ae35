#include "report/bar_chart.hpp"

#include <cmath>
#include <cstdio>

#include "report/chart_frame.hpp"

namespace ttlpred::report {

std::string draw_bar_chart(const BarChart& c) {
  std::vector<double> ys;
  for (const BarSeries& s : c.series) ys.insert(ys.end(), s.values.begin(), s.values.end());
  for (const ReferenceLine& r : c.references) ys.push_back(r.value);
  double y0, y1;
  domain_for(c.y, ys, y0, y1);
  // A bar's length is its value: on a linear axis the bars start at zero, however close the
  // values (RMSE 4.41 h next to 4.49 h must not read as no bar next to a full one), unless
  // the chart fixes its own lower end.
  if (!c.y.log && std::isnan(c.y.min) && y0 > 0) y0 = 0;
  const double n = static_cast<double>(std::max<std::size_t>(c.categories.size(), 1));
  ChartFrame f(c.title, c.x, 0, n, c.y, y0, y1, false);
  const double slot = (f.plot_right() - f.plot_left()) / n;
  const double bar = slot * 0.8 / static_cast<double>(std::max<std::size_t>(c.series.size(), 1));
  const bool slanted = c.categories.size() > 6;
  for (std::size_t k = 0; k < c.categories.size(); ++k) {
    const double left = f.plot_left() + slot * static_cast<double>(k) + slot * 0.1;
    const double mid = f.plot_left() + slot * (static_cast<double>(k) + 0.5);
    f.svg().text(mid, f.plot_bottom() + 16, c.categories[k], slanted ? "end" : "middle", 11, slanted ? -25 : 0);
    for (std::size_t s = 0; s < c.series.size(); ++s) {
      const double v = k < c.series[s].values.size() ? c.series[s].values[k] : NAN;
      if (!std::isfinite(v)) continue;
      const double top = f.y()(std::max(v, y0)), base = f.y()(c.y.log ? y0 : std::max(0.0, y0));
      const double x = left + bar * static_cast<double>(s);
      f.svg().rect(x, std::min(top, base), bar * 0.92, std::abs(base - top), series_color(s));
      char buf[32];
      if (c.y.percent) std::snprintf(buf, sizeof buf, "%.*f%%", c.value_decimals, 100 * v);
      else std::snprintf(buf, sizeof buf, "%.*f", c.value_decimals, v);
      if (bar >= 18) f.svg().text(x + bar * 0.46, std::min(top, base) - 3, buf, "middle", 9.5);
    }
  }
  for (std::size_t s = 0; s < c.series.size(); ++s) f.add_legend({c.series[s].name, series_color(s), false, true});
  for (std::size_t r = 0; r < c.references.size(); ++r) {
    const std::string& color = series_color(c.series.size() + r);
    const double y = f.y()(c.references[r].value);
    f.svg().line(f.plot_left(), y, f.plot_right(), y, color, 1.6, "7,4");
    f.add_legend({c.references[r].name, color, true});
  }
  for (const std::string& note : c.notes) f.add_note(note);
  return f.finish();
}

}  // namespace ttlpred::report
