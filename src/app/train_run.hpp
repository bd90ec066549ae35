#pragma once
// `ttlpred train` without its input and output: the training options, declared once on a
// CLI11 command so that `ttlpred train` and Python's `ttlpred.train` / `TTLRegressor` take
// the same options with the same defaults and checks, and their resolution into the
// library's FitOptions (names parsed, the starting model of a fine-tune loaded).
#include <string>

#include <CLI/CLI.hpp>

#include "app/command_options.hpp"
#include "model/model_file.hpp"
#include "pipeline/fit_model.hpp"
#include "pipeline/split.hpp"

namespace ttlpred::app {

struct TrainCliOptions {
  std::string hidden = widths_text(TrainConfig{}.hidden), target = target_kind_name(TrainConfig{}.target);
  std::string group_by = FitOptions{}.group_column;
  std::string init, qat = "none", sparsity = "none", sparsity_method = "fixed-mask";
  std::string kill_budget = kill_budget_name(RequestAwareOptions{}.budget);
  std::string at, censored = kDefaultCensored;
  ModelChoiceOptions choices;
  double split = kDefaultSplit;
  FitOptions fit;
  bool quiet = false;
};

// Every training option and --split and --quiet; not --data, --out or the trace input
// options, which are the program's input and output.
void add_train_options(CLI::App& cmd, TrainCliOptions& o);

// The FitOptions the parsed options `o` of `cmd` ask for. A fine-tune (--init) loads its
// starting model into `start`, which the result points to, and takes the fine-tuning
// defaults where `cmd` did not set the option. Throws Error naming the option of a bad value.
FitOptions resolve_train_options(TrainCliOptions& o, const CLI::App& cmd, ModelFile& start);

}  // namespace ttlpred::app
