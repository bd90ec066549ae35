#pragma once
// Service metrics in the Prometheus text format (ServiceMetrics; a prediction's accuracy
// metrics are AccuracyMetrics, train/metrics.hpp): lock-free counters and fixed-bucket latency
// histograms per endpoint, so that recording a request costs a few atomic adds.
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "serve/live_quality.hpp"

namespace ttlpred::serve {

enum class Endpoint : std::uint8_t { Predict = 0, Match, Outcomes, Healthz, Readyz, Metrics, Reload, OpenApi, Started, Other };
inline constexpr std::size_t kNumEndpoints = 10;
const char* endpoint_name(Endpoint e);

// Upper bounds of the latency buckets, seconds (+Inf is implicit).
inline constexpr std::array<double, 14> kLatencyBuckets = {5e-6,  1e-5,  2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
                                                           1e-3,  2.5e-3, 5e-3, 1e-2, 5e-2, 0.25,  1.0};

class ServiceMetrics {
 public:
  void record(Endpoint e, double seconds, bool error);
  void add_predictions(std::uint64_t n) { predictions_.fetch_add(n, std::memory_order_relaxed); }
  void add_outcomes(std::uint64_t n) { outcomes_.fetch_add(n, std::memory_order_relaxed); }
  void add_rate_limited() { rate_limited_.fetch_add(1, std::memory_order_relaxed); }  // a writer's request refused (429)
  void add_reload(bool ok) { (ok ? reloads_ok_ : reloads_failed_).fetch_add(1, std::memory_order_relaxed); }

  // The retrain thread's record (serve --retrain-every, serve/retrain_loop.hpp): rendered
  // from the first enable_retrain() on, so a service without the thread scrapes as before.
  struct RetrainRecord {
    bool accepted = false;
    double at_unix = 0, seconds = 0;
    std::uint64_t outcomes = 0;
    double current_rmse_hours = 0, candidate_rmse_hours = 0, current_kill_rate = 0, candidate_kill_rate = 0;
  };
  void enable_retrain() { retrain_enabled_.store(true); }
  void set_retrain_running(bool running) { retrain_running_.store(running); }
  void add_retrain(const RetrainRecord& r);  // a shadow evaluation decided
  void add_retrain_failure() { retrains_failed_.fetch_add(1, std::memory_order_relaxed); }  // could not run
  void add_retrain_swap(bool ok) { (ok ? swaps_ok_ : swaps_refused_).fetch_add(1, std::memory_order_relaxed); }

  std::uint64_t requests(Endpoint e) const { return per_[static_cast<std::size_t>(e)].count.load(); }
  std::uint64_t errors(Endpoint e) const { return per_[static_cast<std::size_t>(e)].errors.load(); }
  std::uint64_t predictions() const { return predictions_.load(); }

  // Service-level gauges are passed in by the caller, which knows them.
  struct Gauges {
    std::string model_version;
    std::uint64_t history_observed = 0;
    std::uint64_t history_keys = 0;
    std::uint64_t history_capacity = 0;
    std::uint64_t history_evicted = 0;
    // The running set (a model made for match time: docs/service.md, "Running jobs").
    bool running_tracked = false;
    std::uint64_t running = 0, running_capacity = 0;
    double running_max_age_s = 0;
    std::uint64_t running_started = 0, running_closed = 0, running_expired = 0, running_evicted = 0;
    std::uint64_t journal_since_snapshot = 0;
    std::uint64_t snapshot_failures = 0;
    // What the service learns from outcomes (docs/service.md, "Online calibration" and "Live quality").
    std::string calibration_method = "static";
    double calibration_level = 0;
    std::uint64_t calibration_outcomes = 0;
    std::uint64_t recent_predictions = 0, recent_capacity = 0, recent_evicted = 0;
    std::uint64_t matched = 0, unmatched_no_id = 0, unmatched_unknown = 0, unmatched_older = 0;
    std::uint64_t repeated_outcomes = 0;
    struct Window {
      std::string name;  // "1000", "10000", "1h", "1d"
      QualityFigures figures;
    };
    std::vector<Window> live;
    // The same windows per job type / queue group (live_groups.hpp); group_column "": ungrouped.
    std::string group_column;
    struct GroupWindows {
      std::string group;
      std::vector<Window> windows;
    };
    std::vector<GroupWindows> live_groups;
    bool drift_alarm = false;
    std::uint64_t drift_alarms = 0;
    std::string drift_scope = "group";
    double drift_up = 0, drift_down = 0;  // the largest over the groups' tests (scope group)
    struct GroupDrift {
      std::string group;
      double up = 0, down = 0;
    };
    std::vector<GroupDrift> drift_groups;  // scope group: each group's test
  };
  std::string render(const Gauges& g) const;

 private:
  struct PerEndpoint {
    std::atomic<std::uint64_t> count{0}, errors{0};
    std::atomic<std::uint64_t> sum_ns{0};
    std::array<std::atomic<std::uint64_t>, kLatencyBuckets.size() + 1> buckets{};  // non-cumulative
  };
  std::array<PerEndpoint, kNumEndpoints> per_;
  std::atomic<std::uint64_t> predictions_{0}, outcomes_{0}, reloads_ok_{0}, reloads_failed_{0}, rate_limited_{0};
  void render_retrain(std::string& out) const;
  std::atomic<bool> retrain_enabled_{false}, retrain_running_{false};
  std::atomic<std::uint64_t> retrains_accepted_{0}, retrains_refused_{0}, retrains_failed_{0}, swaps_ok_{0}, swaps_refused_{0};
  mutable std::mutex last_retrain_mutex_;
  RetrainRecord last_retrain_;  // under last_retrain_mutex_
  bool has_last_retrain_ = false;
};

}  // namespace ttlpred::serve
