#pragma once
// A loaded model ready to answer: raw job records (or table rows) in, expected wall time and
// safe TTL out. It ties together what the model file carries (feature encoder, network,
// target transform, safe-TTL calibration, int8 calibration) and a compiled engine plan.
// Immutable after construction and safe to call from many threads; the history state that
// supplies the per-user/per-production features is the caller's (the service keeps it
// current from outcomes, evaluation computes it leak-free over a table).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "engine/isa.hpp"
#include "engine/plan.hpp"
#include "engine/variant.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "model/model_file.hpp"

namespace ttlpred {

struct PredictorOptions {
  engine::Variant variant = engine::Variant::Fp32Fused;
  // Run the variant the model was made for (model_made_for) instead of `variant`: what the
  // CLI's `--variant auto` means, resolved per model (also on a service's hot reload).
  bool variant_from_model = false;
  std::optional<engine::Isa> isa;  // default: the best the host supports
  double alpha = 0.01;             // target kill rate of the safe TTL
};

struct Prediction {
  double expected_wall_s = 0;  // capped at the requested TTL when the job has one
  double safe_ttl_s = 0;       // conformal upper bound at level alpha, capped likewise
};

// The engine variant a model file was made for: the one its safe TTL was calibrated on
// (int8-static for a QAT model, fp16-2:4 / int8-2:4 for sparsity-trained ones), else fp32-fused.
engine::Variant model_made_for(const ModelFile& model);

class Predictor {
 public:
  Predictor(ModelFile model, const PredictorOptions& options, const std::string& what = "model");
  static Predictor load(const std::string& path, const PredictorOptions& options);

  // Serving path: encodes each record with its history features and runs the plan. After a
  // thread's first call with a given batch size, no heap allocation.
  void predict(std::span<const JobRecord> jobs, const HistoryState& history, std::span<Prediction> out) const;
  // Evaluation path: rows of a table whose history matrix was computed over the same table.
  // With `group_ids`, also returns each row's category index (0 = unknown) in the encoder's
  // vocabulary of `group_column` (kNoGroup for every row when that is ""): what the safe-TTL
  // calibration groups by.
  std::vector<Prediction> predict_rows(const JobTable& table, std::span<const std::size_t> rows,
                                       const HistoryMatrix& history, std::vector<std::uint32_t>* group_ids = nullptr,
                                       const std::string& group_column = "") const;

  // A fresh history state of the model's configuration, seeded with what the model file
  // carries (the state at the end of its training data), if anything.
  HistoryState initial_history() const;

  const ModelFile& model() const { return *model_; }
  const FeatureEncoder& encoder() const { return *encoder_; }
  const engine::Plan& plan() const { return plan_; }
  const PredictorOptions& options() const { return options_; }
  // Category index of each row's safe-TTL group in the encoder's vocabulary (0 = unknown);
  // -1 when the calibration is not grouped.
  int group_cat_index() const { return group_cat_; }

 private:
  Prediction finish(float z, double requested_ttl_s, std::uint32_t group) const;
  // Position of `column` among the encoder's categorical columns; -1 for ""; throws if absent.
  int category_position(const std::string& column, const std::string& what) const;

  std::shared_ptr<const ModelFile> model_;
  std::shared_ptr<const FeatureEncoder> encoder_;
  engine::Plan plan_;
  PredictorOptions options_;
  int group_cat_ = -1;
};

// Caps a prediction at the job's request: a job cannot run past its requested TTL.
inline double cap_at_request(double value_s, double requested_ttl_s) {
  return requested_ttl_s > 0 ? std::min(value_s, requested_ttl_s) : value_s;
}

}  // namespace ttlpred
