// ttlpred: predicts grid job run times and safe TTLs. See README.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <exception>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "util/error.hpp"
#include "util/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ttlpred: run-time prediction and safe TTLs for grid jobs"};
  app.require_subcommand(1);
  // `ttlpred --version`: the project version (CMake's project(VERSION)) and the git commit.
  app.set_version_flag("--version", std::string("ttlpred ") + ttlpred::kVersion +
                                        (*ttlpred::kGitCommit ? std::string(" (git ") + ttlpred::kGitCommit + ")" : std::string()));
  ttlpred::cli::add_pipeline_command(app);
  ttlpred::cli::add_generate_command(app);
  ttlpred::cli::add_inspect_command(app);
  ttlpred::cli::add_train_command(app);
  ttlpred::cli::add_eval_command(app);
  ttlpred::cli::add_predict_command(app);
  ttlpred::cli::add_quantize_command(app);
  ttlpred::cli::add_bench_command(app);
  ttlpred::cli::add_serve_command(app);
  ttlpred::cli::add_model_command(app);
  ttlpred::cli::add_export_command(app);
  ttlpred::cli::add_import_command(app);
  ttlpred::cli::add_simulate_command(app);
  ttlpred::cli::add_report_command(app);
  ttlpred::cli::add_backtest_command(app);
  ttlpred::cli::add_retrain_command(app);
  ttlpred::cli::add_replay_command(app);
  try {
    // `--config FILE` of serve and train becomes options before the command's own.
    std::vector<std::string> args(argv + 1, argv + argc);
    args = ttlpred::cli::expand_config_file(app, std::move(args));
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ttlpred::Error& e) {
    std::fprintf(stderr, "ttlpred: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ttlpred: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
