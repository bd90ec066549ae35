// `ttlpred pipeline`: the main job, on the embedded default data. Generates the synthetic
// ALICE trace, reads it back, trains, quantizes, fine-tunes for compressed inference (int8
// QAT, 2:4, both), evaluates every engine variant on the chronological split, measures the
// serving path (raw job record -> safe TTL) per variant, and writes a report (report.md for
// people, report.json for scripts, report.html with the charts of `ttlpred report`) into --out.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "app/eval_report.hpp"
#include "app/report_figures.hpp"
#include "sim/policy_table.hpp"
#include "util/latency.hpp"
#include "features/history.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/fit_model.hpp"
#include "pipeline/quantize_model.hpp"
#include "pipeline/split.hpp"
#include "pipeline/split_history.hpp"
#include "synth/generator.hpp"
#include "train/progress.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred::cli {
namespace {

struct PipelineOptions {
  std::string out = "out";
  synth::GeneratorConfig data;
  double split = kDefaultSplit, alpha = kDefaultAlpha, bench_seconds = 0.2;
  std::uint32_t epochs = 0;  // 0: the trainer's default
  std::uint32_t finetune_epochs = 0;  // 0: set_finetune_defaults'
  bool summary_only = false, finetune = true;
  std::string at = "match", censored = kDefaultCensored;
  ModelChoiceOptions choices;
};

struct Clock {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

void step(int n, int total, const char* what) {
  std::printf("\n[%d/%d] %s\n", n, total, what);
  std::fflush(stdout);
}

struct VariantRow {
  std::string name, isa;
  std::string training = "fp32";  // how the model it runs was made: fp32 (+PTQ), QAT, 2:4
  Evaluation eval;
  LatencyStats one, batch256;
};

// The serving path of one variant: records from the table, history, encoding, plan, safe TTL.
void measure_serving(const Predictor& p, const JobTable& jobs, const HistoryState& history, double seconds, VariantRow& row) {
  constexpr std::size_t kPool = 4096, kBatch = 256;
  std::vector<JobRecord> records(kPool);
  for (std::size_t i = 0; i < kPool; ++i) jobs.record((i * 7919) % jobs.rows(), records[i]);
  std::vector<Prediction> out(kBatch);
  row.one = measure(
      [&](std::size_t i) { p.predict(std::span(&records[i % kPool], 1), history, out); }, seconds);
  row.batch256 = measure(
      [&](std::size_t i) { p.predict(std::span(records).subspan((i * kBatch) % (kPool - kBatch), kBatch), history, out); },
      seconds);
}

std::string markdown_report(const PipelineOptions& o, const std::string& trace, const std::string& summary,
                            const FitReport& fit, const std::vector<VariantRow>& rows) {
  std::string md = "# ttlpred pipeline report\n\nTrace: `" + trace + "` (synthetic ALICE, " + std::to_string(o.data.jobs) +
                   " jobs, seed " + std::to_string(o.data.seed) + ")\n\n```\n" + summary + "```\n\n";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Training: %zu jobs (+%zu held out for the safe TTL), best epoch %u, validation RMSE %.3f h, %.0f s.\n\n",
                fit.fit_rows, fit.calibration_rows, fit.train.best_epoch, fit.train.best_val_rmse_hours, fit.seconds);
  md += buf;
  if (!rows.empty()) {
    const Evaluation& e = rows.front().eval;
    std::snprintf(buf, sizeof buf,
                  "Scored %zu later jobs (split %.2f). Static TTL RMSE %s h, oracle %s h. Safe TTL at alpha %.3g, "
                  "%s calibration, as `serve` answers.\n\n",
                  e.metrics.rows, o.split, hours_text(e.baseline_rmse_hours).c_str(),
                  hours_text(e.oracle_rmse_hours).c_str(), o.alpha, kDefaultCalibration);
    md += buf;
  }
  md += "| variant | trained as | isa | RMSE h | vs fp32 | kill rate | mean safe TTL h | mean requested TTL h | 1 job us (p50/p99) | 256 jobs us (p50) |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|\n";
  const double base = rows.empty() ? 0 : rows.front().eval.metrics.rmse_hours;
  for (const auto& r : rows) {
    const AccuracyMetrics& m = r.eval.metrics;
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %.3f | %+.2f%% | %.3f%%%s | %.3f | %.3f | %.2f / %.2f | %.1f |\n",
                  r.name.c_str(), r.training.c_str(), r.isa.c_str(), m.rmse_hours, 100 * (m.rmse_hours / base - 1), 100 * m.kill_rate,
                  r.eval.kill_rate_above_alpha() ? " **above alpha**" : "",
                  m.mean_safe_ttl_hours, m.mean_requested_ttl_hours, r.one.median_us, r.one.p99_us,
                  r.batch256.median_us);
    md += buf;
  }
  md += "\n\"trained as\": fp32 = the trained model, compiled as is (post-training quantization; the 2:4 rows "
        "prune it by magnitude without retraining); int8 QAT, 2:4, int8 QAT + 2:4 = fine-tuned from it for that "
        "variant (`ttlpred train --init MODEL --qat int8 --sparsity 2:4`).\n"
        "Latency: one thread, the whole serving path (history lookup, feature encoding, network, safe TTL).\n";
  return md;
}

// report.html: the charts of `ttlpred report` for the fp32 model (fp32-fused), with the
// latency of every row of the table above.
std::string write_html_report(const PipelineOptions& o, const ModelFile& model, const std::string& model_path,
                              const ChronologicalSplit& split, const HistoryMatrix& history,
                              const std::vector<VariantRow>& rows) {
  const VariantRow& fused = rows.at(1);
  report::HtmlPage page("ttlpred pipeline report");
  page.add_facts({{"trace", "synthetic ALICE, " + std::to_string(o.data.jobs) + " jobs, seed " + std::to_string(o.data.seed)},
                  {"model", model_path + " (charts of accuracy and safe TTL: the fp32-fused variant)"},
                  {"scored", std::to_string(split.scored_rows()) + " jobs after the first " +
                                 std::to_string(split.train_rows) + " eligible ones"}});
  page.add_heading("Accuracy");
  add_prediction_density(page, split, fused.eval);
  add_error_by_group(page, fused.eval);
  page.add_heading("Safe TTL");
  PredictorOptions po;
  po.alpha = o.alpha;
  const KillRateCurves curves = kill_rate_curves(model, model_path, po, split, history);
  add_kill_rate_vs_alpha(page, curves);
  add_kill_rate_vs_tightness(page, curves);
  add_kill_rate_by_group(page, fused.eval);
  page.add_heading("Speed");
  std::vector<VariantLatency> latency;
  for (const VariantRow& r : rows)
    latency.push_back({r.training == "fp32" ? r.name : r.name + " (" + r.training + ")", r.isa, r.one.median_us,
                       r.batch256.median_us});
  add_latency_by_variant(page, latency);
  return write_report_html(page, o.out);
}

void run_pipeline(const PipelineOptions& o) {
  const Clock total;
  std::filesystem::create_directories(o.out);
  const int steps = o.summary_only ? 1 : 7;
  const std::string trace = o.out + "/alice-default.csv.gz";

  step(1, steps, "generate the default synthetic ALICE trace");
  synth::TraceStats stats;
  Clock c;
  synth::generate_csv(o.data, trace, &stats);
  const std::string summary = stats.format();
  std::printf("wrote %s in %.1f s\n%s", trace.c_str(), c.seconds(), summary.c_str());
  if (o.summary_only) return;

  step(2, steps, "read it back and train (chronological split)");
  c = Clock{};
  const ChronologicalSplit split = chronological_split(load_trace(trace), o.split);
  FitOptions fit_options;
  if (o.epochs) fit_options.train.max_epochs = o.epochs;
  fit_options.at = parse_prediction_time(o.at, PredictionTime::Match);
  fit_options.censored = parse_censored(o.censored);
  apply_model_choices(o.choices, fit_options);
  FitReport fit;
  ModelFile model = fit_model(split, fit_options, stderr_progress(), &fit);
  model.provenance.trace_format = "csv";  // the generated trace; the fine-tunes inherit it
  model.provenance.trace_name = "alice-default.csv.gz";

  step(3, steps, "quantize: int8 activation ranges from the training jobs");
  add_int8_calibration(model, split.jobs, quant::ActivationRangeOptions{}, kDefaultCalibrationRows, split.train_rows);
  const std::string model_path = o.out + "/model.ttlp";
  save_model_file(model_path, model);
  std::printf("wrote %s (trained in %.0f s)\n", model_path.c_str(), c.seconds());

  // Every row of the report: a model and the variant it runs.
  struct Entry {
    const ModelFile* model;
    std::string path, training;
    engine::Variant variant;
  };
  std::vector<Entry> entries;
  for (engine::Variant v : engine::variants_from_list("all")) entries.push_back({&model, model_path, "fp32", v});

  step(4, steps, "fine-tune for compressed inference: int8 QAT, 2:4 sparsity, both");
  std::vector<ModelFile> tuned;
  tuned.reserve(3);  // entries point into it: no reallocation
  if (o.finetune) {
    const struct {
      bool qat, sparse;
      const char *file, *shown;
    } kinds[] = {{true, false, "/model-int8-qat.ttlp", "int8 QAT"},
                 {false, true, "/model-2of4.ttlp", "2:4"},
                 {true, true, "/model-int8-qat-2of4.ttlp", "int8 QAT + 2:4"}};
    for (const auto& k : kinds) {
      FitOptions ft;
      set_finetune_defaults(ft.train);
      if (o.finetune_epochs) ft.train.max_epochs = o.finetune_epochs;
      ft.init = &model;
      ft.compression.qat_int8 = k.qat;
      ft.compression.sparse_2_4 = k.sparse;
      std::printf("%s:\n", k.shown);
      std::fflush(stdout);
      c = Clock{};
      tuned.push_back(fit_model(split, ft, stderr_progress(), nullptr));
      const std::string path = o.out + k.file;
      save_model_file(path, tuned.back());
      std::printf("wrote %s (%.0f s)\n", path.c_str(), c.seconds());
      entries.push_back({&tuned.back(), path, k.shown, compressed_variant(ft.compression)});
    }
  } else {
    std::printf("skipped (--no-finetune)\n");
  }

  step(5, steps, "evaluate every engine variant on the later jobs, and time the serving path");
  std::vector<VariantRow> rows;
  const HistoryMatrix history =
      split_history(split, FeatureEncoder::from_bytes(model.encoder, model_path).history_config());
  // Scored as `eval` and `serve` answer by default: the default calibration, following the
  // outcomes of the jobs finished before each submit.
  EvaluationCalibration calibration;
  calibration.online = online_calibration_options(OnlineCalibrationCli{});
  for (const Entry& en : entries) {
    PredictorOptions po;
    po.variant = en.variant;
    po.alpha = o.alpha;
    const Predictor p(*en.model, po, en.path);
    VariantRow row;
    row.name = std::string(engine::variant_name(en.variant));
    row.training = en.training;
    row.isa = std::string(p.backend().target());
    row.eval = evaluate(p, split, &history, calibration);
    measure_serving(p, split.jobs, p.initial_history(), o.bench_seconds, row);
    std::printf("  %-13s %-15s RMSE %.3f h  kill rate %.3f%%  safe TTL %.2f h  1 job %.2f us  256 jobs %.1f us\n",
                row.name.c_str(), row.training.c_str(), row.eval.metrics.rmse_hours, 100 * row.eval.metrics.kill_rate,
                row.eval.metrics.mean_safe_ttl_hours, row.one.median_us, row.batch256.median_us);
    if (const std::string w = kill_rate_warning(row.eval); !w.empty()) std::printf("  %-13s %s\n", row.name.c_str(), w.c_str());
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }

  step(6, steps, "report");
  std::printf("\nfp32-fused evaluation (by job type):\n");
  print_evaluation(stdout, rows.at(1).eval);
  const std::string md = markdown_report(o, trace, summary, fit, rows);
  nlohmann::json j;
  j["trace"] = trace;
  j["model"] = model_path;
  j["variants"] = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json vj = evaluation_json(r.eval);
    vj["variant"] = r.name;
    vj["trained_as"] = r.training;
    vj["isa"] = r.isa;
    vj["serve_one_median_us"] = r.one.median_us;
    vj["serve_one_p99_us"] = r.one.p99_us;
    vj["serve_256_median_us"] = r.batch256.median_us;
    j["variants"].push_back(vj);
  }
  const std::string js = j.dump(2);
  const std::string html = write_html_report(o, model, model_path, split, history, rows);
  write_file_atomic(o.out + "/report.md", std::vector<std::uint8_t>(md.begin(), md.end()));
  write_file_atomic(o.out + "/report.json", std::vector<std::uint8_t>(js.begin(), js.end()));
  std::printf("\n%s\nwrote %s/report.md and %s/report.json\n", md.c_str(), o.out.c_str(), o.out.c_str());

  // What the TTLs buy: the broker simulated on the scored jobs with each TTL policy
  // (docs/SIMULATION.md); the same numbers as `ttlpred simulate --scheduler jalien`. The
  // model's TTLs twice: through the calibration `serve` answers with by default, and through
  // aci-log at 0.35 alpha, the tuning that gains the most slots in this simulation.
  step(7, steps, "simulate the JAliEn broker with static, model and oracle TTLs");
  PredictorOptions po;
  po.variant = model_made_for(model);
  po.alpha = o.alpha;
  const Predictor predictor(model, po, model_path);
  const sim::SimTrace st = sim::prepare_trace(load_trace(trace, true), o.split, &predictor);
  const sim::GridOptions grid, online = sim::recommended_online_options();
  const auto sim_rows = sim::jalien_policy_rows(st, grid, {online});
  const std::string sim_md = "\n## Simulation: the JAliEn broker on the scored jobs\n\n" +
                             sim::policy_table_caption(o.alpha, {grid, online}) + sim::policy_table_markdown(sim_rows);
  const std::string md_all = md + sim_md;
  j["simulation"] = sim::policy_table_json(sim_rows);
  const std::string js_all = j.dump(2);
  write_file_atomic(o.out + "/report.md", std::vector<std::uint8_t>(md_all.begin(), md_all.end()));
  write_file_atomic(o.out + "/report.json", std::vector<std::uint8_t>(js_all.begin(), js_all.end()));
  std::printf("%s\nwrote %s/report.md, %s/report.json and %s; total %.0f s\n", sim_md.c_str(), o.out.c_str(), o.out.c_str(),
              html.c_str(), total.seconds());
}

}  // namespace

void add_pipeline_command(CLI::App& app) {
  auto o = std::make_shared<PipelineOptions>();
  auto* cmd = app.add_subcommand("pipeline",
                                 "The main job on the embedded default data: generate -> train -> quantize -> evaluate "
                                 "-> time -> report");
  cmd->add_option("--out", o->out, "output folder")->capture_default_str();
  cmd->add_option("--jobs", o->data.jobs, "jobs in the synthetic trace")->capture_default_str()->check(CLI::Range(1000, 100000000));
  cmd->add_option("--seed", o->data.seed, "trace seed")->capture_default_str();
  cmd->add_option("--split", o->split, "fraction trained on")->capture_default_str()->check(split_fraction_check());
  add_alpha_option(*cmd, o->alpha);
  cmd->add_option("--epochs", o->epochs, "maximum training epochs (0 = the trainer's default)");
  cmd->add_option("--bench-seconds", o->bench_seconds, "time per latency measurement")->capture_default_str();
  cmd->add_option("--finetune-epochs", o->finetune_epochs, "maximum epochs of each compressed fine-tune (0 = default)");
  cmd->add_flag("!--no-finetune", o->finetune, "skip the QAT and 2:4 fine-tunes");
  cmd->add_flag("--summary-only", o->summary_only, "only generate the trace and print its summary");
  add_prediction_time_option(*cmd, o->at,
                             "when the model predicts (train --at): match, where the ALICE broker decides, in its matching loop "
                             "with the pilot's site and host known; or submit, before any of them is")
      ->capture_default_str();
  add_censored_option(*cmd, o->censored);
  add_model_choice_options(*cmd, o->choices);
  cmd->callback([o] { run_pipeline(*o); });
}

}  // namespace ttlpred::cli
