// `ttlpred backtest`: rolling-origin evaluation over several split points
// (pipeline/backtest.hpp), every online calibration method side by side; with --out, the
// same numbers drawn in DIR/report.html (app/backtest_figures.hpp).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "app/backtest_figures.hpp"
#include "app/backtest_report.hpp"
#include "app/backtest_run.hpp"
#include "app/command_options.hpp"
#include "cli/commands.hpp"

namespace ttlpred::cli {
namespace {

struct BacktestCommand {
  std::string data;
  BacktestCliOptions options;
  bool json = false, windows = false;
};

void run_backtest_command(const BacktestCommand& c) {
  const JobTable trace = load_trace(c.data, c.json);
  const Backtest result =
      run_backtest(trace, c.options, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!c.options.out.empty()) {
    std::filesystem::create_directories(c.options.out);
    std::fprintf(stderr, "backtest: wrote %s\n", write_backtest_report(result, c.data, c.options.out).c_str());
  }
  if (!c.options.per_job.empty()) {
    write_backtest_jobs(result, c.options.per_job);
    std::fprintf(stderr, "backtest: wrote %s\n", c.options.per_job.c_str());
  }
  if (c.json) {
    std::printf("%s\n", backtest_json(result, c.data).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  print_backtest(stdout, result, c.data, c.windows);
}

}  // namespace

void add_backtest_command(CLI::App& app) {
  auto c = std::make_shared<BacktestCommand>();
  auto* cmd = app.add_subcommand(
      "backtest", "Rolling-origin evaluation: train at each split, score up to the next one, every calibration method");
  cmd->add_option("--data", c->data, kDataHelp)->required();
  add_backtest_options(*cmd, c->options);
  cmd->add_flag("--windows", c->windows, "also list every window's kill rate");
  cmd->add_flag("--json", c->json, "print one JSON object");
  cmd->callback([c] { run_backtest_command(*c); });
}

}  // namespace ttlpred::cli
