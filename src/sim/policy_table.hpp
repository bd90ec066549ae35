#pragma once
// The broker comparison the pipeline's report ends with: one jalien simulation per TTL
// policy (static, model, oracle) on the same jobs, slots and seed, as a Markdown table and
// JSON, with how much of the static-to-oracle gap the model closes; and the one run of a
// policy that `simulate --scheduler jalien` and the table share.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/online_calibration.hpp"
#include "sim/jalien_broker.hpp"
#include "sim/jalien_stats.hpp"
#include "sim/online_model.hpp"
#include "sim/sim_input.hpp"

namespace ttlpred::sim {

struct PolicyRow {
  std::string policy;
  GridMetrics metrics;
  std::string calibration;  // model rows: the calibration that answered ("" for the others)
};

struct GridOptions {
  double load = 0.95;  // slot cores = cores the jobs' work needs over the submit span / load
  double pilot_gap_s = GridConfig{}.pilot_gap_mean_s;
  double proxy_lifetime_s = GridConfig{}.proxy_lifetime_s;
  int max_retries = GridConfig{}.max_retries;
  double default_ttl_s = kJalienDefaultTtlS;
  std::uint64_t seed = GridConfig{}.seed;
  // The model's calibration (sim/online_ttl.hpp): static, rolling, aci, multi-aci, mondrian
  // or aci-cpu, and the mondrian key.
  std::string calibration = kDefaultCalibration;
  std::string calibration_key = kDefaultCalibrationKey;
  // Learning rate and target share of alpha of the ACI levels (the service's defaults).
  double gamma = ttlpred::OnlineCalibrationOptions{}.gamma;
  double target_scale = ttlpred::OnlineCalibrationOptions{}.target_scale;
  bool batch_guard = ttlpred::OnlineCalibrationOptions{}.batch_guard;  // model/online_calibration.hpp
  // --ttl jalien-stats: JAliEn's history-based TTL (sim/jalien_stats.hpp).
  JalienStatsOptions stats;
  // --ttl online: the learning loop (sim/online_model.hpp) and where it reports its retrains.
  OnlineModelOptions online;
  OnlineModelProgress online_progress;
};

GridConfig grid_config(const SimTrace& t, GridTtl policy, const GridOptions& o);

// Where the model's TTLs come from: null when each job's one TTL is fixed in advance (the
// static calibration on the recorded host, or a policy without the model), else a source
// answering per host class (when the trace's host classes were found) and, with an online
// calibration, following the outcomes. Throws Error for --ttl model without predictions.
std::unique_ptr<TtlSource> model_ttl_source(const SimTrace& t, GridTtl policy, const GridOptions& o);

// JAliEn's statistics over the simulated jobs (one key per job and host class), with the
// recorded outcomes of the jobs before the split (those not killed: status other than
// ERROR_E) learnt as they ended (submit + run time), as JAliEn's table would hold them; with
// host classes, a recorded job counts on the class of its CPU model (none: it is not
// counted).
std::unique_ptr<JalienStatsTtl> jalien_stats_source(const SimTrace& t, const GridOptions& o,
                                                    const std::vector<GridJob>& jobs);

// The service's learning loop from an empty start (sim/online_model_ttl.hpp), through o's
// calibration. Error with host classes.
std::unique_ptr<TtlSource> online_model_source(const SimTrace& t, const GridOptions& o, const std::vector<GridJob>& jobs);

// The source of a policy's TTLs: the model's (above), JAliEn's statistics, the learning
// loop, or none. `jobs`: the simulated jobs as grid_jobs made them for the run (the static
// TTLs and cores the sources fall back on and weigh by are theirs).
std::unique_ptr<TtlSource> ttl_source(const SimTrace& t, GridTtl policy, const GridOptions& o,
                                      const std::vector<GridJob>& jobs);

struct PolicyRun {
  std::vector<GridJob> jobs;
  GridConfig config;
  GridResult result;
  std::unique_ptr<TtlSource> source;  // as it ended the run (an online calibrator's final level)
};
PolicyRun run_jalien_policy(const SimTrace& t, GridTtl policy, const GridOptions& o);
// The final level of an online calibration's run (the model's or the learning loop's); NaN
// for a run without one.
double final_calibration_level(const PolicyRun& run);

// static, model (when the trace has predictions; through o's calibration, then once more per
// entry of `more_models`, each with its own calibration) and oracle, in that order.
std::vector<PolicyRow> jalien_policy_rows(const SimTrace& t, const GridOptions& o,
                                          const std::vector<GridOptions>& more_models = {});

// The online calibration docs/SIMULATION.md recommends for a broker ("Online calibration in
// the broker"): aci-log (the ACI level stepped in log space) aiming at 0.35 alpha in kills, at
// the service's gamma 0.002; `serve` runs it. The killed jobs are the long ones, so their
// share of the CPU is two to three times their share of the jobs: on the default synthetic
// trace, over five trainings of its model, it held the CPU lost to kills under 1 % at alpha
// 0.01 and kept most of the TTLs' gains, where the service's 0.75 alpha and the CPU-weighted
// rule did not on every training.
GridOptions recommended_online_options();

// Fraction of the static-to-oracle gap the model closes in one metric (NaN without a gap).
double gap_closed(double static_value, double model_value, double oracle_value);

// With more than one model row, each is labelled by its calibration.
std::string policy_table_markdown(const std::vector<PolicyRow>& rows);
// The sentence above the table that says how the model's TTLs were answered: the level
// `alpha` and, per model row, the calibration of its options (static: the model's own, what
// `serve` answers by default). Throws Error for an unknown calibration.
std::string policy_table_caption(double alpha, const std::vector<GridOptions>& models);
nlohmann::json policy_table_json(const std::vector<PolicyRow>& rows);

}  // namespace ttlpred::sim
