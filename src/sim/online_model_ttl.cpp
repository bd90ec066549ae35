#include "sim/online_model_ttl.hpp"

#include <cmath>
#include <limits>

#include "predict/ttl_policy.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {

OnlineModelTtl::OnlineModelTtl(std::unique_ptr<OnlineModel> model, SimCalibration calibration,
                               OnlineCalibrationOptions options, std::vector<double> static_ttl,
                               std::vector<double> requested, std::vector<int> cores, std::vector<std::uint32_t> keys,
                               std::vector<std::uint32_t> batches)
    : model_(std::move(model)), calibration_(std::move(calibration)), options_(options), static_ttl_(std::move(static_ttl)),
      requested_(std::move(requested)), cores_(std::move(cores)), keys_(std::move(keys)), batches_(std::move(batches)) {
  const std::size_t n = static_ttl_.size();
  if (!model_ || requested_.size() != n || cores_.size() != n || keys_.size() != n || batches_.size() != n)
    throw Error("simulate: the online TTLs need a model and one static TTL, request, core count, key and batch key per job");
  options_.method = calibration_.method;
  options_.log_level = calibration_.log_level;
  pending_.resize(n);
}

void OnlineModelTtl::decide(std::size_t job, double t, std::span<double> ttl) {
  const std::optional<Prediction> p = model_->predict(job, t);
  if (!p) {
    ttl[0] = static_ttl_[job];
    return;
  }
  const Predictor& predictor = *model_->predictor();
  if (!policy_) {
    policy_.emplace(predictor, options_);
  } else if (calibrated_model_ != model_->stats().retrains) {
    policy_->rebase(predictor.model().safe_ttl);
  }
  calibrated_model_ = model_->stats().retrains;
  Prediction answer = *p;
  const OnlineDecision d = policy_->decide(answer, requested_[job], keys_[job], batches_[job]);
  ttl[0] = d.ttl_s;
  if (!policy_->learns()) return;
  policy_->answered(d);
  pending_[job] = d;
  if (calibration_.cpu_weighted) weights_.answered(cores_[job] * p->expected_wall_s);
}

void OnlineModelTtl::matched(std::size_t, std::size_t host_class) {
  if (host_class != 0) throw Error("simulate: --ttl online answers one TTL per job (no host classes)");
}

void OnlineModelTtl::ended(std::size_t job, double t, double ran_s, int cores, bool killed) {
  if (auto& d = pending_[job]) {
    const double weight = calibration_.cpu_weighted ? weights_.next(cores * ran_s) : 1.0;
    policy_->observe(*d, ran_s, weight);
    d.reset();
  }
  if (!killed) model_->finished(job, t, ran_s);
}

void OnlineModelTtl::retry_ended(std::size_t job, std::size_t, double t, double ran_s, bool killed) {
  if (!killed) model_->finished(job, t, ran_s);
}

double OnlineModelTtl::final_level() const {
  return policy_ && policy_->learns() ? policy_->level() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace ttlpred::sim
