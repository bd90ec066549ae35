#include "app/train_run.hpp"

#include <cstdio>

#include "features/encoder.hpp"
#include "model/request_aware_ttl.hpp"
#include "train/compression.hpp"
#include "util/error.hpp"

namespace ttlpred::app {
namespace {

// Fine-tuning defaults (set_finetune_defaults) where the command line is silent.
void apply_finetune_defaults(TrainConfig& t, const CLI::App& cmd) {
  const TrainConfig given = t;
  set_finetune_defaults(t);
  if (cmd.count("--epochs")) t.max_epochs = given.max_epochs;
  if (cmd.count("--patience")) t.patience = given.patience;
  if (cmd.count("--lr")) t.learning_rate = given.learning_rate;
  if (cmd.count("--dropout")) t.dropout = given.dropout;
}

}  // namespace

void add_train_options(CLI::App& cmd, TrainCliOptions& o) {
  cmd.option_defaults()->group("Input and output");
  cmd.add_option("--split", o.split, "fraction of eligible jobs, in submit order, to train on")->capture_default_str()->check(split_fraction_check());
  cmd.add_flag("--quiet", o.quiet, "no per-epoch progress");
  cmd.option_defaults()->group("Network and training");
  cmd.add_option("--hidden", o.hidden, "hidden layer widths")->capture_default_str();
  cmd.add_option("--target", o.target, "regression target: hours, log1p or power")->capture_default_str();
  cmd.add_option("--epochs", o.fit.train.max_epochs, "maximum epochs")->capture_default_str();
  cmd.add_option("--patience", o.fit.train.patience, "epochs without improvement before stopping")->capture_default_str();
  cmd.add_option("--batch-size", o.fit.train.batch_size, "mini-batch size")->capture_default_str();
  cmd.add_option("--lr", o.fit.train.learning_rate, "peak learning rate (AdamW)")->capture_default_str();
  cmd.add_option("--dropout", o.fit.train.dropout, "dropout on hidden activations")->capture_default_str();
  cmd.add_option("--weight-decay", o.fit.train.weight_decay, "decoupled weight decay")->capture_default_str();
  cmd.add_option("--validation-fraction", o.fit.train.validation_fraction,
                 "chronological tail of the training rows held out to pick the best epoch and stop early (0: "
                 "none, every epoch trains and the last is kept)")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  cmd.add_option("--ensemble", o.fit.ensemble, "average this many seeds into one network (at least 1)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd.add_option("--seed", o.fit.train.seed, "random seed")->capture_default_str();
  cmd.add_option("--threads", o.fit.train.threads, "training threads (0 = all cores)")->capture_default_str();
  cmd.add_option("--init", o.init,
                 "fine-tune this model file (its encoder and target kept) instead of training from scratch");
  cmd.option_defaults()->group("Features");
  add_prediction_time_option(cmd, o.at,
                             "when the model predicts: submit (default; history as of each job's submission) or match "
                             "(history as of its start, submit + wait, plus the jobs of its keys running then)");
  add_censored_option(cmd, o.censored);
  add_model_choice_options(cmd, o.choices);
  cmd.option_defaults()->group("Safe TTL");
  // --quantiles (add_model_choice_options, with the features) makes the safe TTL per job: here.
  cmd.get_option("--quantiles")->group(std::string("Safe TTL"));
  cmd.add_option("--calibration-fraction", o.fit.calibration_fraction,
                 "tail of the training jobs held out to calibrate the safe TTL")->capture_default_str();
  cmd.add_option("--group-by", o.group_by, "safe-TTL calibration groups: auto, none, or a column name")
      ->capture_default_str();
  cmd.add_option("--ttl-alpha-scale", o.fit.safe_ttl.request.alpha_scale,
                 "request-aware safe TTL: calibrate for alpha x this many kills (drift margin)")->capture_default_str();
  cmd.add_option("--ttl-min-saving", o.fit.safe_ttl.request.min_saving_per_kill,
                 "request-aware safe TTL: mean requests of TTL a kill must free")->capture_default_str();
  cmd.add_option("--ttl-max-exponent", o.fit.safe_ttl.request.max_exponent,
                 "request-aware safe TTL: larger exponents on the road to the request are the request")
      ->capture_default_str();
  add_kill_budget_option(cmd, o.kill_budget);
  cmd.add_flag("!--no-request-aware-ttl", o.fit.safe_ttl.request_aware,
               "safe TTL from the plain log-ratio margin even for jobs with a request");
  add_ttl_by_group_option(cmd, o.fit.safe_ttl.request_by_group);
  cmd.option_defaults()->group("Compression (for the int8 and 2:4 variants)");
  cmd.add_option("--qat", o.qat, "quantization-aware training: int8 (for the int8-static variant) or none")
      ->check(CLI::IsMember({"int8", "none"}))
      ->capture_default_str();
  cmd.add_option("--sparsity", o.sparsity, "sparsity-aware training: 2:4 (for the 2:4 variants) or none")
      ->check(CLI::IsMember({"2:4", "none"}))
      ->capture_default_str();
  cmd.add_option("--sparsity-method", o.sparsity_method, "2:4 training: fixed-mask (prune, then fine-tune) or sr-ste")
      ->capture_default_str();
  cmd.add_option("--srste-decay", o.fit.compression.srste_decay, "SR-STE: decay on the pruned weights")
      ->capture_default_str();
  cmd.option_defaults()->group("Options");
}

FitOptions resolve_train_options(TrainCliOptions& o, const CLI::App& cmd, ModelFile& start) {
  FitOptions fit = o.fit;
  CompressionConfig& comp = fit.compression;
  comp.qat_int8 = o.qat == "int8";
  comp.sparse_2_4 = o.sparsity == "2:4";
  comp.sparsity_method = sparsity_method_from_name(o.sparsity_method);
  if (!o.init.empty()) {
    start = load_model_file(o.init);
    fit.init = &start;
    apply_finetune_defaults(fit.train, cmd);
  }
  fit.train.hidden = parse_widths(o.hidden, "--hidden");
  fit.train.target = parse_target_kind(o.target);
  fit.group_column = o.group_by == "none" ? "" : o.group_by;
  fit.safe_ttl.request.budget = kill_budget_from_name(o.kill_budget);
  fit.at = parse_prediction_time(o.at, PredictionTime::Submit);
  fit.censored = parse_censored(o.censored);
  apply_model_choices(o.choices, fit);
  if (fit.init && !o.at.empty() && fit.at != FeatureEncoder::from_bytes(start.encoder, o.init).history_config().at)
    throw Error("--at: a fine-tune keeps the prediction time its starting model " + o.init + " was trained for");
  return fit;
}

}  // namespace ttlpred::app
