#include "learn/learn_json.hpp"

#include <cmath>

#include "learn/duration.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

// NaN has no JSON spelling: null.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json side_json(const ReplaySide& s) {
  return {{"rows", s.rows},
          {"killed", s.killed},
          {"rmse_hours", number(s.rmse_hours)},
          {"kill_rate", number(s.kill_rate)},
          {"mean_safe_ttl_hours", number(s.mean_safe_ttl_hours)}};
}

}  // namespace

json shadow_json(const ShadowScore& s) {
  return {{"rows", s.rows},
          {"rmse_hours", number(s.rmse_hours)},
          {"kill_rate", number(s.kill_rate)},
          {"mean_safe_ttl_hours", number(s.mean_safe_ttl_hours)}};
}

json retrain_json(const RetrainResult& r) {
  return {{"accepted", r.accepted},
          {"reason", r.reason},
          {"from", retrain_start_name(r.start)},
          {"window",
           {{"first_submit", r.window_start_s},
            {"last_submit", r.window_end_s},
            {"outcomes", r.window_rows},
            {"original_rows", r.original_rows},
            {"train_rows", r.train_rows},
            {"holdout_rows", r.holdout_rows}}},
          {"current", shadow_json(r.current)},
          {"candidate", shadow_json(r.candidate)},
          {"without_largest_user",
           r.largest_user.empty() ? json(nullptr)
                                  : json{{"user", r.largest_user},
                                         {"rows", r.largest_user_rows},
                                         {"current", shadow_json(r.current_without_largest)},
                                         {"candidate", shadow_json(r.candidate_without_largest)}}},
          {"seconds", r.seconds}};
}

json replay_json(const ReplayResult& r) {
  const ReplayOptions& o = r.options;
  json weeks = json::array();
  for (const auto& w : r.weeks)
    weeks.push_back({{"start", w.start_s},
                     {"counted", w.retrained.rows >= o.min_window_rows},
                     {"retrained", side_json(w.retrained)},
                     {"frozen", side_json(w.frozen)}});
  json retrains = json::array();
  for (const auto& t : r.retrains) {
    json j = {{"at", t.at_s}, {"ran", t.ran}, {"accepted", t.accepted}, {"reason", t.reason}};
    if (t.ran) {
      j["outcomes"] = t.window_rows;
      j["train_rows"] = t.train_rows;
      j["holdout_rows"] = t.holdout_rows;
      j["killed_outcomes"] = t.killed_rows;
      j["current"] = shadow_json(t.current);
      j["candidate"] = shadow_json(t.candidate);
      j["seconds"] = t.seconds;
    }
    retrains.push_back(std::move(j));
  }
  return {{"options",
           {{"initial_fraction", o.initial_fraction},
            {"retrain_every", duration_text(o.retrain_every_s)},
            {"window", duration_text(o.retrain.window_s)},
            {"from", retrain_start_name(o.retrain.start)},
            {"holdout_fraction", o.retrain.holdout_fraction},
            {"calibration", std::string(online_method_name(o.online.method))},
            {"alpha", o.predictor.alpha},
            {"week_days", o.week_s / 86400.0},
            {"min_window_rows", o.min_window_rows},
            {"kill_limit", o.kill_limit},
            {"killed_as", killed_as_name(o.killed_as)},
            {"kill_margin_s", o.kill_margin_s},
            {"censored_training", o.retrain.fit.censored}}},
          {"initial_rows", r.initial_rows},
          {"scored_start", r.scored_start_s},
          {"retrained", side_json(r.retrained)},
          {"frozen", side_json(r.frozen)},
          {"retrains", r.retrains.size()},
          {"swaps", r.swaps},
          {"weeks_counted", r.weeks_counted},
          {"weeks_within_limit", {{"retrained", r.weeks_within_limit_retrained}, {"frozen", r.weeks_within_limit_frozen}}},
          {"weeks", std::move(weeks)},
          {"retrain_log", std::move(retrains)}};
}

}  // namespace ttlpred
