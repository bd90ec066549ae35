#include "report/chart_frame.hpp"

#include <array>

namespace ttlpred::report {

const std::string& series_color(std::size_t i) {
  static const std::array<std::string, 8> colors = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  return colors[i % colors.size()];
}

ChartFrame::ChartFrame(const std::string& title, const Axis& x, double x0, double x1, const Axis& y, double y0,
                       double y1, bool x_ticks)
    : svg_(kWidth, kHeight, title),
      x_(x0, x1, kLeft, kWidth - kRight, x.log),
      y_(y0, y1, kHeight - kBottom, kTop, y.log) {
  svg_.rect(0, 0, kWidth, kHeight, "#ffffff");
  svg_.text(kLeft, 24, title, "start", 15, 0, true);
  const double l = plot_left(), r = plot_right(), t = plot_top(), b = plot_bottom();
  for (double v : y_.ticks()) {
    const double py = y_(v);
    svg_.line(l, py, r, py, "#e3e3e3");
    svg_.line(l - 5, py, l, py, "#333333");
    svg_.text(l - 8, py + 4, tick_label(v, y.percent), "end", 11);
  }
  if (x_ticks)
    for (double v : x_.ticks()) {
      const double px = x_(v);
      svg_.line(px, t, px, b, "#eeeeee");
      svg_.line(px, b, px, b + 5, "#333333");
      svg_.text(px, b + 18, tick_label(v, x.percent), "middle", 11);
    }
  svg_.line(l, b, r, b, "#333333");
  svg_.line(l, t, l, b, "#333333");
  svg_.text((l + r) / 2, kHeight - 12, x.title(), "middle", 13);
  svg_.text(20, (t + b) / 2, y.title(), "middle", 13, -90);
}

std::string ChartFrame::finish() {
  const double x0 = plot_right() + 16;
  double y = plot_top() + 8;
  for (const LegendEntry& e : legend_) {
    if (e.swatch) svg_.rect(x0, y - 9, 14, 12, e.color);
    else svg_.line(x0, y - 3, x0 + 24, y - 3, e.color, 2.5, e.dashed ? "6,4" : "");
    svg_.text(x0 + 30, y + 1, e.name, "start", 12);
    y += 20;
  }
  y += 6;
  for (const std::string& n : notes_) {
    svg_.text(x0, y, n, "start", 10.5);
    y += 15;
  }
  return svg_.finish();
}

}  // namespace ttlpred::report
