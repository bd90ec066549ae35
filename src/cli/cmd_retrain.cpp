// `ttlpred retrain`: a candidate model from a journal's recent outcomes, written only when its
// shadow evaluation beats the current model (learn/retrain.hpp); prints the decision and the
// numbers of both models on the held-out outcomes.
#include <cstdio>
#include <memory>
#include <string>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "learn/duration.hpp"
#include "learn/learn_json.hpp"
#include "learn/retrain.hpp"
#include "model/model_file.hpp"
#include "train/train_config.hpp"

namespace ttlpred::cli {
namespace {

struct RetrainCommand {
  std::string journal, model, out, window = "0", data, from = retrain_start_name(RetrainOptions{}.start);
  std::string censored = kDefaultRetrainCensored ? "on" : "off";
  double holdout = kDefaultHoldoutFraction, alpha = kDefaultAlpha;
  std::uint32_t epochs = 0;
  std::uint64_t seed = TrainConfig{}.seed;  // training seed: the trainer's default
  BoundOptions bounds;
  bool json = false;
};

void run_retrain_command(const RetrainCommand& c) {
  RetrainOptions o = retrain_defaults(retrain_start_from_name(c.from));
  o.window_s = parse_duration(c.window, "--window");
  o.holdout_fraction = c.holdout;
  if (c.epochs > 0) o.fit.train.max_epochs = c.epochs;
  o.fit.train.seed = c.seed;
  o.fit.censored = parse_censored(c.censored);
  o.predictor = predictor_options("auto", "", c.alpha, c.bounds);
  const ModelFile current = load_model_file(c.model);
  const JobTable outcomes = load_trace(c.journal, c.json);
  JobTable original;
  if (!c.data.empty()) original = load_trace(c.data, c.json);
  RetrainResult r = retrain(outcomes, current, o, c.data.empty() ? nullptr : &original);
  if (r.accepted) save_model_file(c.out, r.model);
  if (c.json) {
    nlohmann::json j = retrain_json(r);
    j["model"] = c.model;
    j["out"] = r.accepted ? nlohmann::json(c.out) : nlohmann::json(nullptr);
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::printf("retrain (%s) on %zu outcomes (%s)%s: trained on %zu, held out the latest %zu\n",
              retrain_start_name(r.start), r.window_rows,
              o.window_s > 0 ? ("submitted in the last " + duration_text(o.window_s)).c_str() : "all of them",
              r.original_rows ? (" and " + std::to_string(r.original_rows) + " jobs of " + c.data).c_str() : "",
              r.train_rows, r.holdout_rows);
  std::printf("  %-10s RMSE %.3f h  kill rate %.2f%%  mean safe TTL %.2f h\n", "current", r.current.rmse_hours,
              100 * r.current.kill_rate, r.current.mean_safe_ttl_hours);
  std::printf("  %-10s RMSE %.3f h  kill rate %.2f%%  mean safe TTL %.2f h\n", "candidate", r.candidate.rmse_hours,
              100 * r.candidate.kill_rate, r.candidate.mean_safe_ttl_hours);
  std::printf("%s\n%s\n", r.reason.c_str(), r.accepted ? ("wrote " + c.out).c_str() : ("kept " + c.model + ", wrote nothing").c_str());
}

}  // namespace

void add_retrain_command(CLI::App& app) {
  auto c = std::make_shared<RetrainCommand>();
  auto* cmd = app.add_subcommand(
      "retrain", "Train a candidate on a journal's recent outcomes; write it only when a shadow evaluation says it is better");
  cmd->add_option("--journal", c->journal, "the outcomes: a `serve --journal` folder (or any trace)")->required();
  cmd->add_option("--model", c->model, "the current model, which the candidate must beat")->required();
  cmd->add_option("--out", c->out, "where the candidate is written (atomically), only when it is accepted")->required();
  cmd->add_option("--window", c->window, "learn from outcomes submitted this long before the newest (s, m, h, d, w; 0: all)")
      ->capture_default_str();
  cmd->add_option("--data", c->data, "also train on this original trace's jobs submitted before the window");
  cmd->add_option("--from", c->from, "fine-tune (the current network, encoder and history kept) or scratch")
      ->capture_default_str();
  cmd->add_option("--holdout", c->holdout, "fraction of the window's outcomes, the most recent, held out for the shadow evaluation")
      ->capture_default_str();
  add_alpha_option(*cmd, c->alpha);
  cmd->add_option("--epochs", c->epochs, "maximum training epochs (0: 6 for a fine-tune, the trainer's default from scratch)")
      ->capture_default_str();
  cmd->add_option("--seed", c->seed, "training seed")->capture_default_str();
  add_censored_option(*cmd, c->censored);
  add_bound_options(*cmd, c->bounds);
  cmd->add_flag("--json", c->json, "print one JSON object: the decision and both models' numbers");
  cmd->callback([c] { run_retrain_command(*c); });
}

}  // namespace ttlpred::cli
