// Service: what outcomes and starts teach (/v1/outcomes, /v1/started), journaled before
// they are acknowledged.
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

std::string format_number(double v) {
  std::string s;
  append_number(s, v);
  return s;
}

}  // namespace

Reply Service::outcomes(std::string_view body) {
  return guarded([&]() -> Reply {
    const json j = parse_json_batch(body, options_.max_batch, "outcomes",
                                    "the body must be an outcome object or an array of them");
    const bool single = j.is_object();
    const std::size_t n = single ? 1 : j.size();
    // Validate the whole batch first: it is applied all or nothing.
    std::vector<JobRecord> records(n);
    for (std::size_t i = 0; i < n; ++i) {
      const json& o = single ? j : j[i];
      const long index = single ? -1 : static_cast<long>(i);
      job_from_json(o, JobUse::Outcome, index, records[i]);
      check_outcome_bounds(records[i], index);
    }
    std::uint64_t observed = 0, repeated_now = 0;
    bool durable = false;
    {
      // The journal lock orders appends and applies alike, so a replay rebuilds exactly this
      // state; the history lock is only taken to apply, so predictions never wait for a disk
      // flush.
      std::lock_guard order(outcomes_mutex_);
      const double received = now();
      const auto model = model_.load();
      // Each outcome's served prediction (docs/service.md, "Served predictions"): known when
      // its job_id was answered by the model serving now and not already matched (a job id
      // twice in one batch matches once).
      std::vector<std::optional<ServedPrediction>> served(n);
      std::vector<std::uint64_t> found;
      std::unordered_set<std::uint64_t> seen;
      std::uint64_t no_id = 0, unknown = 0, older = 0, repeated = 0;
      // Whether each outcome teaches the history: the first of its job_id (taught_outcomes.hpp).
      // Remembered only once journaled, so that an outcome refused by a failing disk is new
      // when it is sent again.
      std::vector<std::uint8_t> teach(n, 1);
      std::string lines;
      for (std::size_t i = 0; i < n; ++i) {
        const auto key = job_key(records[i]);
        if (key && (taught_.contains(*key) || seen.contains(*key))) {
          teach[i] = 0;
          ++repeated;
        }
        if (!key) {
          ++no_id;
        } else if (auto hit = seen.insert(*key).second ? recent_.find(*key) : std::nullopt; !hit) {
          ++unknown;
        } else {
          found.push_back(*key);
          if (std::string_view(hit->model_version.data(), hit->model_version.size()) == model->version) {
            served[i] = *hit;
          } else {
            ++older;  // its TTL came from another model's calibration
          }
        }
        append_outcome_line(lines, single ? j : j[i], received, model->version, served[i]);
      }
      if (journal_) {
        journal_->append(lines, n);  // on disk before anything is acknowledged or applied
        durable = true;
      }
      for (const std::uint64_t key : found) recent_.erase(key);
      for (std::size_t i = 0; i < n; ++i)
        if (const auto key = job_key(records[i]); key && teach[i]) taught_.remember(*key);
      {
        std::unique_lock lock(history_mutex_);
        for (std::size_t i = 0; i < n; ++i) {
          if (close_run(records[i])) ++running_closed_;
          if (teach[i]) history_->observe(records[i]);
          if (served[i]) learn_calibration(*served[i], records[i][Field::WallTime]);
        }
        observed = history_->observed();
      }
      for (std::size_t i = 0; i < n; ++i)
        if (served[i]) learn_quality(*model, *served[i], records[i][Field::WallTime], received, true);
      matched_ += found.size() - older;
      unmatched_no_id_ += no_id;
      unmatched_unknown_ += unknown;
      unmatched_older_ += older;
      repeated_outcomes_ += repeated;
      repeated_now = repeated;
      if (journal_ && options_.snapshot_every > 0 && journal_->since_snapshot() >= options_.snapshot_every) {
        std::shared_lock lock(history_mutex_);  // predictions go on while the snapshot is written
        try {
          journal_->snapshot([&](const std::string& path) { save_snapshot(path); });
        } catch (const std::exception& e) {
          // The outcomes are journaled and applied: acknowledge them. The journal keeps
          // growing until a snapshot succeeds.
          ++snapshot_failures_;
          log_event("error", "snapshot_failed",
                    {{"message", std::string("history snapshot failed (will retry): ") + e.what()}});
        }
      }
    }
    metrics_.add_outcomes(n);
    std::string out = "{\"accepted\":" + std::to_string(n) + ",\"repeated\":" + std::to_string(repeated_now) +
                      ",\"history_observed\":" + std::to_string(observed) +
                      ",\"durable\":" + (durable ? "true" : "false") + "}";
    return {200, std::move(out), "application/json", n};
  });
}

Reply Service::started(std::string_view body) {
  return guarded([&]() -> Reply {
    const double received = now();
    const std::vector<StartedJob> jobs = read_started_body(body, options_.max_batch, received, options_.running_max_age_s);
    const std::size_t n = jobs.size();
    bool durable = false;
    std::size_t running = 0;
    if (tracks_running_) {
      // Every writer of the running set holds the journal lock: what is checked here holds
      // when it is applied.
      std::lock_guard order(outcomes_mutex_);
      std::string lines;
      {
        std::shared_lock lock(history_mutex_);
        for (std::size_t i = 0; i < n; ++i) {
          if (history_->is_running(*job_key(jobs[i].record)))
            throw RequestError(409, "field 'job_id': the job is running already (started, and no outcome yet)" +
                                        (jobs[i].index < 0 ? std::string() : " (job " + std::to_string(i) + ")"),
                               "job_id", jobs[i].index);
          append_started_line(lines, jobs[i].object.at("job_id").dump(), jobs[i].record, jobs[i].start_s, received);
        }
      }
      if (journal_) {
        journal_->append(lines, n);  // on disk before anything is acknowledged or applied
        durable = true;
      }
      std::unique_lock lock(history_mutex_);
      for (const StartedJob& j : jobs) apply_start(*job_key(j.record), j.record, j.start_s, received);
      running_started_ += n;
      running = history_->running();
    }
    std::string out = "{\"accepted\":" + std::to_string(n) + ",\"recorded\":" + (tracks_running_ ? "true" : "false") +
                      ",\"running\":" + std::to_string(running) + ",\"durable\":" + (durable ? "true" : "false") + "}";
    return {200, std::move(out), "application/json", n};
  });
}

void Service::apply_start(std::uint64_t id, const JobRecord& job, double start_s, double received_at) {
  history_->prune_running(received_at);
  history_->stop_running(id);  // a job matched again was lost by its first pilot: it runs from now
  history_->start_running(id, job_keys(job), start_s, history_->config().amounts_of(job));
}

void Service::record_match_start(const JobRecord& job, std::string_view job_id_json, double match_time) {
  std::string line;
  append_started_line(line, job_id_json, job, match_time, match_time);
  std::lock_guard order(outcomes_mutex_);
  if (journal_) journal_->append(line, 1, options_.sync_starts);  // before the answer that hands the job out
  std::unique_lock lock(history_mutex_);
  apply_start(*job_key(job), job, match_time, match_time);
  ++running_started_;
}

bool Service::first_outcome(const JobRecord& outcome) {
  const auto key = job_key(outcome);
  if (!key) return true;
  if (taught_.contains(*key)) {
    ++repeated_outcomes_;
    return false;
  }
  taught_.remember(*key);
  return true;
}

bool Service::close_run(const JobRecord& outcome) {
  if (!tracks_running_) return false;
  const auto id = job_key(outcome);
  return id && history_->stop_running(*id);
}

void Service::check_outcome_bounds(const JobRecord& r, long index) const {
  const double wall = r[Field::WallTime];
  auto refuse = [&](const std::string& why) {
    std::string msg = "field 'wall_s' " + why;
    if (index >= 0) msg += " (job " + std::to_string(index) + ")";
    throw RequestError(400, msg, "wall_s", index);
  };
  if (wall > options_.max_outcome_wall_s)
    refuse("is " + format_number(wall) + " s, above the longest run time accepted (" +
           format_number(options_.max_outcome_wall_s) + " s, --max-outcome-wall)");
  if (options_.outcome_kill_margin_s >= 0 && r.known(Field::RequestedTtl)) {
    const double limit = r[Field::RequestedTtl] + options_.outcome_kill_margin_s;
    if (wall > limit)
      refuse("is " + format_number(wall) + " s, longer than the job's requested_ttl_s plus the kill margin (" +
             format_number(limit) + " s, --outcome-kill-margin): such a job would have been killed");
  }
}

void Service::learn_calibration(const ServedPrediction& served, double wall_s) {
  // An answer of another method (the service was restarted with another --calibration)
  // holds no decision this policy can learn from.
  if (policy_->learns() && served.method == policy_->method()) policy_->observe(served.decision, wall_s);
}

void Service::learn_quality(const LoadedModel& model, const ServedPrediction& served, double wall_s,
                            double received_at, bool log, bool grouped) {
  const OnlineDecision& d = served.decision;
  const ScoredOutcome scored{received_at, wall_s, d.job.pred_s, d.ttl_s, d.job.requested_s};
  quality_.add(scored);
  if (!grouped) return;  // and the drift tests restart before this start's model serves
  const std::string group = live_group_name(model.predictor, d.job.group);
  if (!group.empty()) group_quality_.at(group).add(scored);
  if (!drift_.add(group, log_residual(wall_s, d.job.pred_s))) return;
  drift_raised_ = true;
  ++drift_alarms_;
  if (log) {
    const DriftTest::Alarm& a = drift_.last_alarm();
    log_event("warn", "drift_alarm",
              {{"direction", a.test.up > drift_.options().threshold ? "longer" : "shorter"},
               {"statistic", std::max(a.test.up, a.test.down)},
               {"threshold", drift_.options().threshold},
               {"scope", drift_scope_name(drift_.options().scope)},
               {"group", a.group},
               {"outcomes", a.test.count},
               {"mean_log_residual", a.test.mean},
               {"model_version", std::string(served.model_version.data(), served.model_version.size())},
               {"message", "the run times of matched outcomes drifted from the model's expectations (Page-Hinkley on "
                           "the log residuals); retrain or reload a newer model"}});
  }
}

}  // namespace ttlpred::serve
