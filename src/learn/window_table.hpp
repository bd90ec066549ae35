#pragma once
// The outcomes a retrain may learn from, as a job table: those submitted within a window
// before a point in time and finished by it, optionally after the jobs of an original trace
// submitted before the window. The retrain command, the service's retrain thread and the
// replay cut their tables here, so all three learn from the same rows.
#include <cstddef>
#include <span>

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

// What a service's journal holds of `jobs` by window.end_s, when the jobs of `served_rows`
// were answered the safe TTLs `ttl` (parallel): a job its TTL plus `kill_margin_s` killed
// (model/online_calibration.hpp, killed_by: it ran past that and not past its request) ends
// there, with status ERROR_E (TIMEOUT when the table's statuses have no ERROR_E): a censored
// outcome (pipeline/censored_outcomes.hpp), known that much earlier. Every other job as the
// table has it. The rows of the window, in submit order; `killed`: how many are censored.
JobTable delivered_outcomes(const JobTable& jobs, std::span<const std::size_t> served_rows, std::span<const double> ttl,
                            double kill_margin_s, const OutcomeWindow& window, std::size_t* killed = nullptr);

// A table of `original`'s rows submitted before `before_s` (in submit order), then every
// row of `recent` (in its order): one dictionary per column, values re-interned.
JobTable concat_before(const JobTable& original, double before_s, const JobTable& recent, std::size_t* original_rows);

}  // namespace ttlpred
