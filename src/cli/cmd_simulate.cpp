// `ttlpred simulate`: what the TTLs buy on a JAliEn-style broker or a batch cluster
// (docs/SIMULATION.md); the options and the run are app/simulate_run.hpp's.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "app/simulate_run.hpp"

namespace ttlpred::cli {
namespace {

struct SimulateCommand {
  std::string data;
  SimulateCliOptions options;
  bool json = false;
};

void run_simulate_command(const SimulateCommand& c) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::optional<Predictor> predictor = load_simulate_model(c.options);
  SimulateInput input;
  input.trace = load_trace(c.data, c.json, &input.format);
  input.data = input.swf_header = c.data;
  std::fprintf(stderr, "simulate: read %zu jobs (%s) in %.1f s\n", input.trace.rows(), input.format.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const nlohmann::json j = run_simulate(c.options, predictor, std::move(input),
                                        [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (c.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  for (const auto& [k, v] : j.items()) std::printf("%-28s %s\n", k.c_str(), v.dump().c_str());
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto c = std::make_shared<SimulateCommand>();
  auto* cmd = app.add_subcommand("simulate", "Simulate a broker or batch scheduler on a trace with a TTL policy (docs/SIMULATION.md)");
  cmd->add_option("--data", c->data, kDataHelp)->required();
  add_simulate_options(*cmd, c->options);
  cmd->add_flag("--json", c->json, "print one JSON object: scheduler, policy, every metric");
  cmd->callback([c] { run_simulate_command(*c); });
}

}  // namespace ttlpred::cli
