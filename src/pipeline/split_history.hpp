#pragma once
// History features of a chronological split, the one way every command gets them (train,
// eval, quantize, pipeline; predict and the service reach the same numbers through
// compute_history and HistoryState on the same rule, docs/features.md "One rule for every
// caller").
//
// The rule: a job's features see every job of the trace whose outcome was known by its
// prediction time (its submit time, or its start at match time: features/history.hpp),
// eligible or not: jobs that ran 0 s, had no request, or fall in the training part all count. So `eval`
// on a trace scores exactly what `predict` answers for the same jobs of the same trace, and
// what a service fed the trace's outcomes in time order answers.
#include "features/history.hpp"
#include "pipeline/split.hpp"

namespace ttlpred {

// Features of split.jobs, row for row, computed over split.trace from `state` (an empty
// state of the configuration: the walk starts at the beginning of the trace).
HistoryMatrix split_history(const ChronologicalSplit& split, const HistoryConfig& cfg);
// The same, walked at prediction time `at` (compute_history says which pairs are allowed).
HistoryMatrix split_history(const ChronologicalSplit& split, const HistoryConfig& cfg, PredictionTime at);

// The state a service holds at the end of the training period: the outcome of every job of
// the trace submitted no later than the last training job, scored jobs excepted, observed
// in finish order. A model file carries it, so that `predict` on later jobs and `serve`
// start where training stopped.
HistoryState history_after_training(const ChronologicalSplit& split, const HistoryConfig& cfg);

}  // namespace ttlpred
