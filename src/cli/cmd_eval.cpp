// `ttlpred eval`: scores a model on the tail of a chronological split (pipeline/evaluate.hpp's protocol).
#include <cstdio>
#include <memory>
#include <numeric>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/variant.hpp"
#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "app/eval_report.hpp"
#include "cli/prediction_output.hpp"
#include "model/online_calibration.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/model_checks.hpp"
#include "pipeline/split.hpp"
#include "pipeline/split_history.hpp"
#include "util/file_io.hpp"

namespace ttlpred::cli {
namespace {

struct EvalOptions {
  std::string model, data, variant = "auto", isa, device = kDefaultDevice, per_job, per_job_format = "csv";
  // The default calibration (kDefaultCalibration), as the service answers: eval scores what it answers.
  OnlineCalibrationCli calibration;
  std::string calibration_key = kDefaultCalibrationKey;
  std::string at;  // "": the model's prediction time
  double split = kDefaultSplit, alpha = kDefaultAlpha;
  BoundOptions bounds;
  bool json = false, allow_overlap = false, allow_schema_mismatch = false;
  TraceInput input;
};

void run_eval(const EvalOptions& o) {
  check_prediction_format(o.per_job_format);
  const Predictor predictor = Predictor::load(o.model, predictor_options(o.variant, o.isa, o.alpha, o.bounds, o.device));
  std::string format;
  JobTable trace = load_trace(o.data, o.input, o.json, &format);
  check_model_fits_trace(predictor, o.model, trace, format, o.allow_schema_mismatch);
  const ChronologicalSplit split = chronological_split(std::move(trace), o.split);
  const ModelCheck overlap = check_split_overlap(predictor.model(), split, "model " + o.model);
  enforce(overlap, o.allow_overlap, "--allow-overlap");
  EvaluationCalibration calibration;
  calibration.online = online_calibration_options(o.calibration);
  calibration.key_column = o.calibration_key;
  const HistoryConfig& hcfg = predictor.encoder().history_config();
  const HistoryMatrix history = split_history(split, hcfg, parse_prediction_time(o.at, hcfg.at));
  const Evaluation e = evaluate(predictor, split, &history, calibration);
  if (!o.per_job.empty()) {
    std::vector<std::size_t> scored(split.scored_rows());
    std::iota(scored.begin(), scored.end(), split.train_rows);
    write_file_atomic_stream(o.per_job, [&](std::FILE* f) {
      write_predictions(f, o.per_job_format, split.jobs, scored, e.predictions, true);
    });
    std::fprintf(stderr, "wrote %zu scored predictions to %s\n", scored.size(), o.per_job.c_str());
  }
  if (!o.json) {
    std::printf("model %s on %s (variant %s on %s, alpha %.3g, %s calibration)\n", o.model.c_str(), o.data.c_str(),
                std::string(engine::variant_name(predictor.backend().variant())).c_str(),
                std::string(predictor.backend().target()).c_str(), o.alpha, o.calibration.name.c_str());
    if (const TrainingProvenance& t = predictor.model().provenance; !t.empty())
      std::printf("  the model learned from %llu jobs of %s (split %.3g)\n", static_cast<unsigned long long>(t.train_rows),
                  t.trace_name.empty() ? "its training trace" : t.trace_name.c_str(), t.split);
    if (overlap.overlap_rows > 0)
      std::printf("  WARNING: %zu of the scored jobs were trained on (--allow-overlap): the scores flatter the model\n",
                  overlap.overlap_rows);
    return print_evaluation(stdout, e);
  }
  nlohmann::json j = evaluation_json(e);
  j["training_rows_scored"] = overlap.overlap_rows;
  j["variant"] = std::string(engine::variant_name(predictor.backend().variant()));
  j["isa"] = std::string(predictor.backend().target());
  j["alpha"] = o.alpha;
  j["calibration"] = o.calibration.name;
  if (o.calibration.name != "static") {
    j["gamma"] = o.calibration.gamma;
    j["target_scale"] = o.calibration.target_scale;
  }
  std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* cmd = app.add_subcommand("eval", "Score a model on the part of a trace after the chronological split");
  add_model_and_data_options(*cmd, o->model, o->data);
  add_trace_input_options(*cmd, o->input);
  cmd->add_option("--split", o->split, "fraction of eligible jobs the model was trained on")->capture_default_str()->check(split_fraction_check());
  cmd->add_flag("--allow-overlap", o->allow_overlap,
                "score anyway when --split is below the model's training split on the same data (the scored jobs "
                "then include jobs it learned from; refused without this flag)");
  cmd->add_flag("--allow-schema-mismatch", o->allow_schema_mismatch,
                "score anyway a trace that lacks most of the job fields the model was trained on (refused without it)");
  add_bound_options(*cmd, o->bounds);
  add_variant_options(*cmd, o->variant, o->isa, o->alpha,
                      " (fp32-fused unless it was fine-tuned with --qat/--sparsity)");
  add_device_option(*cmd, o->device);
  add_calibration_option(*cmd, o->calibration.name,
                         "safe-TTL calibration of the scored jobs: static (the model's, as `predict` answers), or online "
                         "from the outcomes known at each job's submit time: rolling, aci, aci-capped, multi-aci, mondrian, "
                         "or aci-log, mondrian-log (the level stepped in log space) (docs/ACCURACY.md)",
                         [](const std::string& name) { answering_calibration_from_name(name); });
  add_calibration_key_option(*cmd, o->calibration_key);
  add_online_tuning_options(*cmd, o->calibration);
  add_prediction_time_option(*cmd, o->at,
                             "when the scored jobs are predicted: submit or match (default: the time the model was "
                             "trained for, submit unless it was trained with --at match, which cannot be scored at submit)");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_option("--per-job", o->per_job,
                  "also write every scored job's prediction to this file (job_id, expected_wall_s, safe_ttl_s, capped, "
                  "then wall_s, requested_ttl_s, and upper_s, cold for a model with quantile heads): the figures can be "
                  "recomputed from it, and with --calibration static "
                  "it matches `predict` line for line on the same jobs");
  cmd->add_option("--per-job-format", o->per_job_format, "csv or jsonl")->capture_default_str();
  cmd->callback([o] { run_eval(*o); });
}

}  // namespace ttlpred::cli
