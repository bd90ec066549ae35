#include "predict/ttl_policy.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "features/key_hash.hpp"
#include "util/error.hpp"

namespace ttlpred {

TtlPolicy::TtlPolicy(SafeTtlCalibration calibration, const PredictorOptions& bounds,
                     const OnlineCalibrationOptions& method)
    : bounds_(bounds), options_(method) {
  if (!(bounds_.alpha > 0.0 && bounds_.alpha < 1.0))
    throw Error("safe-TTL alpha must lie in (0, 1), got " + std::to_string(bounds_.alpha));
  // Unbounded underneath: decide() bounds every answer itself, through bound_seconds, so that
  // it knows when the cap cut one.
  if (!calibration.empty()) calibrator_.emplace(std::move(calibration), bounds_.alpha, options_);
}

TtlPolicy::TtlPolicy(const Predictor& predictor, const OnlineCalibrationOptions& method)
    : TtlPolicy(predictor.model().safe_ttl, predictor.options(), method) {}

std::uint32_t TtlPolicy::text_key(std::string_view text) {
  if (text.empty()) return 0;
  const std::uint64_t h = keyhash::of_string(text);
  const auto folded = static_cast<std::uint32_t>(h ^ (h >> 32));
  return folded == 0 ? 1 : folded;
}

OnlineJob TtlPolicy::job_of(const Prediction& p, double requested_s, std::uint32_t key, double history_q99_s,
                            std::uint32_t batch) {
  OnlineJob job;
  job.pred_s = p.expected_wall_s;
  job.upper_s = p.upper_s;
  job.cold = p.cold;
  job.requested_s = requested_s > 0 ? requested_s : 0.0;
  job.group = p.group;
  job.key = key;
  job.history_q99_s = history_q99_s;
  job.batch = batch;
  return job;
}

OnlineDecision TtlPolicy::decide(const OnlineJob& job, bool* capped) const {
  OnlineDecision d;
  bool cut = false;
  if (!learns()) {
    d.job = job;
    d.level = bounds_.alpha;
    d.ttl_s = bound_seconds(static_ttl(job, bounds_.alpha), job.requested_s, bounds_, cut);
  } else {
    d = calibrator_->decide(job);
    d.ttl_s = bound_seconds(d.ttl_s, job.requested_s, bounds_, cut);
    for (double& e : d.expert_ttl_s) {
      bool ignored = false;
      e = bound_seconds(e, job.requested_s, bounds_, ignored);
    }
  }
  if (capped) *capped = cut;
  return d;
}

OnlineDecision TtlPolicy::decide(Prediction& p, double requested_s, std::uint32_t key, std::uint32_t batch) const {
  const OnlineJob job = job_of(p, requested_s, key, std::numeric_limits<double>::quiet_NaN(), batch);
  if (!learns()) {
    OnlineDecision d;
    d.job = job;
    d.level = bounds_.alpha;
    d.ttl_s = p.safe_ttl_s;
    return d;
  }
  // The cap cuts to exactly max_ttl_s: an expected wall time there was cut (p.capped also
  // covers the static safe TTL, which this answer replaces).
  bool capped = false;
  OnlineDecision d = decide(job, &capped);
  p.capped = capped || (p.capped && p.expected_wall_s == bounds_.max_ttl_s);
  p.safe_ttl_s = d.ttl_s;
  return d;
}

double TtlPolicy::static_ttl(const OnlineJob& job, double level) const {
  if (!calibrator_) return job.pred_s;
  // Predictor::finish's expression, so that a static policy answers what the predictor does.
  return calibrator_->calibration().safe_ttl(job.pred_s, job.upper_s, job.group, level, job.requested_s, job.cold);
}

double TtlPolicy::ttl_at_level(const OnlineJob& job, double level) const {
  bool ignored = false;
  return bound_seconds(static_ttl(job, level), job.requested_s, bounds_, ignored);
}

void TtlPolicy::answered(const OnlineDecision& decision) {
  if (learns()) calibrator_->answered(decision);
}

void TtlPolicy::observe(const OnlineDecision& decision, double wall_s, double weight) {
  if (calibrator_) calibrator_->observe(decision, wall_s, weight);
}

void TtlPolicy::rebase(const SafeTtlCalibration& calibration) {
  if (calibration.empty()) {
    calibrator_.reset();
  } else if (calibrator_) {
    calibrator_->rebase(calibration);
  } else {
    calibrator_.emplace(calibration, bounds_.alpha, options_);
  }
}

void TtlPolicy::set_history_rule(ResidualQuantiles log_ratio) {
  if (calibrator_) calibrator_->set_history_rule(std::move(log_ratio));
}

std::string TtlPolicy::name() const { return answering_calibration_name(options_.method, options_.log_level); }

double TtlPolicy::level(std::uint32_t key) const { return learns() ? calibrator_->level(key) : bounds_.alpha; }

void TtlPolicy::write_state(BinaryWriter& w) const {
  if (!learns()) throw Error("a safe-TTL policy that learns nothing has no state to write");
  calibrator_->write_state(w);
}

void TtlPolicy::read_state(BinaryReader& r) {
  if (!learns()) throw Error("a safe-TTL policy that learns nothing has no state to read");
  OnlineCalibrator restored = *calibrator_;
  restored.read_state(r);
  calibrator_ = std::move(restored);
}

}  // namespace ttlpred
