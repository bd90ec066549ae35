#include "serve/metrics.hpp"

#include <cmath>
#include <type_traits>

#include "serve/job_json.hpp"

namespace ttlpred::serve {

const char* endpoint_name(Endpoint e) {
  switch (e) {
    case Endpoint::Predict: return "predict";
    case Endpoint::Match: return "match";
    case Endpoint::Outcomes: return "outcomes";
    case Endpoint::Healthz: return "healthz";
    case Endpoint::Readyz: return "readyz";
    case Endpoint::Metrics: return "metrics";
    case Endpoint::Reload: return "reload";
    case Endpoint::OpenApi: return "openapi";
    case Endpoint::Started: return "started";
    case Endpoint::Other: return "other";
  }
  return "other";
}

void ServiceMetrics::record(Endpoint e, double seconds, bool error) {
  PerEndpoint& p = per_[static_cast<std::size_t>(e)];
  p.count.fetch_add(1, std::memory_order_relaxed);
  if (error) p.errors.fetch_add(1, std::memory_order_relaxed);
  p.sum_ns.fetch_add(static_cast<std::uint64_t>(std::max(0.0, seconds) * 1e9), std::memory_order_relaxed);
  std::size_t b = 0;
  while (b < kLatencyBuckets.size() && seconds > kLatencyBuckets[b]) ++b;
  p.buckets[b].fetch_add(1, std::memory_order_relaxed);
}

namespace {
// Counters and gauges are kept as integers; the exposition format writes every value as a
// number, so each writer takes any arithmetic type and converts it here, once.
template <class V>
concept MetricValue = std::is_arithmetic_v<V>;

void line(std::string& out, const char* name, const std::string& labels, MetricValue auto value) {
  const double v = static_cast<double>(value);
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  if (std::isnan(v)) {
    out += "NaN";  // the exposition format's spelling (a window with no job of a request)
  } else {
    append_number(out, v);
  }
  out += '\n';
}
std::string escape_label(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '\\' || c == '"') r += '\\';
    if (c == '\n') {
      r += "\\n";
      continue;
    }
    r += c;
  }
  return r;
}

// A series' "# HELP" and "# TYPE" lines.
void help_and_type(std::string& out, const char* name, const char* kind, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += kind;
  out += '\n';
}

// A series without labels: its "# HELP" and "# TYPE" lines and its one value.
void metric(std::string& out, const char* name, const char* kind, const char* help, MetricValue auto v) {
  help_and_type(out, name, kind, help);
  line(out, name, "", v);
}

void render_running(std::string& out, const ServiceMetrics::Gauges& g) {
  // Only a service whose model reads running jobs keeps them: the others scrape as before.
  if (!g.running_tracked) return;
  auto u = [](std::uint64_t v) { return static_cast<double>(v); };
  metric(out, "ttlpred_running_jobs", "gauge", "Jobs started and not yet closed by their outcome.", u(g.running));
  metric(out, "ttlpred_running_capacity", "gauge", "Most running jobs kept (0: no limit; --running-capacity).",
         u(g.running_capacity));
  metric(out, "ttlpred_running_max_age_seconds", "gauge",
         "Age past which a start without an outcome is forgotten (--running-max-age).", g.running_max_age_s);
  metric(out, "ttlpred_running_started_total", "counter", "Starts recorded (/v1/match answers and /v1/started events).",
         u(g.running_started));
  metric(out, "ttlpred_running_closed_total", "counter", "Running jobs closed by their outcome.", u(g.running_closed));
  metric(out, "ttlpred_running_expired_total", "counter",
         "Running jobs forgotten past --running-max-age without an outcome.", u(g.running_expired));
  metric(out, "ttlpred_running_evicted_total", "counter",
         "Running jobs forgotten, earliest start first, to stay within --running-capacity.", u(g.running_evicted));
}

void render_learning(std::string& out, const ServiceMetrics::Gauges& g) {
  auto head = [&](const char* name, const char* kind, const char* help) { help_and_type(out, name, kind, help); };
  auto u = [](std::uint64_t v) { return static_cast<double>(v); };
  head("ttlpred_calibration_info", "gauge",
       "The online safe-TTL calibration method answering (value 1; --calibration).");
  line(out, "ttlpred_calibration_info", "method=\"" + escape_label(g.calibration_method) + '"', 1);
  metric(out, "ttlpred_calibration_level", "gauge",
         "The level the safe TTLs are asked for now (alpha for static; mondrian: a job of an unseen key).",
         g.calibration_level);
  metric(out, "ttlpred_calibration_outcomes_total", "counter", "Matched outcomes the online calibrator learned from.",
         u(g.calibration_outcomes));
  metric(out, "ttlpred_recent_predictions", "gauge", "Jobs whose served prediction awaits its outcome.",
         u(g.recent_predictions));
  metric(out, "ttlpred_recent_predictions_capacity", "gauge", "Most served predictions kept (--recent-predictions).",
         u(g.recent_capacity));
  metric(out, "ttlpred_recent_predictions_evicted_total", "counter",
       "Served predictions overwritten, oldest first, before their outcome came.", u(g.recent_evicted));
  metric(out, "ttlpred_outcomes_matched_total", "counter",
         "Outcomes matched by job_id to the prediction served for them.", u(g.matched));
  head("ttlpred_outcomes_unmatched_total", "counter",
       "Outcomes without a served prediction, by reason (journaled with served: null).");
  line(out, "ttlpred_outcomes_unmatched_total", "reason=\"no_job_id\"", u(g.unmatched_no_id));
  line(out, "ttlpred_outcomes_unmatched_total", "reason=\"unknown_job_id\"", u(g.unmatched_unknown));
  line(out, "ttlpred_outcomes_unmatched_total", "reason=\"older_model\"", u(g.unmatched_older));
  metric(out, "ttlpred_outcomes_repeated_total", "counter",
         "Outcomes of a job_id whose outcome the history had learnt already: journaled, not taught again.",
         u(g.repeated_outcomes));
  struct Figure {
    const char* name;
    const char* help;
    double QualityFigures::*member;
  };
  static const Figure figures[] = {
      {"ttlpred_live_kill_rate", "Share of matched outcomes the served safe TTL killed, by window (NaN: none yet).",
       &QualityFigures::kill_rate},
      {"ttlpred_live_coverage", "Share of matched outcomes that ran no longer than their served safe TTL.",
       &QualityFigures::coverage},
      {"ttlpred_live_rmse_seconds", "RMSE of the served expected wall time, seconds.", &QualityFigures::rmse_s},
      {"ttlpred_live_rmse_hours", "RMSE of the served expected wall time, hours (kept for existing dashboards: "
                                  "ttlpred_live_rmse_seconds in the base unit).", &QualityFigures::rmse_h},
      {"ttlpred_live_mean_log_error", "Mean of ln(expected) - ln(wall) (seconds, floored at 1 s).",
       &QualityFigures::mean_log_error},
      {"ttlpred_live_safe_ttl_over_request", "Sum of served safe TTLs over sum of requests (outcomes with a request).",
       &QualityFigures::safe_over_request},
  };
  if (!g.group_column.empty()) {
    head("ttlpred_live_group_info", "gauge",
         "The job field whose values the group label of the live and drift series names (value 1).");
    line(out, "ttlpred_live_group_info", "column=\"" + escape_label(g.group_column) + '"', 1);
  }
  // Each series over all matched outcomes (no group label), then per group.
  auto series = [&](const char* name, auto value) {
    for (const auto& w : g.live) line(out, name, "window=\"" + w.name + '"', value(w.figures));
    for (const auto& grp : g.live_groups)
      for (const auto& w : grp.windows)
        line(out, name, "window=\"" + w.name + "\",group=\"" + escape_label(grp.group) + '"', value(w.figures));
  };
  head("ttlpred_live_outcomes", "gauge", "Matched outcomes in the window (last 1000, 10000; last hour, day).");
  series("ttlpred_live_outcomes", [&](const QualityFigures& q) { return u(q.outcomes); });
  for (const Figure& f : figures) {
    head(f.name, "gauge", f.help);
    series(f.name, [&](const QualityFigures& q) { return q.*f.member; });
  }
  metric(out, "ttlpred_drift_alarm", "gauge",
         "1 from a drift alarm (Page-Hinkley on the log residuals of matched outcomes) until the next model reload.",
         g.drift_alarm ? 1 : 0);
  metric(out, "ttlpred_drift_alarms_total", "counter", "Drift alarms raised.", u(g.drift_alarms));
  head("ttlpred_drift_info", "gauge",
       "What one drift test watches: all outcomes or each group's (--drift-scope; value 1).");
  line(out, "ttlpred_drift_info", "scope=\"" + escape_label(g.drift_scope) + '"', 1);
  head("ttlpred_drift_statistic", "gauge",
       "The Page-Hinkley statistics (alarm above --drift-threshold); without a group label the largest over the "
       "groups.");
  line(out, "ttlpred_drift_statistic", "direction=\"longer\"", g.drift_up);
  line(out, "ttlpred_drift_statistic", "direction=\"shorter\"", g.drift_down);
  for (const auto& d : g.drift_groups) {
    const std::string label = ",group=\"" + escape_label(d.group) + '"';
    line(out, "ttlpred_drift_statistic", "direction=\"longer\"" + label, d.up);
    line(out, "ttlpred_drift_statistic", "direction=\"shorter\"" + label, d.down);
  }
}

}  // namespace

std::string ServiceMetrics::render(const Gauges& g) const {
  std::string out;
  out.reserve(8192);
  help_and_type(out, "ttlpred_requests_total", "counter", "HTTP requests by endpoint.");
  for (std::size_t e = 0; e < kNumEndpoints; ++e)
    line(out, "ttlpred_requests_total", std::string("endpoint=\"") + endpoint_name(Endpoint(e)) + '"',
         per_[e].count.load());
  help_and_type(out, "ttlpred_request_errors_total", "counter", "Requests answered with a 4xx or 5xx, by endpoint.");
  for (std::size_t e = 0; e < kNumEndpoints; ++e)
    line(out, "ttlpred_request_errors_total", std::string("endpoint=\"") + endpoint_name(Endpoint(e)) + '"',
         per_[e].errors.load());
  help_and_type(out, "ttlpred_request_duration_seconds", "histogram",
                "Time spent handling a request (parse to reply), by endpoint.");
  for (std::size_t e = 0; e < kNumEndpoints; ++e) {
    const std::string ep = std::string("endpoint=\"") + endpoint_name(Endpoint(e)) + '"';
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= kLatencyBuckets.size(); ++b) {
      cumulative += per_[e].buckets[b].load();
      std::string le = ep + ",le=\"";
      if (b < kLatencyBuckets.size()) {
        append_number(le, kLatencyBuckets[b]);
      } else {
        le += "+Inf";
      }
      le += '"';
      line(out, "ttlpred_request_duration_seconds_bucket", le, cumulative);
    }
    line(out, "ttlpred_request_duration_seconds_sum", ep, static_cast<double>(per_[e].sum_ns.load()) * 1e-9);
    line(out, "ttlpred_request_duration_seconds_count", ep, cumulative);
  }
  metric(out, "ttlpred_predictions_total", "counter", "Jobs predicted (a batch counts each job).", predictions_.load());
  metric(out, "ttlpred_outcomes_total", "counter", "Finished jobs journaled and added to the history.",
         outcomes_.load());
  metric(out, "ttlpred_outcomes_rate_limited_total", "counter",
         "Requests to /v1/outcomes and /v1/started refused (429): their client was over --outcome-rate.",
         rate_limited_.load());
  help_and_type(out, "ttlpred_model_reloads_total", "counter", "Model reloads by result.");
  line(out, "ttlpred_model_reloads_total", "result=\"ok\"", reloads_ok_.load());
  line(out, "ttlpred_model_reloads_total", "result=\"refused\"", reloads_failed_.load());
  help_and_type(out, "ttlpred_model_info", "gauge", "The model being served (value 1).");
  line(out, "ttlpred_model_info", "version=\"" + escape_label(g.model_version) + '"', 1);
  metric(out, "ttlpred_history_observed_jobs", "gauge", "Finished jobs in the history state.", g.history_observed);
  metric(out, "ttlpred_history_keys", "gauge", "Distinct history keys tracked.", g.history_keys);
  metric(out, "ttlpred_history_capacity", "gauge", "Most history keys kept (0: no limit; --history-capacity).",
         g.history_capacity);
  metric(out, "ttlpred_history_evicted_keys_total", "counter",
         "History keys dropped, least recently updated first, to stay within the capacity.",
         g.history_evicted);
  render_running(out, g);
  metric(out, "ttlpred_journal_outcomes_since_snapshot", "gauge", "Outcomes a restart would replay.",
         g.journal_since_snapshot);
  metric(out, "ttlpred_snapshot_failures_total", "counter",
         "History snapshots that could not be written (retried with the next batch; the journal keeps the outcomes).",
         g.snapshot_failures);
  render_learning(out, g);
  render_retrain(out);
  return out;
}

void ServiceMetrics::add_retrain(const RetrainRecord& r) {
  (r.accepted ? retrains_accepted_ : retrains_refused_).fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(last_retrain_mutex_);
  last_retrain_ = r;
  has_last_retrain_ = true;
}

void ServiceMetrics::render_retrain(std::string& out) const {
  if (!retrain_enabled_.load()) return;
  auto u = [](std::uint64_t v) { return static_cast<double>(v); };
  help_and_type(out, "ttlpred_retrains_total", "counter",
                "Retrains by the shadow evaluation's decision (failed: could not run).");
  line(out, "ttlpred_retrains_total", "result=\"accepted\"", u(retrains_accepted_.load()));
  line(out, "ttlpred_retrains_total", "result=\"refused\"", u(retrains_refused_.load()));
  line(out, "ttlpred_retrains_total", "result=\"failed\"", u(retrains_failed_.load()));
  help_and_type(out, "ttlpred_retrain_swaps_total", "counter",
                "Accepted candidates swapped in through the reload path, by result.");
  line(out, "ttlpred_retrain_swaps_total", "result=\"ok\"", u(swaps_ok_.load()));
  line(out, "ttlpred_retrain_swaps_total", "result=\"refused\"", u(swaps_refused_.load()));
  metric(out, "ttlpred_retrain_running", "gauge", "1 while a retrain is training or evaluating.",
         retrain_running_.load() ? 1 : 0);
  std::lock_guard lock(last_retrain_mutex_);
  if (!has_last_retrain_) return;
  const RetrainRecord& r = last_retrain_;
  metric(out, "ttlpred_retrain_last_accepted", "gauge", "The last decision: 1 accepted, 0 refused.",
         r.accepted ? 1 : 0);
  metric(out, "ttlpred_retrain_last_timestamp_seconds", "gauge", "When the last decision was made (unix seconds).",
         r.at_unix);
  metric(out, "ttlpred_retrain_last_duration_seconds", "gauge",
         "Training and shadow evaluation time of the last retrain.", r.seconds);
  metric(out, "ttlpred_retrain_last_outcomes", "gauge", "Outcomes in the last retrain's window.", u(r.outcomes));
  help_and_type(out, "ttlpred_retrain_last_rmse_hours", "gauge",
                "RMSE on the held-out outcomes of the last retrain, by model.");
  line(out, "ttlpred_retrain_last_rmse_hours", "model=\"current\"", r.current_rmse_hours);
  line(out, "ttlpred_retrain_last_rmse_hours", "model=\"candidate\"", r.candidate_rmse_hours);
  help_and_type(out, "ttlpred_retrain_last_kill_rate", "gauge",
                "Kill rate of the static safe TTL on the held-out outcomes, by model.");
  line(out, "ttlpred_retrain_last_kill_rate", "model=\"current\"", r.current_kill_rate);
  line(out, "ttlpred_retrain_last_kill_rate", "model=\"candidate\"", r.candidate_kill_rate);
}

}  // namespace ttlpred::serve
