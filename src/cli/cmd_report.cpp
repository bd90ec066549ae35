// `ttlpred report --model MODEL --data FILE --out DIR`: the visual report of a model on a
// trace, DIR/report.html: a self-contained page (inline SVG, no scripts, no network) with
// predicted against actual run time, error and kill rate by job type or queue, the safe
// TTL's kill rate against alpha and against TTL tightness next to the simple-rule anchor,
// and serving latency per engine variant. It scores the jobs after the chronological split,
// with the checks of `ttlpred eval`.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/variant.hpp"
#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "app/eval_report.hpp"
#include "app/report_figures.hpp"
#include "model/model_file.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/model_checks.hpp"
#include "pipeline/split.hpp"
#include "pipeline/split_history.hpp"
#include "report/html_page.hpp"

namespace ttlpred::cli {
namespace {

struct ReportOptions {
  std::string model, data, out, variant = "auto", isa, variants = "all";
  double split = kDefaultSplit, alpha = kDefaultAlpha, bench_seconds = 0.1;
  BoundOptions bounds;
  bool allow_overlap = false, allow_schema_mismatch = false;
};

void run_report(const ReportOptions& o) {
  const PredictorOptions options = predictor_options(o.variant, o.isa, o.alpha, o.bounds);
  const Predictor predictor = Predictor::load(o.model, options);
  std::string format;
  JobTable trace = load_trace(o.data, false, &format);
  check_model_fits_trace(predictor, o.model, trace, format, o.allow_schema_mismatch);
  const ChronologicalSplit split = chronological_split(std::move(trace), o.split);
  enforce(check_split_overlap(predictor.model(), split, "model " + o.model), o.allow_overlap, "--allow-overlap");
  const HistoryMatrix history = split_history(split, predictor.encoder().history_config());
  const Evaluation e = evaluate(predictor, split, &history);
  PredictorOptions resolved = options;  // the curves run the variant the report is about
  resolved.variant = predictor.backend().variant();
  resolved.variant_from_model = false;
  const KillRateCurves curves = kill_rate_curves(predictor.model(), o.model, resolved, split, history);
  const auto latency = measure_variant_latency(predictor.model(), o.model, resolved, split.jobs,
                                               engine::variants_from_list(o.variants), o.bench_seconds);

  report::HtmlPage page("ttlpred report: " + o.model.substr(o.model.rfind('/') + 1) + " on " +
                        o.data.substr(o.data.rfind('/') + 1));
  const AccuracyMetrics& m = e.metrics;
  const TrainingProvenance& learned = predictor.model().provenance;
  const std::string model_fact =
      learned.empty() ? o.model
                      : o.model + " (learned from " + std::to_string(learned.train_rows) + " jobs of " +
                            (learned.trace_name.empty() ? std::string("its training trace") : learned.trace_name) + ")";
  page.add_facts({{"model", model_fact},
                  {"trace", o.data + " (" + format + ")"},
                  {"split", "scored the " + std::to_string(split.scored_rows()) + " eligible jobs after the first " +
                                std::to_string(split.train_rows) + " of this trace"},
                  {"variant", std::string(engine::variant_name(predictor.backend().variant())) + " on " +
                                  std::string(predictor.backend().target())},
                  {"RMSE", hours_text(m.rmse_hours) + " h (static TTL " + hours_text(e.baseline_rmse_hours) + " h)"},
                  {"safe TTL", "kill rate " + percent_text(m.kill_rate) + " at alpha " + percent_text(o.alpha) + ", mean " +
                                   hours_text(m.mean_safe_ttl_hours) +
                                   " h (requested " + hours_text(m.mean_requested_ttl_hours) + " h)"}});
  page.add_heading("Accuracy");
  add_prediction_density(page, split, e);
  add_error_by_group(page, e);
  page.add_heading("Safe TTL");
  add_kill_rate_vs_alpha(page, curves);
  add_kill_rate_vs_tightness(page, curves);
  add_kill_rate_by_group(page, e);
  page.add_heading("Speed");
  add_latency_by_variant(page, latency);
  std::filesystem::create_directories(o.out);
  const std::string path = write_report_html(page, o.out);
  std::printf("wrote %s (%zu charts): RMSE %s h, kill rate %s at alpha %s\n", path.c_str(), page.charts(),
              hours_text(m.rmse_hours).c_str(), percent_text(m.kill_rate).c_str(), percent_text(o.alpha).c_str());
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Write a self-contained HTML report (charts) of a model on a trace");
  add_model_and_data_options(*cmd, o->model, o->data);
  cmd->add_option("--out", o->out, "output folder (report.html is written there)")->required();
  cmd->add_option("--split", o->split, "fraction of eligible jobs the model was trained on")->capture_default_str()->check(split_fraction_check());
  add_variant_options(*cmd, o->variant, o->isa, o->alpha);
  cmd->add_option("--variants", o->variants, "engine variants of the latency chart (comma list of " + engine::variant_names_list() + ", or all)")->capture_default_str();
  cmd->add_option("--bench-seconds", o->bench_seconds, "time per latency measurement")->capture_default_str();
  add_bound_options(*cmd, o->bounds);
  cmd->add_flag("--allow-overlap", o->allow_overlap, "report anyway when the scored jobs include training jobs");
  cmd->add_flag("--allow-schema-mismatch", o->allow_schema_mismatch, "report anyway for a trace of another schema");
  cmd->callback([o] { run_report(*o); });
}

}  // namespace ttlpred::cli
