#pragma once
// One function per subcommand, each in its own cmd_<name>.cpp: it declares the options and
// the callback. main.cpp adds them all.
#include <CLI/CLI.hpp>

namespace ttlpred::app {}  // the application library (src/app): options, runs, reports

namespace ttlpred::cli {

// The commands are written in the application library's terms (its options and runs, which
// Python shares), so its names are theirs.
using namespace ttlpred::app;

void add_generate_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_pipeline_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_backtest_command(CLI::App& app);
void add_retrain_command(CLI::App& app);
void add_replay_command(CLI::App& app);

}  // namespace ttlpred::cli
