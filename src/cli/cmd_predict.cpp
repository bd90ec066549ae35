// `ttlpred predict`: one line per job of a trace: expected wall time and safe TTL. History
// features start from the state the model file carries and follow the trace leak-free, as a
// deployed service that receives outcomes would see it; a job without a submit time is
// predicted as of now, as the service does (features/history.hpp).
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>

#include "engine/variant.hpp"
#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "cli/prediction_output.hpp"
#include "features/history.hpp"
#include "pipeline/predict_history.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred::cli {
namespace {

struct PredictOptions {
  std::string model, data, out, format = "csv", variant = "auto", isa, device = kDefaultDevice;
  std::string at;  // "": the model's prediction time
  double alpha = kDefaultAlpha;
  BoundOptions bounds;
  bool allow_schema_mismatch = false;
  TraceInput input;
};

void run_predict(const PredictOptions& o) {
  check_prediction_format(o.format);
  const Predictor predictor = Predictor::load(o.model, predictor_options(o.variant, o.isa, o.alpha, o.bounds, o.device));
  std::string trace_format;
  const JobTable table = load_trace(o.data, o.input, true, &trace_format);
  check_model_fits_trace(predictor, o.model, table, trace_format, o.allow_schema_mismatch);
  const PredictHistory ph =
      predict_history(predictor, table, parse_prediction_time(o.at, predictor.encoder().history_config().at));
  if (ph.source == HistorySource::TraceFromStart)
    std::fprintf(stderr, "ttlpred: note: %s begins with the model's training jobs: every job's history is replayed from "
                 "the trace alone, as eval scores it\n", o.data.c_str());
  else if (ph.source == HistorySource::Both)
    std::fprintf(stderr, "ttlpred: note: %zu jobs of %s are from the model's training period: their history is replayed "
                 "from the trace alone; the later jobs' from the model's saved state and the trace's later jobs\n",
                 ph.training_period_rows, o.data.c_str());
  const HistoryMatrix& history = ph.features;
  std::vector<std::size_t> rows(table.rows());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  const auto predictions = predictor.predict_rows(table, rows, history);
  if (o.out.empty() || o.out == "-") return write_predictions(stdout, o.format, table, rows, predictions, false);
  write_file_atomic_stream(o.out, [&](std::FILE* f) { write_predictions(f, o.format, table, rows, predictions, false); });
  std::fprintf(stderr, "wrote %zu predictions to %s\n", predictions.size(), o.out.c_str());
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  auto* cmd = app.add_subcommand("predict", "Expected wall time and safe TTL for every job of a trace");
  add_model_and_data_options(*cmd, o->model, o->data);
  add_trace_input_options(*cmd, o->input, false);
  cmd->add_option("--out", o->out,
                  "output file (default: standard output): job_id, expected_wall_s, safe_ttl_s, capped, and for a model "
                  "with quantile heads upper_s (the quantile its safe TTL is built on) and cold (a cold start)");
  cmd->add_option("--format", o->format, "csv or jsonl")->capture_default_str();
  add_variant_options(*cmd, o->variant, o->isa, o->alpha);
  add_device_option(*cmd, o->device);
  add_bound_options(*cmd, o->bounds);
  add_prediction_time_option(*cmd, o->at,
                             "when each job is predicted: submit or match (default: the time the model was trained "
                             "for, submit unless it was trained with --at match, which cannot predict at submit)");
  cmd->add_flag("--allow-schema-mismatch", o->allow_schema_mismatch,
                "predict anyway for a trace that lacks most of the job fields the model was trained on");
  cmd->callback([o] { run_predict(*o); });
}

}  // namespace ttlpred::cli
