#include "sim/online_model_ttl.hpp"

#include <cmath>
#include <limits>

#include "pipeline/online_scoring.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {

OnlineModelTtl::OnlineModelTtl(std::unique_ptr<OnlineModel> model, SimCalibration calibration,
                               OnlineCalibrationOptions options, std::vector<double> static_ttl,
                               std::vector<double> requested, std::vector<int> cores, std::vector<std::uint32_t> keys)
    : model_(std::move(model)), calibration_(std::move(calibration)), options_(options), static_ttl_(std::move(static_ttl)),
      requested_(std::move(requested)), cores_(std::move(cores)), keys_(std::move(keys)) {
  const std::size_t n = static_ttl_.size();
  if (!model_ || requested_.size() != n || cores_.size() != n || keys_.size() != n)
    throw Error("simulate: the online TTLs need a model and one static TTL, request, core count and key per job");
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
  if (calibration_.method == OnlineMethod::Static) {
    ttl[0] = p->safe_ttl_s;
    return;
  }
  const Predictor& predictor = *model_->predictor();
  if (!calibrator_) {
    calibrator_.emplace(predictor.model().safe_ttl, predictor.options().alpha, options_, predictor_bound(predictor.options()));
  } else if (calibrated_model_ != model_->stats().retrains) {
    calibrator_->rebase(predictor.model().safe_ttl);
  }
  calibrated_model_ = model_->stats().retrains;
  OnlineJob j;
  j.pred_s = p->expected_wall_s;
  j.upper_s = p->upper_s;
  j.cold = p->cold;
  j.requested_s = requested_[job];
  j.group = p->group;
  j.key = keys_[job];
  pending_[job] = calibrator_->decide(j);
  ttl[0] = pending_[job]->ttl_s;
  if (calibration_.cpu_weighted) weights_.answered(cores_[job] * p->expected_wall_s);
}

void OnlineModelTtl::matched(std::size_t, std::size_t host_class) {
  if (host_class != 0) throw Error("simulate: --ttl online answers one TTL per job (no host classes)");
}

void OnlineModelTtl::ended(std::size_t job, double t, double ran_s, int cores, bool killed) {
  if (auto& d = pending_[job]) {
    const double weight = calibration_.cpu_weighted ? weights_.next(cores * ran_s) : 1.0;
    calibrator_->observe(*d, ran_s, weight);
    d.reset();
  }
  if (!killed) model_->finished(job, t, ran_s);
}

void OnlineModelTtl::retry_ended(std::size_t job, std::size_t, double t, double ran_s, bool killed) {
  if (!killed) model_->finished(job, t, ran_s);
}

double OnlineModelTtl::final_level() const {
  return calibrator_ ? calibrator_->level() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace ttlpred::sim
