// Service: its models and learned state: loading and reloading a model, the snapshot of what
// it learned, the figures /metrics reads.
#include "serve/service.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/trace_readers.hpp"
#include "features/key_hash.hpp"
#include "serve/event_log.hpp"
#include "serve/job_json.hpp"
#include "serve/outcome_record.hpp"
#include "serve/running_jobs.hpp"
#include "serve/service_handlers.hpp"
#include "util/binary_io.hpp"
#include "util/file_io.hpp"

namespace ttlpred::serve {

using namespace detail;

namespace {

using nlohmann::json;

std::string fnv1a_hex(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

constexpr std::string_view kLearnedMagic = "TTLPLRN1";
// 1: the live windows and the drift test over all outcomes; 2 adds the per-group windows and
// drift tests (live_groups.hpp) after the alarm count; 3 the job ids whose outcome was taught
// (taught_outcomes.hpp) before the calibration. Older states still load (what they lack
// starts empty).
constexpr std::uint32_t kLearnedVersion = 3;

void append_json_string(std::string& out, const std::string& s) {
  out += json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::shared_ptr<const LoadedModel> load_model(const std::string& path, const PredictorOptions& options,
                                              std::uint64_t max_bytes) {
  // The header first: a file that is no model, or is padded past its payload, is refused
  // after one small read instead of after reading (and holding) all of it.
  const std::vector<std::uint8_t> bytes = read_regular_file(
      path, max_bytes,
      [&](const std::vector<std::uint8_t>& head, std::uint64_t size) {
        check_container_head(head, size, std::string_view(kModelFileMagic, 8), kModelFileVersion, path);
      },
      kContainerHeaderBytes);
  auto m = std::make_shared<LoadedModel>(
      LoadedModel{Predictor(parse_model_file(bytes, path), options, path), fnv1a_hex(bytes), path});
  // Warm up this thread's buffers and the plan once, so a broken plan fails here, not on
  // the first request.
  JobRecord probe;
  Prediction out;
  const HistoryState empty = m->predictor.initial_history();
  m->predictor.predict(std::span<const JobRecord>(&probe, 1), empty, std::span<Prediction>(&out, 1));
  return m;
}

void Service::save_snapshot(const std::string& history_path) const {
  // The learned state first: whenever a snapshot's history exists, so does its state.
  const std::string path = OutcomeJournal::learned_path(history_path);
  BinaryWriter w;
  w.put_string(model_.load()->version);
  quality_.write_state(w);
  drift_.write_all_state(w);
  w.put<std::uint8_t>(drift_raised_ ? 1 : 0);
  w.put<std::uint64_t>(drift_alarms_);
  group_quality_.write_state(w);
  drift_.write_group_state(w);
  taught_.write(w);
  w.put<std::uint8_t>(policy_->learns() ? 1 : 0);
  if (policy_->learns()) policy_->write_state(w);
  write_file_atomic(path, seal_container(kLearnedMagic, kLearnedVersion, w.bytes()));
  try {
    history_->save(history_path);
  } catch (...) {
    // A learned state without its history is never read (the history names the snapshot);
    // removed so that a failed snapshot leaves the folder as it found it.
    std::error_code ec;
    std::filesystem::remove(path, ec);
    throw;
  }
}

void Service::restart_drift_tests() {
  drift_.reset();
  drift_raised_ = false;
}

std::string Service::load_learned(const std::string& path, const std::shared_ptr<const LoadedModel>& model) {
  // A snapshot written before the service learned anything but the history has none.
  if (!std::filesystem::exists(path)) return {};
  const OpenedContainer c = open_container(read_file_bytes(path), kLearnedMagic, kLearnedVersion, path);
  BinaryReader r(c.payload, path);
  const std::string version = r.get_string(64);
  quality_.read_state(r);
  drift_.read_all_state(r);
  drift_raised_ = r.get<std::uint8_t>() != 0;
  drift_alarms_ = r.get<std::uint64_t>();
  if (c.version >= 2) {
    group_quality_.read_state(r);
    drift_.read_group_state(r);
  }
  if (c.version >= 3) taught_.read(r);
  const bool had = r.get<std::uint8_t>() != 0;
  if (!had || !policy_->learns()) return version;  // the calibration was off then, or is now: start from the model's level
  try {
    TtlPolicy restored = *policy_;
    restored.read_state(r);
    if (version != model->version) restored.rebase(model->predictor.model().safe_ttl);  // as a reload would
    policy_ = std::move(restored);
  } catch (const Error& e) {
    // Another --calibration or --alpha than the state was learned with: the learned level
    // answers another question. Start from the model's, and say so.
    log_event("warn", "calibration_not_restored", {{"path", path}, {"message", e.what()}});
  }
  return version;
}

void Service::snapshot_now() {
  std::lock_guard order(outcomes_mutex_);
  std::shared_lock lock(history_mutex_);
  if (journal_)
    journal_->snapshot([&](const std::string& path) { save_snapshot(path); });
}

double Service::calibration_level() const {
  std::shared_lock lock(history_mutex_);
  return policy_->level();
}

OnlineMethod Service::calibration_method() const {
  std::shared_lock lock(history_mutex_);
  return policy_->learns() ? policy_->method() : OnlineMethod::Static;
}

std::uint64_t Service::drift_alarms() const {
  std::lock_guard lock(outcomes_mutex_);
  return drift_alarms_;
}

Service::DriftStanding Service::drift_standing() const {
  std::lock_guard lock(outcomes_mutex_);
  // A state restored from a snapshot has no last alarm: the test's own minimum stands in.
  return {drift_raised_, matched_ + unmatched_no_id_ + unmatched_unknown_ + unmatched_older_,
          std::max(drift_.last_alarm().test.count, options_.drift.min_outcomes)};
}

Reply Service::metrics_text() const {
  ServiceMetrics::Gauges g;
  g.model_version = model_version();
  {
    std::shared_lock lock(history_mutex_);
    g.history_observed = history_->observed();
    g.history_keys = history_->keys_tracked();
    g.history_capacity = history_->capacity();
    g.history_evicted = history_->evicted();
    g.running_tracked = tracks_running_;
    g.running = history_->running();
    g.running_capacity = history_->running_capacity();
    g.running_max_age_s = history_->running_max_age();
    g.running_expired = history_->running_expired();
    g.running_evicted = history_->running_evicted();
  }
  {
    std::shared_lock lock(history_mutex_);
    g.calibration_method = policy_->learns() ? policy_->name() : std::string(online_method_name(OnlineMethod::Static));
    g.calibration_level = policy_->level();
    g.calibration_outcomes = policy_->learns() ? policy_->outcomes() : 0;
  }
  g.recent_predictions = recent_.size();
  g.recent_capacity = recent_.capacity();
  g.recent_evicted = recent_.evicted();
  {
    std::lock_guard order(outcomes_mutex_);
    g.journal_since_snapshot = journal_ ? journal_->since_snapshot() : 0;
    g.snapshot_failures = snapshot_failures_;
    g.matched = matched_;
    g.unmatched_no_id = unmatched_no_id_;
    g.unmatched_unknown = unmatched_unknown_;
    g.unmatched_older = unmatched_older_;
    g.repeated_outcomes = repeated_outcomes_;
    g.running_started = running_started_;
    g.running_closed = running_closed_;
    const double t = now();
    auto windows = [&](const LiveQuality& q) {
      return std::vector<ServiceMetrics::Gauges::Window>{{"1000", q.last(kCountWindows[0])},
                                                  {"10000", q.last(kCountWindows[1])},
                                                  {"1h", q.within(t, kTimeWindowsS[0])},
                                                  {"1d", q.within(t, kTimeWindowsS[1])}};
    };
    g.live = windows(quality_);
    g.group_column = live_group_column(model()->predictor);
    for (const auto& [name, q] : group_quality_.entries()) g.live_groups.push_back({name, windows(q)});
    g.drift_alarm = drift_raised_;
    g.drift_alarms = drift_alarms_;
    g.drift_scope = drift_scope_name(drift_.options().scope);
    g.drift_up = drift_.up();
    g.drift_down = drift_.down();
    if (drift_.options().scope == DriftScope::Group)
      for (const auto& [name, test] : drift_.groups().entries())
        if (!name.empty()) g.drift_groups.push_back({name, test.up(), test.down()});  // "": an ungrouped model's one test
  }
  return {200, metrics_.render(g), "text/plain; version=0.0.4"};
}

std::string Service::reload_from(const std::string& path) {
  std::lock_guard guard(reload_mutex_);
  try {
    auto fresh = load_model(path, options_.predictor, options_.max_model_bytes);
    {
      std::shared_lock lock(history_mutex_);
      if (!(fresh->predictor.encoder().history_config() == history_->config()))
        throw Error(path + ": its history features differ from the running state's; restart with a fresh --journal");
    }
    // The jobs the broker sends are of the kind the running model was trained on; a model of
    // another trace format reads them through fields it never saw (pipeline/model_checks.hpp).
    const TrainingProvenance& now = model()->predictor.model().provenance;
    const TrainingProvenance& next = fresh->predictor.model().provenance;
    if (other_trace_formats(now.trace_format, next.trace_format))
      throw Error(path + ": trained on a " + next.trace_format + " trace, the running model on a " + now.trace_format +
                  " trace: another kind of job; restart the service to change schema");
    const std::string previous = model()->version;
    {
      // The outcomes' lock first, as outcomes() takes them: no outcome is half applied across
      // the swap.
      std::lock_guard order(outcomes_mutex_);
      std::unique_lock lock(history_mutex_);
      // The policy keeps what it learned and answers through the new model's table
      // (docs/service.md, "Online calibration": why keep, not reset); a model without a
      // table gets a policy that learns nothing, and the log says so.
      if (policy_->learns() && !fresh->predictor.model().safe_ttl.empty())
        policy_->rebase(fresh->predictor.model().safe_ttl);
      else
        policy_.emplace(make_policy(*fresh));
      // The alarm was about the model now replaced, and the tests' means were its residuals'
      // (the live windows go on; per-group ones only while the groups are of one column).
      restart_drift_tests();
      if (live_group_column(model()->predictor) != live_group_column(fresh->predictor)) group_quality_.clear();
      model_.store(fresh);
    }
    metrics_.add_reload(true);
    log_event("info", "reload", {{"path", path}, {"model_version", fresh->version}, {"previous_version", previous}});
    return {};
  } catch (const std::exception& e) {
    metrics_.add_reload(false);
    log_event("warn", "reload_refused", {{"path", path}, {"model_version", model()->version}, {"message", e.what()}});
    return e.what();
  }
}

Reply Service::reload(std::string_view body) {
  return guarded([&]() -> Reply {
    std::string path = options_.model_path;
    if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      const json j = parse_body(body);
      if (!j.is_object()) throw RequestError(400, "the body must be empty or {\"path\": \"...\"}");
      for (const auto& [key, value] : j.items()) {
        if (key != "path") throw RequestError(400, "unknown field '" + shown_key(key) + "' (expected path)", shown_key(key));
        if (!value.is_string()) throw RequestError(400, "field 'path' must be a string", "path");
        path = value.get<std::string>();
        // The system call would read the path only up to the NUL: another file than named.
        if (path.find('\0') != std::string::npos) throw RequestError(400, "field 'path' holds a NUL character", "path");
      }
    }
    const std::string why = reload_from(path);
    if (!why.empty())
      return {422, "{\"reloaded\":false,\"error\":" + json(why).dump(-1, ' ', false, json::error_handler_t::replace) +
                       ",\"model_version\":\"" + model_version() + "\"}"};
    std::string out = "{\"reloaded\":true,\"model_version\":\"" + model_version() + "\",\"path\":";
    append_json_string(out, path);
    out += '}';
    return {200, std::move(out)};
  });
}

}  // namespace ttlpred::serve
