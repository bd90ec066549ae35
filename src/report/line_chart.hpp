#pragma once
// Lines over a numeric x axis: calibration curves (kill rate against alpha or against TTL
// tightness), and time series (a backtest's kill rate per week, a simulator's utilization,
// waste and queue length). A new time-series chart is one LineChart filled and drawn:
//   LineChart c{"Kill rate per week", {"week", ""}, {"kill rate", "", false, 0, NAN, true}};
//   c.series.push_back({"safe TTL", points});
//   page.add_chart(draw_line_chart(c), "caption");
#include <string>
#include <vector>

#include "report/scale.hpp"
#include "report/svg_writer.hpp"

namespace ttlpred::report {

struct Series {
  std::string name;           // the legend entry
  std::vector<Point> points;  // data coordinates, drawn in this order
  bool dashed = false;
  bool markers = true;        // a dot on each point
};

struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  bool diagonal = false;  // the y = x reference line (a perfectly calibrated curve)
  std::string diagonal_name = "ideal (y = x)";
  std::vector<std::string> notes;  // small lines under the legend
};

// The chart as an <svg> element. Series without points still get their legend entry.
std::string draw_line_chart(const LineChart& chart);

}  // namespace ttlpred::report
