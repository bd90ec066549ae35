#pragma once
// The safe TTL a job is given, decided in one place. `eval`, `backtest`, `serve`, `simulate`
// and `replay` turn a prediction into a safe TTL through a TtlPolicy; the one other
// expression is Predictor::finish's static answer (what `predict` and Python print), which a
// static policy returns unchanged and tests hold equal to the policy's own, job for job.
// Before it, each caller built its own online calibrator with its own bounds, its own
// conversion of a prediction and its own idea of "static".
//
// A policy is three things:
//  - the model's safe-TTL calibration (model/safe_ttl.hpp: fitted on the tail of its training
//    rows, per job where the model has quantile heads: model/quantile_ttl.hpp);
//  - the alpha and bounds of PredictorOptions (floor, request, cap: bound_seconds, the one
//    bounding of answers, which also says when the cap cut one);
//  - how it follows outcomes (model/online_calibration.hpp): `static` asks the calibration at
//    alpha for ever, the Predictor's own answer; the others move the level it is asked at as
//    outcomes arrive (aci-capped, aci-log ...), and divide it for a user's jobs answered
//    since that user's last outcome (the opt-in batch guard: answered() counts a job handed out).
// The answer for a job, with a = alpha (static) or the level learnt so far:
//   bound_seconds(calibration.safe_ttl(expected, upper, group, a, request, cold))
// which is never below the job's expected wall time unless its request (or the cap) cuts
// both. A model without a calibration answers its expected wall time and learns nothing.
// Outcomes are the caller's to order: it must observe only what was known at the time it
// asks (pipeline/online_scoring.hpp does so for a table, the service and the simulator by
// construction).
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "model/online_calibration.hpp"
#include "predict/predictor.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {

class TtlPolicy {
 public:
  // Answers through `calibration` (may be empty) at `bounds.alpha` within `bounds`, following
  // outcomes by `method.method`. Throws Error for an alpha outside (0, 1) or bad method options.
  TtlPolicy(SafeTtlCalibration calibration, const PredictorOptions& bounds, const OnlineCalibrationOptions& method);
  // The predictor's model's calibration, alpha and bounds.
  TtlPolicy(const Predictor& predictor, const OnlineCalibrationOptions& method);

  // The job as the policy sees it: the one conversion of a prediction, its request (<= 0 or
  // NaN: none), its mondrian key, its user's q99 (aci-history; NaN: none) and its batch key
  // (the batch guard's: text_key of its user; 0: none).
  static OnlineJob job_of(const Prediction& p, double requested_s, std::uint32_t key = 0,
                          double history_q99_s = std::numeric_limits<double>::quiet_NaN(), std::uint32_t batch = 0);
  // The key of a category's text (a user, a queue) as every caller computes it: the history
  // keys' string hash folded to 32 bits, never 0 (0: unknown, for the empty text), so that one
  // user is one key whatever order users are first seen in, in a table, the service or the
  // simulator.
  static std::uint32_t text_key(std::string_view text);

  // The TTL of `job`, bounded; `capped` (optional) is set when the cap cut it. Keep the
  // decision until the job's outcome is known: observe() needs it.
  OnlineDecision decide(const OnlineJob& job, bool* capped = nullptr) const;
  // The same for a prediction of the Predictor this policy was built for. Static answers with
  // the prediction's own safe TTL (Predictor::finish computed it, by the same expression), so
  // the serving path does not compute it twice; `p.capped` is updated to the answer's.
  OnlineDecision decide(Prediction& p, double requested_s, std::uint32_t key = 0, std::uint32_t batch = 0) const;
  // The job a decision answers was handed out (OnlineCalibrator::answered: the batch guard
  // counts it until its user's next outcome). Once per job; nothing for a static policy.
  void answered(const OnlineDecision& decision);
  // The calibration's TTL for `job` at a fixed `level`, bounded: what the per-job reports
  // show at levels other than the promise.
  double ttl_at_level(const OnlineJob& job, double level) const;

  // The outcome of a job answered by decide(): its run time (the kill rule is
  // model/online_calibration.hpp's killed_by). `weight` scales the level's step (the
  // simulator's CPU-time rule). Static counts it and moves nothing.
  void observe(const OnlineDecision& decision, double wall_s, double weight = 1.0);
  // Answers through another model's calibration from now on, keeping what was learnt (a
  // service's reload, a retrain's swap). An empty calibration turns the policy off until a
  // calibrated one comes.
  void rebase(const SafeTtlCalibration& calibration);
  // aci-history's table (OnlineCalibrator::set_history_rule).
  void set_history_rule(ResidualQuantiles log_ratio);

  OnlineMethod method() const { return options_.method; }
  // The name `--calibration` reads back ("static", "aci-capped", "aci-log" ...).
  std::string name() const;
  bool calibrated() const { return calibrator_.has_value(); }
  // Whether outcomes move its answers: a calibrated model and a method other than static.
  bool learns() const { return calibrated() && options_.method != OnlineMethod::Static; }
  double alpha() const { return bounds_.alpha; }
  // The level a job of mondrian key `key` is answered at (alpha for static).
  double level(std::uint32_t key = 0) const;
  std::uint64_t outcomes() const { return calibrator_ ? calibrator_->outcomes() : 0; }
  std::uint64_t kills() const { return calibrator_ ? calibrator_->kills() : 0; }
  // The online calibrator underneath (expert levels, for tests and reports); null when the
  // model has no calibration.
  const OnlineCalibrator* calibrator() const { return calibrator_ ? &*calibrator_ : nullptr; }

  // What it learnt (OnlineCalibrator::write_state); only a policy that learns() has any.
  void write_state(BinaryWriter& w) const;
  // Throws Error when the state was learnt under other options or another alpha; the policy
  // is unchanged then.
  void read_state(BinaryReader& r);

 private:
  // The calibration's raw answer at `level` (the expected wall time without a calibration).
  double static_ttl(const OnlineJob& job, double level) const;

  PredictorOptions bounds_;
  OnlineCalibrationOptions options_;
  std::optional<OnlineCalibrator> calibrator_;  // none: the model has no calibration
};

}  // namespace ttlpred
