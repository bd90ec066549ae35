#pragma once
// The evaluation protocol's split (issue 3): keep jobs with a run time > 0 (and, when the
// trace has requested times, a requested time > 0), sort them stably by submit time, train
// on the first fraction, score the rest.
#include <cstddef>
#include <string>

#include "data/job_table.hpp"

namespace ttlpred {

struct ChronologicalSplit {
  JobTable jobs;              // eligible jobs in submit order
  double fraction = 0;        // the fraction asked for
  std::size_t train_rows = 0;  // rows [0, train_rows) train, the rest are scored
  std::size_t dropped_no_runtime = 0;
  std::size_t dropped_no_request = 0;
  std::size_t scored_rows() const { return jobs.rows() - train_rows; }
};

// Throws Error when `fraction` is outside (0, 1] or no job is eligible.
ChronologicalSplit chronological_split(const JobTable& trace, double fraction);

// A short hex digest of the columns a model learns from (for the model file's metadata).
std::string table_digest(const JobTable& t, std::size_t rows);

}  // namespace ttlpred
