#pragma once
// Scores a model on the tail of a chronological split by the evaluation protocol: history
// features of scored jobs use every job finished before their submit time, predictions are
// capped at the requested TTL, and the safe TTL is judged by how many jobs it would kill
// that the requested TTL would have let finish.
#include <string>
#include <vector>

#include "features/history.hpp"
#include "model/online_calibration.hpp"
#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "train/metrics.hpp"

namespace ttlpred {

struct GroupEvaluation {
  std::string name;
  AccuracyMetrics metrics;
  double baseline_rmse_hours = 0;
};

struct Evaluation {
  std::size_t train_rows = 0;
  OnlineMethod calibration = OnlineMethod::Static;  // how the safe TTLs were calibrated
  double alpha = 0;                 // the predictor's target kill rate
  // Whether the kill rate of the safe TTL went past alpha: its promise was broken.
  bool kill_rate_above_alpha() const { return metrics.kill_rate > alpha; }
  AccuracyMetrics metrics;          // over all scored rows
  double baseline_rmse_hours = 0;   // requested/static TTL as the prediction; NaN without requests
  double oracle_rmse_hours = 0;     // expected_wall_s as the prediction; NaN when the trace has none
  std::string group_column;         // breakdown column ("" when the trace has none)
  std::vector<GroupEvaluation> groups;
  std::vector<Prediction> predictions;  // per scored row, in split order
  // A model with quantile heads: per head, its level and the share of scored jobs that ended
  // within it (a calibrated head's share is its level). Empty for a mean-only model.
  struct HeadCoverage {
    double level = 0;
    double covered = 0;
  };
  std::vector<HeadCoverage> quantile_coverage;
};

// Breakdown column for reports: job_type, else queue, else partition, among columns with
// values; "" when none.
std::string breakdown_column(const JobTable& t);

// How the safe TTLs of the scored jobs are calibrated: the model's static calibration (as
// `predict` answers), or an online method following the outcomes of scored jobs as they
// become known (pipeline/online_scoring.hpp), keyed by `key_column` for mondrian.
struct EvaluationCalibration {
  OnlineCalibrationOptions online;  // online.method == Static (the default here): the model's own answers
  std::string key_column = kDefaultCalibrationKey;
  EvaluationCalibration() { online.method = OnlineMethod::Static; }
};

// `history`: features of split.jobs under the predictor's history configuration, when the
// caller already has them (scoring several variants of one model); computed here otherwise.
Evaluation evaluate(const Predictor& predictor, const ChronologicalSplit& split, const HistoryMatrix* history = nullptr);
Evaluation evaluate(const Predictor& predictor, const ChronologicalSplit& split, const HistoryMatrix* history,
                    const EvaluationCalibration& calibration);

}  // namespace ttlpred
