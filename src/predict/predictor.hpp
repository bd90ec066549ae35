#pragma once
// A loaded model ready to answer: raw job records (or table rows) in, expected wall time and
// safe TTL out. It ties together what the model file carries (feature encoder, network,
// target transform, safe-TTL calibration, int8 calibration) and the network compiled on one
// inference backend (engine/backend.hpp: the CPU engine unless the options name another).
// Immutable after construction and safe to call from many threads; the history state that
// supplies the per-user/per-production features is the caller's (the service keeps it
// current from outcomes, evaluation computes it leak-free over a table).
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "engine/backend.hpp"
#include "engine/isa.hpp"
#include "engine/variant.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "model/model_file.hpp"

namespace ttlpred {

// The target kill rate of the safe TTL where nobody names one: every command's --alpha, the
// library's options and Python's keyword arguments start from it.
inline constexpr double kDefaultAlpha = 0.01;

struct PredictorOptions {
  engine::Variant variant = engine::Variant::Fp32Fused;
  // Run the variant the model was made for (model_made_for) instead of `variant`: what the
  // CLI's `--variant auto` means, resolved per model (also on a service's hot reload).
  bool variant_from_model = false;
  std::optional<engine::Isa> isa;  // CPU: default the best the host supports
  // The backend the network runs on (engine/backend.hpp): null is the CPU engine.
  const engine::BackendKind* backend = nullptr;
  int device = 0;  // the backend's device index (CUDA)
  double alpha = kDefaultAlpha;    // target kill rate of the safe TTL
  // Bounds on every answer (finish() applies them; docs/service.md, "Bounds"). A safe TTL
  // above the longest slot a pilot can offer is never matched, so for a job without a
  // request (which bounds it otherwise) it is cut there and the prediction says so
  // (`capped`): 72 h, the longest slot window of ALICE pilots
  // (ALICE pilot slots live 24 to 72 h). 0 switches the cap off.
  double max_ttl_s = kDefaultMaxTtlSeconds;
  // No expected wall time or safe TTL below this: a network regressing hours can output
  // negative run times, which decode to exactly 0 s. A minute is the order of a job's own
  // start-up (software from CVMFS, input staging). The job's request still wins when shorter.
  double min_seconds = kDefaultMinSeconds;
  static constexpr double kDefaultMaxTtlSeconds = 259200;
  static constexpr double kDefaultMinSeconds = 60;
};

// The options a caller names as text: `variant` an engine variant name, or "auto" (the
// model's own: variant_from_model); `isa` an instruction-set name, or "" (the host's best).
// Throws Error on an unknown name.
PredictorOptions predictor_options_named(const std::string& variant, const std::string& isa, double alpha,
                                         double max_ttl_s, double min_seconds);

struct Prediction {
  double expected_wall_s = 0;  // in [min_seconds, max_ttl_s], capped at the requested TTL when the job has one
  double safe_ttl_s = 0;       // conformal upper bound at level alpha, bounded likewise
  bool capped = false;         // the safe TTL (or the expected wall time) was cut to max_ttl_s
  std::uint32_t group = kNoGroup;  // the safe-TTL calibration's group id the job was answered in
  // The job's quantile of run time at the head its per-job safe TTL is built on (seconds,
  // unbounded; model/quantile_ttl.hpp); NaN for a model without that rule.
  double upper_s = std::numeric_limits<double>::quiet_NaN();
  // A cold start (model/quantile_ttl.hpp): no finished job of its production yet (of its user:
  // fewer than kColdStartOutcomes, where the model keeps no production history); false where
  // it keeps neither.
  bool cold = false;
};

// The engine variant a model file was made for: the one its safe TTL was calibrated on
// (int8-static for a QAT model, fp16-2:4 / int8-2:4 for sparsity-trained ones), else fp32-fused.
engine::Variant model_made_for(const ModelFile& model);

class Predictor {
 public:
  Predictor(ModelFile model, const PredictorOptions& options, const std::string& what = "model");
  static Predictor load(const std::string& path, const PredictorOptions& options);

  // Serving path: encodes each record with its history features and runs the network. After a
  // thread's first call with a given batch size, no heap allocation.
  void predict(std::span<const JobRecord> jobs, const HistoryState& history, std::span<Prediction> out) const;
  // Evaluation path: rows of a table whose history matrix was computed over the same table.
  // With `group_ids`, also returns each row's category index (0 = unknown) in the encoder's
  // vocabulary of `group_column` (kNoGroup for every row when that is ""), with
  // kFallbackStratum set where a residual model's row falls back: what the safe-TTL
  // calibration groups by (model/safe_ttl.hpp).
  // With `quantiles_s`, also every row's quantile heads decoded to seconds (rows x heads; the
  // per-job safe TTL's calibration reads them).
  std::vector<Prediction> predict_rows(const JobTable& table, std::span<const std::size_t> rows,
                                       const HistoryMatrix& history, std::vector<std::uint32_t>* group_ids = nullptr,
                                       const std::string& group_column = "",
                                       std::vector<float>* quantiles_s = nullptr) const;

  // A fresh history state of the model's configuration, seeded with what the model file
  // carries (the state at the end of its training data), if anything.
  HistoryState initial_history() const;
  // (What `predict` replays a trace from, this state or an empty one, is the rule of
  // pipeline/predict_history.hpp.)

  const ModelFile& model() const { return *model_; }
  const FeatureEncoder& encoder() const { return *encoder_; }
  const engine::Backend& backend() const { return *backend_; }
  const PredictorOptions& options() const { return options_; }
  // Category index of each row's safe-TTL group in the encoder's vocabulary (0 = unknown);
  // -1 when the calibration is not grouped.
  int group_cat_index() const { return group_cat_; }
  // The last step of both paths: the network's output `z` for a job with this request and
  // safe-TTL group (kNoGroup when ungrouped) decoded, calibrated and bounded. Public so that
  // `ttlpred bench --serving` can time it alone.
  Prediction finish(float z, double requested_ttl_s, std::uint32_t group) const;
  // The same for all of a row's raw network outputs `out` (the mean, then the quantile heads)
  // and its residual offset: the per-job safe TTL where the model has one.
  Prediction finish(const float* out, float offset, double requested_ttl_s, std::uint32_t group,
                    bool cold = false) const;
  // Whether a job whose history features are `history_row` (HistoryState::features' layout)
  // is a cold start; `has_production`: the job names a production.
  bool cold_start(const float* history_row, bool has_production) const;

 private:
  // Position of `column` among the encoder's categorical columns; -1 for ""; throws if absent.
  int category_position(const std::string& column, const std::string& what) const;

  std::shared_ptr<const ModelFile> model_;
  std::shared_ptr<const FeatureEncoder> encoder_;
  std::shared_ptr<const engine::Backend> backend_;
  PredictorOptions options_;
  std::string what_;  // the model's name in errors (its path)
  int group_cat_ = -1;
  // Positions of the production's and the user's log_count among the history features (-1:
  // the model keeps no such key), which cold_start reads.
  int production_count_ = -1, user_count_ = -1;
  // The safe-TTL calibration group of one encoded row whose group column is categorical
  // column `column` (-1: kNoGroup): its category index, with kFallbackStratum set where the
  // model's residual base falls back (ResidualBase::falls_back).
  std::uint32_t calibration_group(int column, const float* dense, const std::uint32_t* cats) const;
};

// Caps a prediction at the job's request: a job cannot run past its requested TTL.
inline double cap_at_request(double value_s, double requested_ttl_s) {
  return requested_ttl_s > 0 ? std::min(value_s, requested_ttl_s) : value_s;
}

// The bounds of PredictorOptions on one raw answer, in this order: the floor, then the job's
// request (a hard upper bound, even below the floor) or, for a job without one, the global
// cap. A request longer than the cap stands: the scheduler enforces the request, and HPC
// queues grant more than 72 h. `capped` is set when the cap cut the value. The one place
// both serving and evaluation bound their answers. A value that is not a number, or +inf
// (an overflowed decode), is answered by the request or the cap like any long one, never by
// the floor; without either it throws Error.
double bound_seconds(double value_s, double requested_ttl_s, const PredictorOptions& options, bool& capped);

}  // namespace ttlpred
