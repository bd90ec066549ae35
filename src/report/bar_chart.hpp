#pragma once
// Grouped vertical bars: one group per category (a job type, a queue, an engine variant),
// one bar per series (the model's error next to the static TTL's; latency of one job and
// per job in a batch). The value is printed above each bar, so the chart reads without
// hovering (the page has no JavaScript).
#include <string>
#include <vector>

#include "report/scale.hpp"

namespace ttlpred::report {

struct BarSeries {
  std::string name;            // the legend entry
  std::vector<double> values;  // one per category; NaN draws no bar
};

// A horizontal line across the plot at a value (a target such as the kill budget alpha),
// dashed, in the legend under its name; the y axis always reaches it.
struct ReferenceLine {
  std::string name;
  double value = 0;
};

struct BarChart {
  std::string title;
  Axis x;  // only its title is used: categories are labelled under their bars
  Axis y;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  std::vector<ReferenceLine> references;
  std::vector<std::string> notes;
  int value_decimals = 2;  // of the value printed above each bar (in % on a percent axis)
};

std::string draw_bar_chart(const BarChart& chart);

}  // namespace ttlpred::report
