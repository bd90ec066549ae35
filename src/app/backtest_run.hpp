#pragma once
// `ttlpred backtest` without its input and output: the options (declared on a CLI11 command,
// so `ttlpred backtest` and the Python binding `ttlpred.backtest` parse the same options
// with the same defaults and checks) and the run on a job table already read.
#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "app/command_options.hpp"
#include "model/online_calibration.hpp"
#include "pipeline/backtest.hpp"
#include "train/train_config.hpp"

namespace ttlpred::app {

// The library's backtest defaults, the defaults of the command's options (one static copy:
// a BacktestOptions is large, and g++ 12 warns falsely on many temporaries of it).
const BacktestOptions& library_backtest_defaults();

struct BacktestCliOptions {
  std::string splits = numbers_text(library_backtest_defaults().splits), alphas = numbers_text(library_backtest_defaults().alphas);
  std::string methods = "static,rolling,aci,aci-capped,multi-aci,mondrian";
  std::string method{online_method_name(library_backtest_defaults().default_method)};
  std::string key = kDefaultCalibrationKey, out, models_dir, per_job;
  std::string kill_budget = kill_budget_name(RequestAwareOptions{}.budget);
  std::string at = "submit", censored = kDefaultCensored;
  ModelChoiceOptions choices;
  bool ttl_by_group = false;
  double alpha = kDefaultAlpha, window_days = library_backtest_defaults().window_days;
  OnlineCalibrationOptions online;
  std::size_t min_window_rows = library_backtest_defaults().min_window_rows;
  std::uint32_t epochs = 0;
  std::uint64_t seed = TrainConfig{}.seed;  // training seed: the trainer's default
  BoundOptions bounds;
};

// Every option of the computation, --out (the report folder) and --per-job (the scored
// jobs' CSV, write_backtest_jobs); not --data, --json or
// --windows, which are the program's input and text output.
void add_backtest_options(CLI::App& cmd, BacktestCliOptions& o);

// Parses the lists and runs the backtest; throws Error naming the option of a bad list item.
Backtest run_backtest(const JobTable& trace, const BacktestCliOptions& o, const BacktestProgress& progress = {});

}  // namespace ttlpred::app
