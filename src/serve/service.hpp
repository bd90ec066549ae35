#pragma once
// The prediction service without the HTTP around it: request bodies in, status and JSON
// body out. Keeping it apart from the server makes every rule testable directly, and keeps
// the HTTP layer (http_server.hpp) a thin adapter.
//
// Concurrency: the model is an immutable snapshot behind an atomic shared_ptr, so a reload
// builds the new one off to the side and swaps it in while requests in flight finish with
// the old one. The history state is read by predictions under a shared lock and written by
// outcomes under an exclusive one, held only while applying: the journal flush happens
// before, under a separate lock that keeps journal order and apply order the same.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "features/history.hpp"
#include "predict/predictor.hpp"
#include "serve/journal.hpp"
#include "serve/metrics.hpp"

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
};

struct Reply {
  int status = 200;
  std::string body;
  const char* content_type = "application/json";
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
  // Writes a snapshot now (no-op without a journal).
  void snapshot_now();

  Metrics& metrics() { return metrics_; }
  const Metrics& metrics() const { return metrics_; }
  const ServiceOptions& options() const { return options_; }

 private:
  // Throws RequestError (400, field wall_s) for a run time outside ServiceOptions' bounds.
  void check_outcome_bounds(const JobRecord& r, long index) const;

  ServiceOptions options_;
  std::atomic<std::shared_ptr<const LoadedModel>> model_;
  std::mutex reload_mutex_;  // one reload at a time

  mutable std::mutex outcomes_mutex_;  // orders journal appends with their application
  mutable std::shared_mutex history_mutex_;
  std::optional<HistoryState> history_;
  std::unique_ptr<OutcomeJournal> journal_;
  std::uint64_t replayed_ = 0;

  std::atomic<bool> ready_{false};
  Metrics metrics_;
};

}  // namespace ttlpred::serve
