// Service: start-up, the answers (/v1/predict, /v1/match) and their safe TTLs, health.
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

// Adds job i's served prediction to `entries` when the job has a job_id.
void keep_served(Scratch& s, std::size_t i) {
  if (const auto key = job_key(s.records[i])) s.entries.push_back({*key, s.served[i]});
}


void append_prediction(std::string& out, const Prediction& p) {
  out += "{\"expected_wall_s\":";
  append_number(out, p.expected_wall_s);
  out += ",\"safe_ttl_s\":";
  append_number(out, p.safe_ttl_s);
  out += p.capped ? ",\"capped\":true}" : ",\"capped\":false}";
}

}  // namespace

Service::Service(ServiceOptions options)
    : options_(std::move(options)),
      recent_(options_.recent_predictions),
      taught_(options_.recent_predictions),
      drift_(options_.drift) {
  if (options_.max_batch == 0) throw Error("--max-batch must be at least 1");
  if (!(options_.max_outcome_wall_s > 0) || !std::isfinite(options_.max_outcome_wall_s))
    throw Error("--max-outcome-wall must be a finite number of seconds > 0");
  if (options_.history_capacity != 0 && options_.history_capacity < 100)
    throw Error("--history-capacity must be 0 (no limit) or at least 100 keys");
  if (std::isnan(options_.outcome_kill_margin_s) || !std::isfinite(options_.outcome_kill_margin_s))
    throw Error("--outcome-kill-margin must be a finite number of seconds (negative: no check against the request)");
  if (!(options_.running_max_age_s > 0) || !(options_.running_max_age_s <= kMaxHistoryWallS))
    throw Error("--running-max-age must be a number of seconds in (0, 1e7]");
  if (options_.calibration.method == OnlineMethod::Mondrian) {
    calibration_key_ = field_by_name(options_.calibration_key);
    if (!calibration_key_ || info(*calibration_key_).kind != FieldKind::Category)
      throw Error("--calibration-key '" + options_.calibration_key + "' is not a categorical job field (user, queue, job_type ...)");
  }
  auto model = load_model(options_.model_path, options_.predictor, options_.max_model_bytes);
  policy_.emplace(make_policy(*model));
  const HistoryConfig& cfg = model->predictor.encoder().history_config();
  std::string learned_version;  // the model the snapshot's learned state was learned under
  if (!options_.journal_dir.empty()) {
    journal_ = std::make_unique<OutcomeJournal>(options_.journal_dir);
    if (auto snap = journal_->snapshot_path()) {
      history_.emplace(HistoryState::load(*snap));
      if (!(history_->config() == cfg))
        throw Error(*snap + ": the history snapshot's configuration differs from the model's; use a fresh --journal folder");
      learned_version = load_learned(OutcomeJournal::learned_path(*snap), model);
    }
  }
  if (!history_) history_.emplace(model->predictor.initial_history());
  history_->set_capacity(options_.history_capacity);  // before the replay: bounded throughout
  history_->set_running_limits(options_.running_capacity, options_.running_max_age_s);
  tracks_running_ = cfg.running_stats();
  if (journal_) {
    JobRecord r;
    std::string served_version = learned_version;
    replayed_ = journal_->replay([&](std::string_view text, const std::string& file, std::size_t line) {
      if (options_.stop && options_.stop->load(std::memory_order_relaxed))
        throw Error("stopped by a signal during the journal replay (at " + file + ":" + std::to_string(line) +
                    "); the journal is unchanged");
      try {
        json line = parse_body(text);
        if (is_started_line(line)) {
          const StartedLine start = read_started_line(line, r);
          if (tracks_running_) apply_start(*job_key(r), r, start.start_s, start.received_at);
          return;
        }
        const OutcomeRecord rec = read_outcome_record(std::move(line));
        job_from_json(rec.outcome, JobUse::Outcome, -1, r);
        close_run(r);
        if (first_outcome(r)) history_->observe(r);
        if (rec.served) {
          const double wall = r[Field::WallTime];
          // Served by another model than the outcome before (or than the snapshot's): a reload
          // came between them, and restarted the drift tests as it does now.
          const std::string_view version(rec.served->model_version.data(), rec.served->model_version.size());
          if (!served_version.empty() && version != served_version) restart_drift_tests();
          served_version = version;
          learn_calibration(*rec.served, wall);
          learn_quality(*model, *rec.served, wall, rec.received_at.value_or(rec.served->predicted_at), false,
                        version == model->version);
        }
      } catch (const RequestError& e) {
        throw InputError(file, line, e.what());
      }
    });
    // The journal ends under another model than this start's (a reload or a retrain swap
    // came before the restart): its residuals are not this model's.
    if (!served_version.empty() && served_version != model->version) restart_drift_tests();
  }
  model_.store(std::move(model));
  ready_.store(true);
}

double Service::now() const { return options_.clock ? options_.clock() : unix_now(); }

TtlPolicy Service::make_policy(const LoadedModel& model) const {
  TtlPolicy policy(model.predictor, options_.calibration);
  if (options_.calibration.method != OnlineMethod::Static && !policy.calibrated())
    log_event("warn", "calibration_off",
              {{"model_version", model.version},
               {"message", model.path + " has no safe-TTL calibration: its answers are the expected wall times, "
                                        "and the " + std::string(online_method_name(options_.calibration.method)) +
                                        " calibration stays off"}});
  return policy;
}

void Service::calibrate(const LoadedModel& model, std::span<const JobRecord> jobs, std::span<Prediction> preds,
                        std::span<ServedPrediction> served) const {
  const double at = now();
  std::array<char, 16> version{};
  std::copy_n(model.version.data(), std::min(model.version.size(), version.size()), version.begin());
  const OnlineMethod method = policy_->learns() ? policy_->method() : OnlineMethod::Static;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ServedPrediction& s = served[i];
    s.predicted_at = at;
    s.model_version = version;
    s.method = method;
    s.decision = policy_->decide(preds[i], jobs[i][Field::RequestedTtl],
                                 calibration_key_ ? TtlPolicy::text_key(jobs[i].text(*calibration_key_)) : 0,
                                 TtlPolicy::text_key(jobs[i].text(Field::User)));
  }
}

void Service::count_answers(std::span<const RecentPredictions::Entry> entries) {
  if (!options_.calibration.batch_guard || entries.empty()) return;  // nothing to count: no lock
  std::shared_lock lock(history_mutex_);  // a reload may swap the policy's calibration
  if (!policy_ || !policy_->learns()) return;
  for (const auto& e : entries)
    if (e.served.method == policy_->method() && !recent_.find(e.key)) policy_->answered(e.served.decision);
}

Reply Service::predict(std::string_view body) {
  struct Release {
    std::size_t body_bytes;
    ~Release() { release_buffers(body_bytes); }
  } release{body.size()};
  return guarded([&]() -> Reply {
    const JobReader::Jobs jobs = reader().read(body, JobUse::Predict, options_.max_batch, scratch(0).records);
    const std::size_t n = jobs.count;
    const bool single = jobs.single;
    Scratch& s = scratch(n);
    std::shared_ptr<const LoadedModel> model;
    {
      std::shared_lock lock(history_mutex_);
      model = model_.load();  // under the lock: the policy answers through this model's table
      model->predictor.predict(std::span<const JobRecord>(s.records.data(), n), *history_,
                               std::span<Prediction>(s.predictions.data(), n));
      calibrate(*model, std::span<const JobRecord>(s.records.data(), n), std::span<Prediction>(s.predictions.data(), n),
                std::span<ServedPrediction>(s.served.data(), n));
    }
    // Kept before the answer goes out, so that the job's outcome, however soon, finds it.
    s.entries.clear();
    for (std::size_t i = 0; i < n; ++i) keep_served(s, i);
    count_answers(s.entries);
    recent_.record(s.entries);
    metrics_.add_predictions(n);
    std::string out;
    out.reserve(64 + n * 64);
    if (single) {
      append_prediction(out, s.predictions[0]);
      out.pop_back();
      out += ",\"model_version\":\"";
      out += model->version;
      out += "\"}";
    } else {
      out += "{\"model_version\":\"";
      out += model->version;
      out += "\",\"predictions\":[";
      for (std::size_t i = 0; i < n; ++i) {
        if (i) out += ',';
        append_prediction(out, s.predictions[i]);
      }
      out += "]}";
    }
    return {200, std::move(out)};
  });
}

Reply Service::match(std::string_view body) {
  struct Release {
    std::size_t body_bytes;
    ~Release() { release_buffers(body_bytes); }
  } release{body.size()};
  return guarded([&]() -> Reply {
    const JobReader::Match req = reader().read_match(body, options_.max_batch, scratch(0).records);
    const JobRecord& slot = req.slot;
    const std::size_t n = req.count;
    const std::string_view order = req.order;
    const std::size_t limit = req.limit;

    Scratch& s = scratch(n);
    // A model made for match time predicts each job as of this match: it has waited from its
    // submission until now, and it sees the jobs running now (docs/service.md, "Prediction time").
    const bool at_match = tracks_running_;
    const double match_time = at_match ? now() : 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      JobRecord& r = s.records[i];
      // The slot's host fields are what the job would run on: predict with them.
      for (const FieldInfo& f : kFields) {
        if (f.phase != Phase::Match || !slot.known(f.field)) continue;
        if (f.kind == FieldKind::Category) {
          r.text(f.field) = slot.text(f.field);
        } else {
          r[f.field] = slot[f.field];
        }
      }
      if (at_match && r.known(Field::SubmitTime)) r[Field::WaitTime] = std::max(0.0, match_time - r[Field::SubmitTime]);
    }
    std::shared_ptr<const LoadedModel> model;
    {
      std::shared_lock lock(history_mutex_);
      model = model_.load();
      model->predictor.predict(std::span<const JobRecord>(s.records.data(), n), *history_,
                               std::span<Prediction>(s.predictions.data(), n));
      calibrate(*model, std::span<const JobRecord>(s.records.data(), n), std::span<Prediction>(s.predictions.data(), n),
                std::span<ServedPrediction>(s.served.data(), n));
    }
    metrics_.add_predictions(n);
    s.entries.clear();

    s.order.resize(n);
    std::iota(s.order.begin(), s.order.end(), std::size_t{0});
    auto num_or = [&](std::size_t i, Field f, double fallback) {
      return s.records[i].known(f) ? s.records[i][f] : fallback;
    };
    if (order == "price")  // highest price first; unknown price last
      std::stable_sort(s.order.begin(), s.order.end(), [&](std::size_t a, std::size_t b) {
        return num_or(a, Field::Price, -1) > num_or(b, Field::Price, -1);
      });
    if (order == "age")  // oldest submission first; unknown submit time last
      std::stable_sort(s.order.begin(), s.order.end(), [&](std::size_t a, std::size_t b) {
        return num_or(a, Field::SubmitTime, 1e300) < num_or(b, Field::SubmitTime, 1e300);
      });

    const double time_left = slot[Field::SlotTimeLeft];
    const double cores = slot.known(Field::SlotCores) ? slot[Field::SlotCores] : 1e300;
    std::string out;
    out.reserve(96 + n * 96);
    out += "{\"model_version\":\"";
    out += model->version;
    out += "\",\"matches\":[";
    std::size_t matched = 0, first = n;
    for (std::size_t k = 0; k < n && matched < limit; ++k) {
      const std::size_t i = s.order[k];
      const Prediction& p = s.predictions[i];
      const double need_cores = num_or(i, Field::CpuCores, 1);
      if (!(p.safe_ttl_s <= time_left) || need_cores > cores) continue;
      keep_served(s, i);  // only a matched job was given this TTL
      if (matched == 0) first = i;
      if (matched++) out += ',';
      out += "{\"index\":";
      out += std::to_string(i);
      if (const std::string& id = reader().job_id_json(i); !id.empty()) {
        out += ",\"job_id\":";
        out += id;  // exactly as sent: a double would round 64-bit identifiers
      }
      out += ',';
      std::string pred;
      append_prediction(pred, p);
      out.append(pred, 1);  // without its opening brace: the fields join this object
    }
    out += "],\"considered\":";
    out += std::to_string(n);
    out += '}';
    count_answers(s.entries);
    recent_.record(s.entries);
    if (at_match && first < n && !reader().job_id_json(first).empty())
      record_match_start(s.records[first], reader().job_id_json(first), match_time);
    return {200, std::move(out)};
  });
}

Reply Service::healthz() const { return {200, "{\"status\":\"ok\"}"}; }

Reply Service::readyz() const {
  if (!ready_.load()) return {503, "{\"ready\":false}"};
  return {200, "{\"ready\":true,\"model_version\":\"" + model_version() + "\"}"};
}

std::uint64_t Service::history_observed() const {
  std::shared_lock lock(history_mutex_);
  return history_->observed();
}

}  // namespace ttlpred::serve
