#include "model/online_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr std::uint32_t kStateVersion = 1;

double clamp_level(double level) { return std::clamp(level, kMinLevel, kMaxLevel); }

// Pinball loss at quantile level tau of a log-space prediction against the log run time.
double pinball(double log_wall, double log_ttl, double tau) {
  const double d = log_wall - log_ttl;
  return d > 0 ? tau * d : (tau - 1.0) * d;
}

}  // namespace

std::string_view online_method_name(OnlineMethod m) {
  switch (m) {
    case OnlineMethod::Static: return "static";
    case OnlineMethod::Rolling: return "rolling";
    case OnlineMethod::Aci: return "aci";
    case OnlineMethod::MultiAci: return "multi-aci";
    case OnlineMethod::Mondrian: return "mondrian";
    case OnlineMethod::AciHistory: return "aci-history";
    case OnlineMethod::AciCapped: return "aci-capped";
  }
  return "?";
}

OnlineMethod online_method_from_name(std::string_view name) {
  for (OnlineMethod m : all_online_methods())
    if (online_method_name(m) == name) return m;
  throw Error("unknown calibration method '" + std::string(name) +
              "' (expected static, rolling, aci, aci-capped, multi-aci, mondrian or aci-history)");
}

OnlineMethod answering_method_from_name(std::string_view name) {
  const OnlineMethod m = online_method_from_name(name);
  if (m == OnlineMethod::AciHistory)
    throw Error("calibration method 'aci-history' needs the user's run-time quantiles, which only backtest computes "
                "(expected static, rolling, aci, aci-capped, multi-aci or mondrian)");
  return m;
}

LogSuffix split_log_suffix(std::string_view name) {
  constexpr std::string_view kLog = "-log";
  if (name.size() > kLog.size() && name.substr(name.size() - kLog.size()) == kLog)
    return {name.substr(0, name.size() - kLog.size()), true};
  return {name, false};
}

AnsweringCalibration answering_calibration_from_name(std::string_view name) {
  AnsweringCalibration c;
  const LogSuffix s = split_log_suffix(name);
  if (s.log && s.base != "aci" && s.base != "mondrian")
    throw Error("calibration method '" + std::string(name) + "': only aci and mondrian step their level in log space " +
                "(aci-log, mondrian-log)");
  c.log_level = s.log;
  try {
    c.method = answering_method_from_name(s.base);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "; or aci-log, mondrian-log (the level stepped in log space)");
  }
  return c;
}

std::string answering_calibration_name(OnlineMethod method, bool log_level) {
  return std::string(online_method_name(method)) + (log_level ? "-log" : "");
}

const std::vector<OnlineMethod>& all_online_methods() {
  static const std::vector<OnlineMethod> all = {OnlineMethod::Static,   OnlineMethod::Rolling,
                                                OnlineMethod::Aci,      OnlineMethod::AciCapped,
                                                OnlineMethod::MultiAci, OnlineMethod::Mondrian,
                                                OnlineMethod::AciHistory};
  return all;
}

OnlineCalibrator::OnlineCalibrator(SafeTtlCalibration start, double alpha, const OnlineCalibrationOptions& options,
                                   TtlBound bound)
    : calibration_(std::move(start)), alpha_(alpha), options_(options), bound_(std::move(bound)) {
  if (!(alpha > 0.0 && alpha < 1.0)) throw Error("safe-TTL alpha must lie in (0, 1), got " + std::to_string(alpha));
  if (calibration_.empty()) throw Error("online calibration needs a calibrated model (its safe-TTL table is empty)");
  if (!(options_.target_scale > 0 && options_.target_scale <= 1)) throw Error("calibration target scale must be in (0, 1]");
  if (!(options_.gamma >= 0) || !(options_.group_gamma >= 0)) throw Error("calibration learning rates must be >= 0");
  if (options_.method == OnlineMethod::MultiAci &&
      (options_.gammas.empty() || options_.gammas.size() > kMaxOnlineExperts))
    throw Error("multi-aci needs 1 to " + std::to_string(kMaxOnlineExperts) + " learning rates");
  if (!(options_.mix >= 0 && options_.mix <= 1) || !(options_.eta >= 0)) throw Error("multi-aci: eta >= 0, mix in [0, 1]");
  if (!(options_.shrink >= 0)) throw Error("mondrian shrinkage must be >= 0");
  if (!(options_.capped_target_scale > 0 && options_.capped_target_scale <= 1))
    throw Error("aci-capped: the target scale must be in (0, 1]");
  if (!(options_.level_cap >= options_.capped_target_scale) || !std::isfinite(options_.level_cap))
    throw Error("aci-capped: the level cap must be finite and at least the target scale");
  if (options_.method == OnlineMethod::Rolling && (options_.window == 0 || options_.refit_every == 0))
    throw Error("rolling calibration needs a window and a refit interval > 0");
  global_level_ = target();
  // aci-capped, the default, starts where the model's own calibration answers (alpha), so that
  // before any outcome every caller answers what `predict` does; the others start at their target.
  if (options_.method == OnlineMethod::Static || options_.method == OnlineMethod::Rolling ||
      options_.method == OnlineMethod::AciCapped)
    global_level_ = alpha_;
  if (options_.method == OnlineMethod::MultiAci) {
    expert_level_.assign(options_.gammas.size(), global_level_);
    expert_weight_.assign(options_.gammas.size(), 1.0 / static_cast<double>(options_.gammas.size()));
  }
}

double OnlineCalibrator::raw_ttl(const OnlineJob& job, double level) const {
  double raw = calibration_.safe_ttl(job.pred_s, job.upper_s, job.group, clamp_level(level), job.requested_s, job.cold);
  if (options_.method == OnlineMethod::AciHistory && !history_rule_.values.empty() && job.history_q99_s > 0)
    // The history's bound, but never below the job's own expected wall time (as the calibration's).
    raw = std::max(std::min(raw, job.history_q99_s * std::exp(history_rule_.conformal_quantile(clamp_level(level)))),
                   std::isfinite(job.pred_s) ? job.pred_s : 0.0);
  if (bound_) return bound_(raw, job.requested_s);
  return job.requested_s > 0 ? std::min(raw, job.requested_s) : raw;
}

double OnlineCalibrator::level(std::uint32_t key) const {
  switch (options_.method) {
    case OnlineMethod::Static:
    case OnlineMethod::Rolling:
    case OnlineMethod::Aci:
    case OnlineMethod::AciCapped:
    case OnlineMethod::AciHistory: return global_level_;
    case OnlineMethod::MultiAci: {
      double l = 0;
      for (std::size_t k = 0; k < expert_level_.size(); ++k) l += expert_weight_[k] * expert_level_[k];
      return l;
    }
    case OnlineMethod::Mondrian: {
      const auto it = keys_.find(key);
      if (it == keys_.end()) return global_level_;
      const double n = static_cast<double>(it->second.n);
      return global_level_ + n / (n + options_.shrink) * it->second.offset;
    }
  }
  return global_level_;
}

OnlineDecision OnlineCalibrator::decide(const OnlineJob& job) const {
  OnlineDecision d;
  d.job = job;
  const double scale = batch_scale(job.batch);
  d.level = level(job.key) * scale;
  d.ttl_s = raw_ttl(job, d.level);
  for (std::size_t k = 0; k < expert_level_.size(); ++k) d.expert_ttl_s[k] = raw_ttl(job, expert_level_[k] * scale);
  return d;
}

double OnlineCalibrator::batch_scale(std::uint32_t batch) const {
  if (!options_.batch_guard || options_.method == OnlineMethod::Static) return 1.0;
  return 1.0 / std::sqrt(static_cast<double>(unresolved_.count(batch)) + 1.0);
}

void OnlineCalibrator::answered(const OnlineDecision& decision) { unresolved_.answered(decision.job.batch); }

void OnlineCalibrator::observe(const OnlineDecision& d, double wall_s, double weight) {
  if (!(weight >= 0) || !std::isfinite(weight))
    throw Error("online calibration: an outcome's weight must be finite and >= 0, got " + std::to_string(weight));
  const double req = d.job.requested_s;
  const int err = killed_by(wall_s, d.ttl_s, req);
  unresolved_.resolved(d.job.batch);
  ++outcomes_;
  kills_ += static_cast<std::uint64_t>(err);
  const double target = this->target();
  switch (options_.method) {
    case OnlineMethod::Static: break;
    case OnlineMethod::AciCapped:
      step_global_level(weight * options_.gamma * (target - err));
      global_level_ = std::min(global_level_, options_.level_cap * alpha_);
      break;
    case OnlineMethod::Aci:
    case OnlineMethod::AciHistory: step_global_level(weight * options_.gamma * (target - err)); break;
    case OnlineMethod::Mondrian: {
      step_global_level(weight * options_.gamma * (target - err));
      KeyState& k = keys_[d.job.key];
      k.offset += weight * options_.group_gamma * (target - err);
      ++k.n;
      break;
    }
    case OnlineMethod::MultiAci: {
      // A job that outran its request says nothing about how tight a TTL may be.
      const bool informative = !(req > 0 && wall_s > req);
      const double log_wall = std::log(std::max(wall_s, calibration_.floor_s));
      double total = 0;
      for (std::size_t k = 0; k < expert_level_.size(); ++k) {
        const double ttl = d.expert_ttl_s[k];
        expert_level_[k] += weight * options_.gammas[k] * (target - killed_by(wall_s, ttl, req));
        if (informative)
          expert_weight_[k] *= std::exp(-options_.eta * pinball(log_wall, std::log(std::max(ttl, calibration_.floor_s)), 1.0 - target));
        total += expert_weight_[k];
      }
      const double kk = static_cast<double>(expert_level_.size());
      for (double& w : expert_weight_)
        w = total > 0 && std::isfinite(total) ? (1.0 - options_.mix) * w / total + options_.mix / kk : 1.0 / kk;
      break;
    }
    case OnlineMethod::Rolling: {
      window_.push_back({static_cast<float>(wall_s), static_cast<float>(d.job.pred_s), static_cast<float>(req), d.job.group});
      if (window_.size() > options_.window) window_.pop_front();
      if (++since_refit_ >= options_.refit_every && window_.size() >= options_.min_refit_rows) refit();
      break;
    }
  }
}

double OnlineCalibrator::target() const {
  return alpha_ * (options_.method == OnlineMethod::AciCapped ? options_.capped_target_scale : options_.target_scale);
}

void OnlineCalibrator::step_global_level(double step) {
  if (options_.log_level) global_level_ *= std::exp(step);
  else global_level_ += step;
}

void OnlineCalibrator::rebase(SafeTtlCalibration c) {
  if (c.empty()) throw Error("online calibration needs a calibrated model (its safe-TTL table is empty)");
  calibration_ = std::move(c);
}

void OnlineCalibrator::refit() {
  since_refit_ = 0;
  // The same rows as the training-time calibration (pipeline/fit_model.cpp): the log-ratio
  // table skips jobs that outran their request, the request-aware one keeps every job with one.
  std::vector<float> cw, cp, rw, rp, rr;
  std::vector<std::uint32_t> cg, rg;
  const bool grouped = !calibration_.group_column.empty();
  for (const Outcome& o : window_) {
    if (o.requested_s > 0) {
      rw.push_back(o.wall_s);
      rp.push_back(o.pred_s);
      rr.push_back(o.requested_s);
      if (grouped) rg.push_back(o.group);
    }
    if (o.requested_s > 0 && o.wall_s > o.requested_s) continue;
    cw.push_back(o.wall_s);
    cp.push_back(o.pred_s);
    if (grouped) cg.push_back(o.group);
  }
  if (cw.empty()) return;
  SafeTtlCalibration c = calibrate_safe_ttl(cw, cp, cg, options_.refit, calibration_.group_column);
  if (options_.refit.request_aware && !rw.empty()) {
    RequestAwareOptions ro = options_.refit.request;
    ro.floor_s = options_.refit.floor_s;
    calibrate_request_tables(c, rw, rp, rr, rg, calibration_.request_by_group, ro);
  }
  // The window keeps no job's quantile heads: the per-job rule stays the model's.
  c.quantile = std::move(calibration_.quantile);
  calibration_ = std::move(c);
}

void OnlineCalibrator::write_state(BinaryWriter& w) const {
  w.put<std::uint32_t>(kStateVersion);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(options_.method));
  w.put<double>(alpha_);
  w.put<std::uint64_t>(outcomes_);
  w.put<std::uint64_t>(kills_);
  w.put<double>(global_level_);
  w.put_vector(expert_level_);
  w.put_vector(expert_weight_);
  // Keys in ascending order, so that equal states write equal bytes.
  std::map<std::uint32_t, KeyState> sorted(keys_.begin(), keys_.end());
  w.put<std::uint64_t>(sorted.size());
  for (const auto& [key, s] : sorted) {
    w.put<std::uint32_t>(key);
    w.put<double>(s.offset);
    w.put<std::uint64_t>(s.n);
  }
  w.put<std::uint64_t>(window_.size());
  for (const Outcome& o : window_) {
    w.put<float>(o.wall_s);
    w.put<float>(o.pred_s);
    w.put<float>(o.requested_s);
    w.put<std::uint32_t>(o.group);
  }
  w.put<std::uint64_t>(since_refit_);
  calibration_.write(w);
}

void OnlineCalibrator::read_state(BinaryReader& r) {
  if (r.get<std::uint32_t>() != kStateVersion) r.fail("online calibration state has an unknown version");
  const auto method = r.get<std::uint8_t>();
  if (method != static_cast<std::uint8_t>(options_.method))
    r.fail("online calibration state was written by another method than " + std::string(online_method_name(options_.method)));
  const double alpha = r.get<double>();
  if (alpha != alpha_) r.fail("online calibration state was written for alpha " + std::to_string(alpha));
  const auto outcomes = r.get<std::uint64_t>(), kills = r.get<std::uint64_t>();
  if (kills > outcomes) r.fail("online calibration state counts more kills than outcomes");
  const double level = r.get<double>();
  if (!std::isfinite(level)) r.fail("online calibration level is not finite");
  // A log-space level only scales, so it must start positive: an additive rule's state may
  // have fallen to or below zero.
  if (options_.log_level && !(level > 0))
    r.fail("online calibration state holds level " + std::to_string(level) +
           ", which a level stepped in log space cannot take (written by the additive rule?)");
  auto levels = r.get_vector<double>(kMaxOnlineExperts);
  auto weights = r.get_vector<double>(kMaxOnlineExperts);
  if (levels.size() != expert_level_.size() || weights.size() != expert_weight_.size())
    r.fail("online calibration state has " + std::to_string(levels.size()) + " experts, the options " +
           std::to_string(expert_level_.size()));
  for (std::size_t k = 0; k < levels.size(); ++k)
    if (!std::isfinite(levels[k]) || !(weights[k] >= 0) || !std::isfinite(weights[k]))
      r.fail("online calibration expert state is not finite");
  std::unordered_map<std::uint32_t, KeyState> keys;
  const auto n_keys = r.get<std::uint64_t>();
  if (n_keys > (1u << 24)) r.fail("online calibration state claims " + std::to_string(n_keys) + " keys");
  for (std::uint64_t i = 0; i < n_keys; ++i) {
    const auto key = r.get<std::uint32_t>();
    KeyState s;
    s.offset = r.get<double>();
    s.n = r.get<std::uint64_t>();
    if (!std::isfinite(s.offset)) r.fail("online calibration key offset is not finite");
    keys[key] = s;
  }
  const auto n_window = r.get<std::uint64_t>();
  if (n_window > options_.window) r.fail("online calibration window holds more outcomes than its size");
  std::deque<Outcome> window;
  for (std::uint64_t i = 0; i < n_window; ++i) {
    Outcome o;
    o.wall_s = r.get<float>();
    o.pred_s = r.get<float>();
    o.requested_s = r.get<float>();
    o.group = r.get<std::uint32_t>();
    if (!std::isfinite(o.wall_s) || !std::isfinite(o.pred_s) || !std::isfinite(o.requested_s))
      r.fail("online calibration window holds a non-finite outcome");
    window.push_back(o);
  }
  const auto since = r.get<std::uint64_t>();
  SafeTtlCalibration c = SafeTtlCalibration::read(r);
  if (c.empty()) r.fail("online calibration state carries an empty calibration");
  outcomes_ = outcomes;
  kills_ = kills;
  global_level_ = level;
  expert_level_ = std::move(levels);
  expert_weight_ = std::move(weights);
  keys_ = std::move(keys);
  window_ = std::move(window);
  since_refit_ = static_cast<std::size_t>(since);
  calibration_ = std::move(c);
}

}  // namespace ttlpred
