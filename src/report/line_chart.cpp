#include "report/line_chart.hpp"

#include <algorithm>
#include <cmath>

#include "report/chart_frame.hpp"

namespace ttlpred::report {

std::string draw_line_chart(const LineChart& c) {
  std::vector<double> xs, ys;
  for (const Series& s : c.series)
    for (const Point& p : s.points) xs.push_back(p.x), ys.push_back(p.y);
  double x0, x1, y0, y1;
  domain_for(c.x, xs, x0, x1);
  if (c.diagonal) ys.push_back(x0), ys.push_back(x1);
  domain_for(c.y, ys, y0, y1);
  ChartFrame f(c.title, c.x, x0, x1, c.y, y0, y1);
  auto inside = [&](const Point& p) {
    return std::isfinite(p.x) && std::isfinite(p.y) && (!c.x.log || p.x > 0) && (!c.y.log || p.y > 0);
  };
  if (c.diagonal) {
    const double a = std::max(x0, y0), b = std::min(x1, y1);
    if (b > a) f.svg().line(f.x()(a), f.y()(a), f.x()(b), f.y()(b), "#777777", 1.5, "6,4");
    f.add_legend({c.diagonal_name, "#777777", true});
  }
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    const std::string& color = series_color(i);
    std::vector<Point> px;
    for (const Point& p : s.points)
      if (inside(p)) px.push_back({f.x()(std::clamp(p.x, x0, x1)), f.y()(std::clamp(p.y, y0, y1))});
    f.svg().polyline(px, color, 2.2, s.dashed ? "7,4" : "");
    if (s.markers)
      for (const Point& p : px) f.svg().circle(p.x, p.y, 3.2, color);
    f.add_legend({s.name, color, s.dashed});
  }
  for (const std::string& n : c.notes) f.add_note(n);
  return f.finish();
}

}  // namespace ttlpred::report
