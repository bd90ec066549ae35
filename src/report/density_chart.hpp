#pragma once
// A two-dimensional histogram on log-log axes: predicted against actual run time, one cell
// shaded by how many jobs fall in it, with the y = x line of a perfect prediction. Run
// times span seconds to days and most jobs are short, so a scatter of 100k points would be
// one blot; counts on log axes show where the mass is and how far it sits off the diagonal.
#include <string>
#include <vector>

#include "report/scale.hpp"

namespace ttlpred::report {

struct DensityChart {
  std::string title;
  Axis x, y;  // drawn log-log: non-positive values are left out (and counted in a note)
  std::vector<double> xs, ys;  // one point per job, parallel
  int bins = 48;               // per axis
  std::vector<std::string> notes;
};

std::string draw_density_chart(const DensityChart& chart);

}  // namespace ttlpred::report
