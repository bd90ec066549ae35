#pragma once
// The prediction service without the HTTP around it: request bodies in, status and JSON
// body out. Keeping it apart from the server makes every rule testable directly, and keeps
// the HTTP layer (http_server.hpp) a thin adapter.
//
// Concurrency: the model is an immutable snapshot behind an atomic shared_ptr, so a reload
// builds the new one off to the side and swaps it in while requests in flight finish with
// the old one. The history state is read by predictions under a shared lock and written by
// outcomes under an exclusive one, held only while applying: the journal flush happens
// before, under a separate lock that keeps journal order and apply order the same. The
// safe-TTL policy lives beside the history under the same lock (predictions read it, matched
// outcomes move it); the recent-predictions table has its own mutex, held per batch; the live
// quality windows and the drift test are the outcomes' own, under the journal lock. The
// running set (a model made for match time) is the history state's: every writer of it (a
// /v1/match start, /v1/started, an outcome closing a run) holds the journal lock, then the
// history lock exclusively, so journal order is apply order for starts too.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "features/history.hpp"
#include "model/online_calibration.hpp"
#include "predict/predictor.hpp"
#include "predict/ttl_policy.hpp"
#include "serve/group_drift.hpp"
#include "serve/journal.hpp"
#include "serve/live_quality.hpp"
#include "serve/metrics.hpp"
#include "serve/recent_predictions.hpp"
#include "serve/taught_outcomes.hpp"

namespace ttlpred::serve {

struct ServiceOptions {
  std::string model_path;
  PredictorOptions predictor;
  std::string journal_dir;              // "": outcomes live in memory only (not durable)
  std::size_t max_batch = 4096;         // jobs per /v1/predict or /v1/match request
  std::uint64_t snapshot_every = 100000;  // outcomes between history snapshots (0: never)
  // Physical bounds of an outcome's wall_s (docs/service.md, "Security and limits"): one
  // outcome feeds every prediction through the shared history keys, so a run time no job can
  // have is refused rather than learned. Where the scheduler kills a job at its request plus
  // a margin, a longer run is impossible too: JAliEn kills at TTL + 300 s
  // (../shared/alice-facts.md), so a JAliEn deployment sets the margin to 300. Batch
  // schedulers do not always enforce requests (KTH-SP2 has a job that asked for 60 s and ran
  // 3 945 s), and refusing such real outcomes would make the service's history differ from
  // the trace eval and predict read; so by default (negative) the request is not checked.
  double max_outcome_wall_s = 604800;  // 7 days: longer than any pilot (72 h) or batch queue limit
  double outcome_kill_margin_s = -1;
  // Set (by a signal watcher) to stop a start-up in progress: the journal replay checks it
  // between lines, so SIGTERM is honoured however long the journal is. nullptr: never.
  const std::atomic<bool>* stop = nullptr;
  // Largest model file a load or reload reads (a reload path comes from a request: it must
  // not be /dev/zero, a FIFO, or anything that is not a regular file of sane size).
  std::uint64_t max_model_bytes = 1ull << 30;
  // Most history keys kept (HistoryState::set_capacity; 0: no limit). Each key costs about
  // 300 bytes, so the default bounds the state near 150 MB; outcomes with ever new user or
  // production tags (617 k keys, +190 MB in 2 s) would otherwise grow it, and every snapshot,
  // without limit. The least recently updated keys go first.
  std::size_t history_capacity = 500000;
  // Online safe-TTL calibration (docs/service.md, "Online calibration"): the method moves the
  // level each answer asks the model's calibration for, from outcomes matched to the answer
  // served for their job. Static here, so that the library answers as Predictor::predict;
  // `ttlpred serve --calibration` keeps it (aci-capped and aci-log are the measured choices to
  // deploy: docs/service.md).
  OnlineCalibrationOptions calibration = [] {
    OnlineCalibrationOptions o;
    o.method = OnlineMethod::Static;
    return o;
  }();
  std::string calibration_key = kDefaultCalibrationKey;  // mondrian: the categorical field keying the offsets
  // Answers kept for their outcome (recent_predictions.hpp): about 200 bytes each, so the
  // default holds 500 000 jobs between answer and outcome in about 100 MB. 0: none kept.
  // The same number of job ids whose outcome the history learnt is remembered, so that a
  // repeated outcome teaches it once (taught_outcomes.hpp: about 50 bytes each, 25 MB).
  std::size_t recent_predictions = 500000;
  DriftOptions drift;
  // The running set, kept for a model made for match time (docs/service.md, "Running jobs"):
  // at most this many jobs (the earliest start goes first; 0: no limit). Each costs about
  // 300 bytes, so the default bounds it near 150 MB, a few times the jobs a grid runs at once.
  std::size_t running_capacity = 500000;
  // A start whose outcome has not come after this many seconds stops counting and is
  // forgotten: the default is the longest run time accepted (max_outcome_wall_s's default),
  // so no valid outcome could still close it. At most kMaxHistoryWallS.
  double running_max_age_s = 604800;
  // Whether a start recorded by /v1/match is on disk (fdatasync) before the answer goes out.
  // Off by default: the line is written to the journal before the answer (it survives a crash
  // or kill -9 of the service) and reaches the disk with the next outcome or /v1/started
  // batch, because the flush would multiply /v1/match's latency (measured: p50 36 us without
  // it, about 3 ms with it, docs/service.md "Running jobs"); a power loss can then forget the
  // last starts, which only stop counting as running (their outcomes are still learned).
  bool sync_starts = false;
  std::function<double()> clock;  // unix seconds for received_at / predicted_at; empty: the wall clock
};

struct Reply {
  int status = 200;
  std::string body;
  const char* content_type = "application/json";
  // Outcomes or starts a /v1/outcomes or /v1/started request carried, when accepted: what its
  // writer is charged against the rate limit (write_rate.hpp).
  std::size_t items = 0;
};

// A model ready to serve, with the identity clients see.
struct LoadedModel {
  Predictor predictor;
  std::string version;  // "<16 hex of a 64-bit FNV-1a of the file bytes>"
  std::string path;
};

// Loads and checks a model file (throws Error naming the file and the problem): a regular
// file of at most `max_bytes`, opened without blocking (util/file_io.hpp, read_regular_file).
std::shared_ptr<const LoadedModel> load_model(const std::string& path, const PredictorOptions& options,
                                              std::uint64_t max_bytes = ServiceOptions{}.max_model_bytes);

class Service {
 public:
  // Loads the model, then the newest history snapshot and the journal after it. Throws
  // Error (InputError for a bad journal line) when any of it is unusable.
  explicit Service(ServiceOptions options);

  Reply predict(std::string_view body);
  Reply match(std::string_view body);
  Reply outcomes(std::string_view body);
  // POST /v1/started: jobs a broker started without asking /v1/match (running_jobs.hpp).
  Reply started(std::string_view body);
  Reply healthz() const;
  Reply readyz() const;
  Reply metrics_text() const;
  // Body: "" or {"path": "..."}; default path: the one the service was started with.
  // A model that fails to load or does not fit the history state is refused (422) and the
  // old one keeps serving.
  Reply reload(std::string_view body);
  // Reload from the start-up path; returns "" on success, else why it was refused.
  std::string reload_from(const std::string& path);

  void set_ready(bool ready) { ready_.store(ready); }
  std::string model_version() const { return model()->version; }
  std::shared_ptr<const LoadedModel> model() const { return model_.load(); }
  std::uint64_t history_observed() const;
  std::uint64_t replayed_outcomes() const { return replayed_; }
  // The level the safe-TTL policy asks for now (for mondrian: a job of an unseen key); alpha
  // for a policy that learns nothing.
  double calibration_level() const;
  OnlineMethod calibration_method() const;
  // Drift alarms raised so far (the retrain thread retrains on a new one: serve/retrain_loop.hpp).
  std::uint64_t drift_alarms() const;
  // What the retrain thread needs to try again after a refused retrain on drift: whether the
  // alarm still stands (no model has been swapped in since), how many outcomes the service has
  // applied, and how many outcomes the last alarm's test had seen when it fired.
  struct DriftStanding {
    bool raised = false;
    std::uint64_t outcomes = 0, alarm_outcomes = 0;
  };
  DriftStanding drift_standing() const;
  // Writes a snapshot now (no-op without a journal).
  void snapshot_now();

  ServiceMetrics& metrics() { return metrics_; }
  const ServiceMetrics& metrics() const { return metrics_; }
  const ServiceOptions& options() const { return options_; }

 private:
  // Throws RequestError (400, field wall_s) for a run time outside ServiceOptions' bounds.
  void check_outcome_bounds(const JobRecord& r, long index) const;
  double now() const;
  // The safe-TTL policy for `model` under --calibration (it learns nothing for static, or for a
  // model without a safe-TTL calibration, which is said in the log).
  TtlPolicy make_policy(const LoadedModel& model) const;
  // Answers `preds` through the policy and fills what was served for each job. Caller holds
  // history_mutex_ (shared), so that the policy answers through `model`'s table.
  void calibrate(const LoadedModel& model, std::span<const JobRecord> jobs, std::span<Prediction> preds,
                 std::span<ServedPrediction> served) const;
  // The batch guard counts each job once (OnlineCalibrator::answered): the served entries whose
  // job_id has no earlier answer kept (a job asked again is not a new job of its user). Takes
  // history_mutex_ (shared); call before the entries are recorded.
  void count_answers(std::span<const RecentPredictions::Entry> entries);
  // What a matched (or unmatched) outcome teaches: the policy (caller holds
  // history_mutex_ exclusively) ...
  void learn_calibration(const ServedPrediction& served, double wall_s);
  // ... and the live quality and drift test (caller holds outcomes_mutex_), per group named
  // through `model`'s vocabulary (live_groups.hpp). `log`: say an alarm on stderr (not during
  // the replay, which re-raises what was said before).
  // `grouped` false: the prediction came from another model than `model` (a journal record
  // served before a reload), whose group ids `model`'s vocabulary may name differently; only
  // the figures over all outcomes learn from it.
  void learn_quality(const LoadedModel& model, const ServedPrediction& served, double wall_s, double received_at,
                     bool log, bool grouped = true);
  // Writes the learned state (OutcomeJournal::learned_path) and then the history to `history_path`.
  void save_snapshot(const std::string& history_path) const;
  // Returns the version of the model the state was learned under ("" when there is none).
  std::string load_learned(const std::string& path, const std::shared_ptr<const LoadedModel>& model);
  // A model other than the one the drift tests learned from now serves: the tests restart and
  // the alarm, which was about the other model, clears (as a reload does).
  void restart_drift_tests();
  // Whether the model reads running jobs (made for match time): only then are starts kept.
  bool tracks_running() const { return tracks_running_; }
  // Records that job `id` started at `start_s`, after forgetting the runs too old at
  // `received_at` (restarting the job when it was running). Caller holds history_mutex_
  // exclusively; the journal has the line already.
  void apply_start(std::uint64_t id, const JobRecord& job, double start_s, double received_at);
  // The first match of a /v1/match answer is the job the pilot takes: journaled, then kept.
  void record_match_start(const JobRecord& job, std::string_view job_id_json, double match_time);
  // An outcome closes its job's run, if it was running (caller holds history_mutex_ exclusively).
  bool close_run(const JobRecord& outcome);
  // Whether a replayed outcome teaches the history (the first of its job_id), remembering it;
  // the live path decides the same way before it journals (caller holds outcomes_mutex_).
  bool first_outcome(const JobRecord& outcome);

  ServiceOptions options_;
  std::atomic<std::shared_ptr<const LoadedModel>> model_;
  std::mutex reload_mutex_;  // one reload at a time

  mutable std::mutex outcomes_mutex_;  // orders journal appends with their application
  mutable std::shared_mutex history_mutex_;
  std::optional<HistoryState> history_;
  std::unique_ptr<OutcomeJournal> journal_;
  std::uint64_t replayed_ = 0;
  std::optional<TtlPolicy> policy_;  // under history_mutex_; set with the first model
  std::optional<Field> calibration_key_;
  RecentPredictions recent_;
  TaughtOutcomes taught_;  // under outcomes_mutex_

  // Under outcomes_mutex_:
  LiveQuality quality_;
  GroupQuality group_quality_;  // per job type / queue group (live_groups.hpp)
  DriftTest drift_;
  bool drift_raised_ = false;  // since the last alarm, until a model reload
  std::uint64_t drift_alarms_ = 0;
  std::uint64_t matched_ = 0, unmatched_no_id_ = 0, unmatched_unknown_ = 0, unmatched_older_ = 0;
  std::uint64_t repeated_outcomes_ = 0;  // outcomes of a job_id the history had learnt already
  std::uint64_t snapshot_failures_ = 0;  // history snapshots that could not be written
  std::uint64_t calibration_outcomes_ = 0;
  bool tracks_running_ = false;  // set at construction: a reload keeps the history configuration
  std::uint64_t running_started_ = 0, running_closed_ = 0;  // since this start, under outcomes_mutex_

  std::atomic<bool> ready_{false};
  ServiceMetrics metrics_;
};

}  // namespace ttlpred::serve
