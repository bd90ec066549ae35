#include "serve/retrain_loop.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "data/trace_readers.hpp"
#include "learn/learn_json.hpp"
#include "serve/event_log.hpp"
#include "util/error.hpp"

namespace ttlpred::serve {

RetrainLoop::RetrainLoop(Service& service, RetrainLoopOptions options) : service_(service), options_(std::move(options)) {
  if (service_.options().journal_dir.empty())
    throw Error("--retrain-every needs --journal: the retrain learns from the journal's outcomes");
  if (!(options_.every_s > 0)) throw Error("--retrain-every must be a positive duration");
  if (options_.out_path.empty()) options_.out_path = service_.options().journal_dir + "/retrained.model";
  // One training thread: the request threads keep the other cores.
  options_.retrain.fit.train.threads = 1;
  options_.retrain.predictor = service_.options().predictor;
  service_.metrics().enable_retrain();
  thread_ = std::thread([this] { loop(); });
}

RetrainLoop::~RetrainLoop() { stop(); }

void RetrainLoop::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RetrainLoop::trigger() {
  {
    std::lock_guard lock(wake_mutex_);
    triggered_ = true;
  }
  wake_.notify_all();
}

void RetrainLoop::loop() {
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.every_s));
  alarms_seen_ = service_.drift_alarms();
  // A retrain refused while the drift alarm stands is tried again once the service has applied
  // `retry_step` more outcomes: first as many as the alarm's test needed to fire, then twice
  // as many each time (a refusal at the alarm usually means the window held too little of the
  // new regime; the doubling bounds the retries to a logarithm of the outcomes).
  constexpr std::uint64_t kNoRetry = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t retry_at = kNoRetry;
  std::uint64_t retry_step = 0;
  for (;;) {
    const auto due = Clock::now() + period;
    bool drifted = false, retried = false;
    {
      std::unique_lock lock(wake_mutex_);
      // Woken by stop(), trigger(), the period, or (on_drift) a check every second.
      while (!stopping_ && !triggered_ && Clock::now() < due) {
        const auto next = options_.on_drift ? std::min(due, Clock::now() + std::chrono::seconds(1)) : due;
        wake_.wait_until(lock, next, [this] { return stopping_ || triggered_; });
        if (!options_.on_drift) continue;
        if (service_.drift_alarms() != alarms_seen_) {
          drifted = true;
          break;
        }
        if (retry_at != kNoRetry && service_.drift_standing().outcomes >= retry_at) {
          retried = true;
          break;
        }
      }
      if (stopping_) return;
      triggered_ = false;
    }
    alarms_seen_ = service_.drift_alarms();
    if (drifted) {
      retry_step = 0;
      log_event("info", "retrain_on_drift", {{"drift_alarms", alarms_seen_}});
    } else if (retried) {
      log_event("info", "retrain_on_drift",
                {{"drift_alarms", alarms_seen_}, {"retry", true}, {"outcomes", service_.drift_standing().outcomes}});
    }
    run_once();
    // An accepted candidate clears the alarm (the swap restarts the drift tests).
    const Service::DriftStanding standing = service_.drift_standing();
    if (options_.on_drift && standing.raised) {
      retry_step = retry_step == 0 ? standing.alarm_outcomes : 2 * retry_step;
      retry_at = standing.outcomes + retry_step;
    } else {
      retry_at = kNoRetry;
      retry_step = 0;
    }
  }
}

nlohmann::json RetrainLoop::run_once() {
  std::lock_guard guard(run_mutex_);
  ServiceMetrics& metrics = service_.metrics();
  metrics.set_retrain_running(true);
  const std::shared_ptr<const LoadedModel> current = service_.model();
  nlohmann::json event;
  try {
    ReadReport report;
    const JobTable outcomes = read_trace(service_.options().journal_dir, report);
    RetrainResult r = retrain(outcomes, current->predictor.model(), options_.retrain);
    event = retrain_json(r);
    event["model_version"] = current->version;
    ServiceMetrics::RetrainRecord rec;
    rec.accepted = r.accepted;
    rec.at_unix = unix_now();
    rec.seconds = r.seconds;
    rec.outcomes = r.window_rows;
    rec.current_rmse_hours = r.current.rmse_hours;
    rec.candidate_rmse_hours = r.candidate.rmse_hours;
    rec.current_kill_rate = r.current.kill_rate;
    rec.candidate_kill_rate = r.candidate.kill_rate;
    metrics.add_retrain(rec);
    if (r.accepted) {
      save_model_file(options_.out_path, r.model);
      const std::string why = service_.reload_from(options_.out_path);
      metrics.add_retrain_swap(why.empty());
      event["swapped"] = why.empty();
      event["path"] = options_.out_path;
      if (!why.empty()) event["swap_refused"] = why;
      else event["new_model_version"] = service_.model_version();
    }
    log_event(r.accepted ? "info" : "warn", "retrain", event);
  } catch (const std::exception& e) {
    metrics.add_retrain_failure();
    event = {{"accepted", false}, {"failed", true}, {"reason", e.what()}, {"model_version", current->version}};
    log_event("warn", "retrain_failed", event);
  }
  metrics.set_retrain_running(false);
  return event;
}

}  // namespace ttlpred::serve
