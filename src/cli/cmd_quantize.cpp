// `ttlpred quantize`: measures the activation ranges of a model on calibration data and
// stores them in a copy of the model file, which the `int8-static` variants then use.
#include <cstdio>
#include <memory>
#include <string>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "model/model_file.hpp"
#include "pipeline/quantize_model.hpp"
#include "pipeline/split.hpp"

namespace ttlpred::cli {
namespace {

struct QuantizeOptions {
  // minmax: percentile (99.99) and mse clip rare feature values the synthetic trace needs
  // (int8-static +36 % / +29 % RMSE there, minmax +0.2 %; docs/ACCURACY.md).
  std::string model, calib, out, method{quant::range_method_name(quant::ActivationRangeOptions{}.method)};
  double percentile = quant::ActivationRangeOptions{}.percentile;
  double split = kDefaultSplit;  // the training part
  std::size_t max_rows = kDefaultCalibrationRows;
};

void run_quantize(const QuantizeOptions& o) {
  ModelFile model = load_model_file(o.model);
  quant::ActivationRangeOptions co;
  co.method = quant::range_method_from_name(o.method);
  co.percentile = o.percentile;
  quant::ActivationRanges ranges;
  if (o.split < 1.0) {
    // The protocol's training part only: the jobs the model learned from, in submit order.
    const ChronologicalSplit split = chronological_split(load_trace(o.calib, true), o.split);
    ranges = add_int8_calibration(model, split.jobs, co, o.max_rows, split.train_rows);
  } else {
    ranges = add_int8_calibration(model, load_trace(o.calib, true), co, o.max_rows);
  }
  save_model_file(o.out, model);
  std::printf("calibrated %zu layers on up to %zu rows of %s (%s); wrote %s\n", ranges.layer_inputs.size(), o.max_rows,
              o.calib.c_str(), o.method.c_str(), o.out.c_str());
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto o = std::make_shared<QuantizeOptions>();
  auto* cmd = app.add_subcommand("quantize", "Calibrate int8 activation ranges of a model on calibration data");
  cmd->add_option("--model", o->model, "model file")->required();
  cmd->add_option("--calib", o->calib, "calibration trace (e.g. the training data)")->required();
  cmd->add_option("--out", o->out, "model file to write, with int8 calibration")->required();
  cmd->add_option("--method", o->method, "range choice: minmax, percentile or mse")->capture_default_str();
  cmd->add_option("--percentile", o->percentile, "upper percentile for --method percentile")->capture_default_str();
  cmd->add_option("--max-rows", o->max_rows, "rows used, evenly strided over the file")->capture_default_str();
  cmd->add_option("--split", o->split,
                  "calibrate on the first fraction of the eligible jobs in submit order (the part train --split learned from); 1 = every job")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  cmd->callback([o] { run_quantize(*o); });
}

}  // namespace ttlpred::cli
