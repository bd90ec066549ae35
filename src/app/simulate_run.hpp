#pragma once
// `ttlpred simulate` without its input and output: the options (declared on a CLI11
// command, so `ttlpred simulate` and the Python binding `ttlpred.simulate` parse the same
// options with the same defaults and checks) and the run on a job table already read,
// returning the object `simulate --json` prints.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/command_options.hpp"
#include "data/job_table.hpp"
#include "model/online_calibration.hpp"
#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "learn/duration.hpp"
#include "sim/estimate_scale.hpp"
#include "sim/jalien_stats.hpp"
#include "sim/online_model.hpp"
#include "sim/policy_table.hpp"
#include "train/train_config.hpp"

namespace ttlpred::app {

// --quantiles auto (the loop's default): train's heads under the batch schedulers, where they
// lowered the average bounded slowdown of both visible traces over three training seeds;
// mean-only under jalien, where heads from an empty start over-kill (docs/SIMULATION.md,
// "The loop's models").
inline constexpr const char* kLoopQuantilesAuto = "auto";

// The model choices of --ttl online's loop by default.
inline ModelChoiceOptions online_model_choices() {
  ModelChoiceOptions c;
  c.quantiles = kLoopQuantilesAuto;
  return c;
}

struct SimulateCliOptions {
  std::string scheduler = "easy", ttl = "request", model, out, variant = "auto", isa;
  // jalien, --ttl model: the calibration answering (sim/online_ttl.hpp) and its mondrian key;
  // which host a job runs on: the one the trace recorded, or the pilot slot's own (trace|slot).
  std::string calibration = kDefaultCalibration, calibration_key = kDefaultCalibrationKey, host_speed = "trace";
  double split = kDefaultSplit, alpha = kDefaultAlpha;
  // jalien: the broker's pilots, resubmissions and static TTL (sim/policy_table.hpp).
  double load = sim::GridOptions{}.load, pilot_gap = sim::GridOptions{}.pilot_gap_s;
  double proxy_lifetime = sim::GridOptions{}.proxy_lifetime_s, default_ttl = sim::GridOptions{}.default_ttl_s;
  double gamma = OnlineCalibrationOptions{}.gamma, target_scale = OnlineCalibrationOptions{}.target_scale;
  bool batch_guard = OnlineCalibrationOptions{}.batch_guard;
  // --ttl jalien-stats: the estimate's rule and the finished jobs a key needs (sim/jalien_stats.hpp).
  std::string stats_rule = sim::stats_rule_name(sim::JalienStatsOptions{}.rule);
  std::size_t stats_min_jobs = sim::JalienStatsOptions{}.min_jobs;
  // --ttl online: the learning loop's schedule, first model and training seed (sim/online_model.hpp).
  std::string retrain_every = duration_text(sim::OnlineModelOptions{}.retrain_every_s);
  std::size_t online_min_jobs = sim::OnlineModelOptions{}.min_outcomes;
  std::uint64_t train_seed = TrainConfig{}.seed;
  // --ttl online: what the loop's models learn: train's choices and defaults, the heads by
  // scheduler (kLoopQuantilesAuto).
  ModelChoiceOptions choices = online_model_choices();
  // easy, easy++ with --ttl model or online: the backfilling estimate's scale (sim/estimate_scale.hpp).
  std::string estimate_scale = sim::kDefaultEstimateScale;
  // fcfs, easy, easy++ with --ttl oracle: the run times overestimated by up to this factor (BatchConfig).
  double oracle_overestimate = 0;
  int procs = 0, max_retries = sim::GridOptions{}.max_retries;
  std::uint64_t seed = sim::GridOptions{}.seed;
  BoundOptions bounds;
};

// Every option but --data and --json (the program's input and output format).
void add_simulate_options(CLI::App& cmd, SimulateCliOptions& o);

// The --model of `o` loaded after the options are checked (a scheduler and --ttl that do
// not go together, --ttl model without --model: Error); empty without --model.
std::optional<Predictor> load_simulate_model(const SimulateCliOptions& o);

// Where the jobs come from: `data` is the trace as the user named it (the JSON's "trace");
// `swf_header` the file whose MaxProcs header sizes a batch machine without --procs ("" for
// jobs that come from no file).
struct SimulateInput {
  JobTable trace;
  std::string format, data, swf_header;
};

using SimulateProgress = std::function<void(const std::string& line)>;

// Simulates; with --out also writes DIR/schedule.csv, DIR/timeseries.csv and DIR/report.html.
// `predictor`: what load_simulate_model(o) returned.
nlohmann::json run_simulate(const SimulateCliOptions& o, const std::optional<Predictor>& predictor, SimulateInput input,
                            const SimulateProgress& progress = {});

}  // namespace ttlpred::app
