#pragma once
// The evaluation protocol's split: keep jobs with a run time > 0 (and, when the trace has
// requested times, a requested time > 0), sort them stably by submit time, train on the
// first fraction, score the rest.
//
// Only eligible jobs are trained on and scored, but every job of the trace with an outcome
// feeds the history features (a job that ran 0 s or had no request still finished, and a
// service receiving outcomes would have seen it): the split keeps the whole trace and where
// each eligible job came from, and split_history.hpp computes the features from it.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "data/job_table.hpp"

namespace ttlpred {

struct ChronologicalSplit {
  JobTable jobs;              // eligible jobs in submit order
  std::shared_ptr<const JobTable> trace;  // the whole trace, as read
  std::vector<std::size_t> trace_rows;    // jobs row i is trace row trace_rows[i]
  double fraction = 0;        // the fraction asked for
  std::size_t train_rows = 0;  // rows [0, train_rows) train, the rest are scored
  std::size_t dropped_no_runtime = 0;
  std::size_t dropped_no_request = 0;
  std::size_t scored_rows() const { return jobs.rows() - train_rows; }
};

// The fraction of eligible jobs a model trains on unless told otherwise: `train --split`'s
// default, and so the default of every command and binding that names the training part
// (eval, report, pipeline, quantize, simulate; Python's train and evaluate).
inline constexpr double kDefaultSplit = 0.8;

// Throws Error unless `fraction` is in (0, 1]: what chronological_split accepts, so that a
// command can refuse a bad --split before it reads its trace.
void check_split_fraction(double fraction);
// Throws Error when `fraction` is outside (0, 1] or no job is eligible.
ChronologicalSplit chronological_split(JobTable trace, double fraction);

// A short hex digest of the columns a model learns from (for the model file's metadata).
std::string table_digest(const JobTable& t, std::size_t rows);

}  // namespace ttlpred
