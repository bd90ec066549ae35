#pragma once
// The history features `predict` gives the jobs of a trace (the CLI and Python's table path,
// so Python's TTLRegressor too): one rule, docs/features.md "History when predicting".
//
// A job's history comes from the model's own stored state (the outcomes of its training
// period, what `serve` starts from) plus the trace's jobs that ended before it. So a job after
// the training period gets the same answer alone or in a larger trace that adds no job ending
// before it, wherever that trace starts: jobs of the training period in the trace add nothing
// to it, since the model's state already holds their outcomes (counting them again showed
// each training job its own future: 8,245 of 50,000 predictions decoded to 0 s).
// Two cases need the trace's own history:
//  - the training period's jobs themselves: the model's state holds their outcomes, their own
//    included, so they are answered from the trace alone, replayed from an empty state, as
//    training saw them;
//  - a trace that begins with the model's very training jobs (the digest eval checks): it is
//    the whole record, replayed from an empty state for every job, so that `predict` answers
//    what `eval` scores on the same trace.
#include <cstddef>
#include <cstdint>

#include "data/job_table.hpp"
#include "features/history.hpp"
#include "predict/predictor.hpp"

namespace ttlpred {

enum class HistorySource : std::uint8_t {
  ModelState,      // no job of the trace is from the training period: the model's state plus the trace
  TraceFromStart,  // the trace begins with the model's training jobs: the trace alone, as eval
  Both,            // training-period jobs from the trace alone; the later ones from the model's state plus the later jobs
};

struct PredictHistory {
  HistoryMatrix features;  // row for row of the trace
  HistorySource source = HistorySource::ModelState;
  std::size_t training_period_rows = 0;  // jobs of the trace submitted before the model's last training job
};

// At prediction time `at` (PredictionTime of the model's history configuration when omitted).
PredictHistory predict_history(const Predictor& predictor, const JobTable& trace, PredictionTime at);
PredictHistory predict_history(const Predictor& predictor, const JobTable& trace);

}  // namespace ttlpred
