#pragma once
// The outcomes a retrain may learn from, as a job table: those submitted within a window
// before a point in time and finished by it, optionally after the jobs of an original trace
// submitted before the window. The retrain command, the service's retrain thread and the
// replay cut their tables here, so all three learn from the same rows.
#include <cstddef>

#include "data/job_table.hpp"

namespace ttlpred {

// When a job's outcome is known: submit + wait (0 when unknown) + run time; NaN when the
// submit or run time is unknown.
double outcome_known_at(const JobTable& jobs, std::size_t row);

struct OutcomeWindow {
  double end_s = 0;     // the point in time: outcomes known by then (<= end_s)
  double length_s = 0;  // submitted at or after end_s - length_s; 0: no limit
};

// Rows of `jobs` in the window, in submit order.
std::vector<std::size_t> rows_in_window(const JobTable& jobs, const OutcomeWindow& window);

// A table of `original`'s rows submitted before `before_s` (in submit order), then every
// row of `recent` (in its order): one dictionary per column, values re-interned.
JobTable concat_before(const JobTable& original, double before_s, const JobTable& recent, std::size_t* original_rows);

}  // namespace ttlpred
