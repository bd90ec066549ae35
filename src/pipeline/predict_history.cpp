#include "pipeline/predict_history.hpp"

#include <algorithm>
#include <vector>

#include "pipeline/model_checks.hpp"
#include "pipeline/split.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// Whether the eligible jobs of `trace` begin with the model's training jobs. A trace with no
// eligible job (no run times: jobs still to run) cannot.
bool holds_the_training_jobs(const ModelFile& model, const JobTable& trace) {
  if (trained_rows(model) == 0) return false;
  try {
    return begins_with_training_jobs(model, chronological_split(trace, 1.0));
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

PredictHistory predict_history(const Predictor& predictor, const JobTable& trace) {
  return predict_history(predictor, trace, predictor.encoder().history_config().at);
}

PredictHistory predict_history(const Predictor& predictor, const JobTable& trace, PredictionTime at) {
  const ModelFile& model = predictor.model();
  PredictHistory out;
  // Rows submitted before the last training job (strictly: a job submitted in the same second
  // may or may not have been trained on, and a service would take it as new; NaN is later).
  std::vector<std::size_t> later;
  const double last = model.provenance.last_train_submit;
  const bool has_state = !model.provenance.empty() && !model.history.empty();
  if (has_state) {
    const auto submit = trace.num(Field::SubmitTime);
    for (std::size_t i = 0; i < trace.rows(); ++i)
      if (!(submit[i] < last)) later.push_back(i);
    out.training_period_rows = trace.rows() - later.size();
  }
  if (out.training_period_rows == 0) {
    HistoryState state = predictor.initial_history();
    out.features = compute_history(trace, state, at);
    return out;
  }
  HistoryState empty(predictor.encoder().history_config());
  out.features = compute_history(trace, empty, at);
  if (holds_the_training_jobs(model, trace)) {
    out.source = HistorySource::TraceFromStart;
    return out;
  }
  out.source = HistorySource::Both;
  if (later.empty()) return out;
  HistoryState state = predictor.initial_history();
  const HistoryMatrix from_model = compute_history(trace.select(later), state, at);
  for (std::size_t k = 0; k < later.size(); ++k)
    std::copy_n(from_model.row(k), from_model.width, out.features.values.data() + later[k] * out.features.width);
  return out;
}

}  // namespace ttlpred
