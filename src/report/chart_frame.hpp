#pragma once
// What every chart shares: the title, the plot area with its two scaled axes (ticks, grid,
// axis titles with units) and the legend on the right. A chart type computes its data
// domain, makes a ChartFrame, draws its marks with the frame's scales, and adds legend
// entries: so no chart can come out without labelled axes or a legend.
#include <string>
#include <vector>

#include "report/scale.hpp"
#include "report/svg_writer.hpp"

namespace ttlpred::report {

struct LegendEntry {
  std::string name, color;
  bool dashed = false;
  bool swatch = false;  // a filled square (bars, areas) instead of a line
};

// The categorical colours of every chart (colour-blind-safe, Okabe-Ito).
const std::string& series_color(std::size_t i);

class ChartFrame {
 public:
  static constexpr double kWidth = 780, kHeight = 440;
  static constexpr double kLeft = 78, kRight = 200, kTop = 44, kBottom = 80;  // room for slanted category labels

  // Draws the title, grid, ticks and axis titles. `x_ticks` false: the caller labels x
  // itself (category axes).
  ChartFrame(const std::string& title, const Axis& x, double x0, double x1, const Axis& y, double y0, double y1,
             bool x_ticks = true);

  SvgWriter& svg() { return svg_; }
  const Scale& x() const { return x_; }
  const Scale& y() const { return y_; }
  double plot_left() const { return kLeft; }
  double plot_right() const { return kWidth - kRight; }
  double plot_top() const { return kTop; }
  double plot_bottom() const { return kHeight - kBottom; }

  void add_legend(const LegendEntry& e) { legend_.push_back(e); }
  // A line of small text under the legend (notes such as "dashed: ideal").
  void add_note(const std::string& note) { notes_.push_back(note); }
  // Legend, then the finished <svg>.
  std::string finish();

 private:
  SvgWriter svg_;
  Scale x_, y_;
  std::vector<LegendEntry> legend_;
  std::vector<std::string> notes_;
};

}  // namespace ttlpred::report
