// `ttlpred train`: a trace in, a model file out (network, encoder, history, safe-TTL
// calibration), on the chronological protocol that `ttlpred eval` scores.
#include <cstdio>
#include <memory>
#include <string>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "app/train_run.hpp"
#include "data/trace_readers.hpp"
#include "model/model_file.hpp"
#include "pipeline/fit_model.hpp"
#include "train/progress.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {
namespace {

struct TrainOptions {
  std::string data, out;
  TraceInput input;
  TrainCliOptions train;
};

void run_train(TrainOptions& o, const CLI::App& cmd) {
  ModelFile start;
  const FitOptions fit = resolve_train_options(o.train, cmd, start);
  const CompressionConfig& comp = fit.compression;
  if (fit.init)
    std::fprintf(stderr, "train: fine-tuning %s%s%s\n", o.train.init.c_str(), comp.any() ? " for " : "",
                 compression_label(comp).c_str());
  else if (comp.any())
    std::fprintf(stderr, "train: fp32 training, then fine-tuning for %s\n", compression_label(comp).c_str());
  std::string trace_format;
  const ChronologicalSplit split = chronological_split(load_trace(o.data, o.input, false, &trace_format), o.train.split);
  std::fprintf(stderr, "train: %zu eligible jobs (%zu without run time, %zu without request dropped); training on the first %zu\n",
               split.jobs.rows(), split.dropped_no_runtime, split.dropped_no_request, split.train_rows);
  FitReport report;
  ModelFile model = fit_model(split, fit, o.train.quiet ? ProgressFn{} : stderr_progress(), &report);
  model.provenance.trace_format = trace_format;
  model.provenance.trace_name = o.data == "-" ? std::string(kStandardInputName) : o.data.substr(o.data.rfind('/') + 1);
  save_model_file(o.out, model);
  if (comp.any())
    std::printf("compressed for the %s variant (%s)\n", std::string(engine::variant_name(compressed_variant(comp))).c_str(),
                compression_label(comp).c_str());
  std::printf("trained on %zu jobs (+%zu held out for the safe TTL) in %.1f s: best epoch %u, validation RMSE %.3f h, "
              "calibration RMSE %.3f h, safe-TTL groups: %s\nwrote %s\n",
              report.fit_rows, report.calibration_rows, report.seconds, report.train.best_epoch,
              report.train.best_val_rmse_hours, report.calibration_rmse_hours,
              report.group_column.empty() ? "none" : report.group_column.c_str(), o.out.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  auto* cmd = app.add_subcommand("train", "Train a model on the first part of a trace (chronological split)");
  cmd->option_defaults()->group("Input and output");
  cmd->add_option("--data", o->data, kDataHelp)->required();
  cmd->add_option("--out", o->out, "model file to write (atomically)")->required();
  add_trace_input_options(*cmd, o->input);
  add_train_options(*cmd, o->train);
  add_config_and_environment(*cmd);
  cmd->callback([o, cmd] { run_train(*o, *cmd); });
}

}  // namespace ttlpred::cli
