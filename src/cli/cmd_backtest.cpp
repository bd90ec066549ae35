// `ttlpred backtest`: rolling-origin evaluation over several split points
// (pipeline/backtest.hpp), every online calibration method side by side.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/backtest_report.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {
namespace {

struct BacktestCliOptions {
  std::string data, splits = "0.5,0.6,0.7,0.8,0.9", alphas = "0.005,0.01,0.02,0.05",
                    methods = "static,rolling,aci,multi-aci,mondrian", method = "aci", key = "user";
  double alpha = 0.01, window_days = 7;
  OnlineCalibrationOptions online;
  std::size_t min_window_rows = 1000;
  std::uint32_t epochs = 0;
  std::uint64_t seed = 1;
  BoundOptions bounds;
  bool json = false, windows = false;
};

// "0.5,0.6" -> {0.5, 0.6}; throws Error naming the option and the item that is no number.
std::vector<double> parse_number_list(const std::string& text, const char* option) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw Error(std::string(option) + ": '" + item + "' is not a number");
    out.push_back(v);
  }
  return out;
}

std::vector<OnlineMethod> parse_methods(const std::string& text) {
  std::vector<OnlineMethod> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(online_method_from_name(item));
  return out;
}

void run_backtest_command(const BacktestCliOptions& o) {
  BacktestOptions b;
  b.splits = parse_number_list(o.splits, "--splits");
  b.alphas = parse_number_list(o.alphas, "--alphas");
  b.alpha = o.alpha;
  if (std::find(b.alphas.begin(), b.alphas.end(), b.alpha) == b.alphas.end()) b.alphas.push_back(b.alpha);
  std::sort(b.alphas.begin(), b.alphas.end());
  b.methods = parse_methods(o.methods);
  b.default_method = online_method_from_name(o.method);
  b.key_column = o.key;
  b.online = o.online;
  b.window_days = o.window_days;
  b.min_window_rows = o.min_window_rows;
  if (o.epochs > 0) b.fit.train.max_epochs = o.epochs;
  b.fit.train.seed = o.seed;
  b.predictor.max_ttl_s = o.bounds.max_ttl_s;
  b.predictor.min_seconds = o.bounds.min_seconds;
  const JobTable trace = load_trace(o.data, o.json);
  const Backtest result = run_backtest(trace, b, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (o.json) {
    std::printf("%s\n", backtest_json(result, o.data).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  print_backtest(stdout, result, o.data, o.windows);
}

}  // namespace

void add_backtest_command(CLI::App& app) {
  auto o = std::make_shared<BacktestCliOptions>();
  auto* cmd = app.add_subcommand(
      "backtest", "Rolling-origin evaluation: train at each split, score up to the next one, every calibration method");
  cmd->add_option("--data", o->data, kDataHelp)->required();
  cmd->add_option("--splits", o->splits, "ascending split points (fractions of the eligible jobs in submit order)")
      ->capture_default_str();
  cmd->add_option("--alphas", o->alphas, "target kill rates of the tightness sweep")->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "the headline target kill rate (tables, flags, windows)")->capture_default_str();
  cmd->add_option("--methods", o->methods, "calibration methods to compare: static, rolling, aci, multi-aci, mondrian")
      ->capture_default_str();
  cmd->add_option("--method", o->method, "the method whose per-window kill rates --windows lists")->capture_default_str();
  cmd->add_option("--target-scale", o->online.target_scale,
                  "aci, multi-aci, mondrian: the level follows this fraction of alpha in kills")
      ->capture_default_str();
  cmd->add_option("--gamma", o->online.gamma, "aci, mondrian: learning rate of the level")->capture_default_str();
  cmd->add_option("--key", o->key, "mondrian calibration key: a categorical job field (user, queue, job_type ...)")
      ->capture_default_str();
  cmd->add_option("--window-days", o->window_days, "length of the kill-rate windows, in days of submit time")
      ->capture_default_str();
  cmd->add_option("--min-window-rows", o->min_window_rows, "windows with fewer scored jobs are not summarized")
      ->capture_default_str();
  cmd->add_option("--epochs", o->epochs, "maximum training epochs per split (0: the trainer's default)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "training seed")->capture_default_str();
  add_bound_options(*cmd, o->bounds);
  cmd->add_flag("--windows", o->windows, "also list every window's kill rate");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] { run_backtest_command(*o); });
}

}  // namespace ttlpred::cli
