#include "pipeline/fit_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include <nlohmann/json.hpp>

#include "features/history.hpp"
#include "model/creation_time.hpp"
#include "pipeline/censored_outcomes.hpp"
#include "pipeline/history_estimates.hpp"
#include "pipeline/model_checks.hpp"
#include "pipeline/split_history.hpp"
#include "predict/predictor.hpp"
#include "quant/activation_ranges_io.hpp"
#include "train/ensemble.hpp"
#include "train/metrics.hpp"
#include "train/mlp_trainer.hpp"
#include "util/error.hpp"
#include "util/version.hpp"

namespace ttlpred {
namespace {

std::vector<std::size_t> iota_rows(std::size_t begin, std::size_t end) {
  std::vector<std::size_t> r(end - begin);
  std::iota(r.begin(), r.end(), begin);
  return r;
}

std::vector<float> column_as_float(std::span<const double> col, std::size_t begin, std::size_t end) {
  std::vector<float> out(end - begin);
  for (std::size_t i = begin; i < end; ++i) out[i - begin] = static_cast<float>(col[i]);
  return out;
}

}  // namespace

void set_finetune_defaults(TrainConfig& t) {
  t.max_epochs = 6;
  t.patience = 2;
  t.learning_rate = 3e-4f;
  t.warmup_epochs = 0.1f;
  t.dropout = 0.0f;
}

engine::Variant compressed_variant(const CompressionConfig& c) {
  using engine::Compression;
  return engine::variant_serving(c.qat_int8 ? (c.sparse_2_4 ? Compression::QatInt8Sparse24 : Compression::QatInt8)
                                            : (c.sparse_2_4 ? Compression::Sparse24 : Compression::None));
}

std::string auto_group_column(const FeatureEncoder& encoder) {
  for (Field f : {Field::JobType, Field::Queue, Field::Partition})
    for (const auto& c : encoder.category_columns())
      if (c.field == f) return std::string(info(f).name);
  return "";
}

ModelFile fit_model(const ChronologicalSplit& split, const FitOptions& options, const ProgressFn& progress,
                    FitReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  const JobTable& jobs = split.jobs;
  if (options.ensemble == 0) throw Error("ensemble must be at least 1 network (--ensemble)");
  if (!(options.calibration_fraction > 0 && options.calibration_fraction < 0.5))
    throw Error("calibration fraction must be in (0, 0.5)");
  const std::size_t n_train = split.train_rows;
  const std::size_t n_calib = calibration_rows(n_train, options.calibration_fraction);
  const std::size_t n_fit = n_train - n_calib;
  constexpr std::size_t kMinFit = 50, kMinCalib = 20;
  auto enough = [&](std::size_t n) {
    const std::size_t c = calibration_rows(n, options.calibration_fraction);
    return c >= kMinCalib && n - c >= kMinFit;
  };
  if (!enough(n_train)) {
    // The real minimum depends on the calibration fraction (191 at the default 0.1).
    std::size_t need = kMinFit + kMinCalib;
    while (!enough(need)) ++need;
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%g", options.calibration_fraction);
    throw Error("too few training jobs (" + std::to_string(n_train) + "): need at least " + std::to_string(need) +
                " after filtering (" + std::to_string(kMinFit) + " to fit and " + std::to_string(kMinCalib) +
                " to calibrate the safe TTL, which takes a fraction " + fraction + " of them)");
  }
  if (options.compression.any() && !options.init) {
    // Compression without a starting model: train the fp32 model first, then fine-tune it.
    FitOptions dense = options;
    dense.compression = CompressionConfig{};
    const ModelFile start = fit_model(split, dense, progress, nullptr);
    FitOptions tune = options;
    tune.init = &start;
    set_finetune_defaults(tune.train);
    return fit_model(split, tune, progress, report);
  }

  // History over the whole trace is leak-free by construction: a row sees only jobs that had
  // finished by its submit time (split_history.hpp: the rule every command shares).
  // A fine-tuned network reads the features its starting model was trained on.
  const FeatureEncoder start_encoder =
      options.init ? FeatureEncoder::from_bytes(options.init->encoder, "the starting model's encoder") : FeatureEncoder{};
  const HistoryConfig hcfg = options.init ? start_encoder.history_config() : [&] {
    HistoryConfig c = HistoryConfig::for_table(jobs);
    if (!options.request_key) std::erase(c.keys, HistoryKey::UserRequest);
    if (!options.system_key) std::erase(c.keys, HistoryKey::JobTypeSystem);
    c.at = options.at;
    // At submission the job's host is unknown: its work converts to time without a speed.
    if (c.at == PredictionTime::Submit) c.work_per_speed = false;
    if (options.censored_rates && c.at != PredictionTime::Match)
      throw Error("censored work rates (--censored-rates on) need the history at match time (--at match)");
    c.censored_rates = options.censored_rates;
    return c;
  }();
  const HistoryMatrix history = split_history(split, hcfg);

  const auto fit_rows = iota_rows(0, n_fit);
  // A model asked at submission reads only what is known then (the schema's Submit phase):
  // the wait, the slot's cores, the site and host a trace records are not, and a model
  // trained on them would be scored on information its callers cannot give it.
  EncoderOptions encoder_options = options.encoder;
  if (hcfg.at == PredictionTime::Submit) encoder_options.max_phase = Phase::Submit;
  const FeatureEncoder encoder =
      options.init ? start_encoder : FeatureEncoder::fit(jobs, fit_rows, &history, &hcfg, encoder_options);
  const EncodedBatch x = encoder.encode_batch(jobs, fit_rows, &history);
  const auto wall = column_as_float(jobs.num(Field::WallTime), 0, n_fit);
  const auto cap = column_as_float(jobs.num(Field::RequestedTtl), 0, n_fit);
  // Killed jobs' run times are lower bounds: with `censored` they train as such.
  const std::vector<std::uint8_t> lower_bound =
      options.censored ? censored_outcomes(jobs, 0, n_fit) : std::vector<std::uint8_t>{};
  const auto censored_rows = static_cast<std::size_t>(std::count(lower_bound.begin(), lower_bound.end(), 1));

  TrainConfig train_config = options.train;
  if (options.residual && !options.init) {
    train_config.residual_candidates = history_estimate_columns(encoder);
    const std::string by = auto_group_column(encoder);
    const auto& cats = encoder.category_columns();
    for (std::size_t j = 0; j < cats.size(); ++j)
      if (!by.empty() && info(cats[j].field).name == by) train_config.residual_group_cat = static_cast<std::int32_t>(j);
  }
  TrainResult trained;
  if (options.init)
    trained = finetune_mlp(options.init->mlp, options.init->target, x, wall, options.train, options.compression,
                           progress, cap, lower_bound);
  else
    trained = options.ensemble > 1 ? train_ensemble(x, wall, train_config, options.ensemble, progress, cap, lower_bound)
                                   : train_mlp(x, wall, train_config, progress, cap, lower_bound);

  ModelFile m;
  m.mlp = trained.model;
  m.target = trained.target;
  m.encoder = encoder.to_bytes();
  if (options.compression.qat_int8) m.int8_calibration = quant::activation_ranges_bytes(trained.act_ranges);
  m.history = history_after_training(split, hcfg).to_bytes();

  // Safe-TTL calibration on the held-out tail, through the same engine path eval uses.
  const std::string group_column = options.group_column == "auto" ? auto_group_column(encoder) : options.group_column;
  const auto calib_rows = iota_rows(n_fit, n_train);
  std::vector<std::uint32_t> groups;
  PredictorOptions calib_predictor;
  calib_predictor.variant = compressed_variant(options.compression);
  const Predictor uncalibrated(m, calib_predictor);
  std::vector<float> head_quantiles;  // rows x heads, for the per-job safe TTL
  const auto preds = uncalibrated.predict_rows(jobs, calib_rows, history, &groups, group_column,
                                               m.target.quantiles.empty() ? nullptr : &head_quantiles);
  const auto calib_wall = column_as_float(jobs.num(Field::WallTime), n_fit, n_train);
  const auto calib_req = column_as_float(jobs.num(Field::RequestedTtl), n_fit, n_train);
  std::vector<float> cw, cp, all_pred;
  std::vector<std::uint32_t> cg;
  for (std::size_t i = 0; i < calib_rows.size(); ++i) {
    all_pred.push_back(static_cast<float>(preds[i].expected_wall_s));
    // Jobs that outran their own request were killed by it whatever the TTL; the kill rate
    // does not count them, so neither does the calibration.
    if (calib_req[i] > 0 && calib_wall[i] > calib_req[i]) continue;
    cw.push_back(calib_wall[i]);
    cp.push_back(static_cast<float>(preds[i].expected_wall_s));
    if (!group_column.empty()) cg.push_back(groups[i]);
  }
  m.safe_ttl = calibrate_safe_ttl(cw, cp, cg, options.safe_ttl, group_column);
  if (options.safe_ttl.request_aware) {
    // Every calibration row with a request, outrunners included: they are part of the kill
    // rate's denominator (model/request_aware_ttl.hpp).
    // A kill loses the CPU time the job ran: its run time on all its cores (1 when unknown).
    const auto calib_cores = column_as_float(jobs.num(Field::CpuCores), n_fit, n_train);
    std::vector<float> rw, rp, rr, rcpu;
    std::vector<std::uint32_t> rg;
    for (std::size_t i = 0; i < calib_rows.size(); ++i)
      if (calib_req[i] > 0) {
        rw.push_back(calib_wall[i]);
        rp.push_back(all_pred[i]);
        rr.push_back(calib_req[i]);
        if (!group_column.empty()) rg.push_back(groups[i]);
        const float cores = calib_cores[i] >= 1 ? calib_cores[i] : 1.0f;
        rcpu.push_back(std::max(calib_wall[i], static_cast<float>(options.safe_ttl.floor_s)) * cores);
      }
    if (!rw.empty()) {
      RequestAwareOptions ro = options.safe_ttl.request;
      ro.floor_s = options.safe_ttl.floor_s;
      calibrate_request_tables(m.safe_ttl, rw, rp, rr, rg, options.safe_ttl.request_by_group, ro, rcpu);
    }
  }

  if (!m.target.quantiles.empty()) {
    // Every calibration row: outrunners and jobs under their expected time are in the kill
    // rate's denominator and score as never killed (model/quantile_ttl.hpp).
    std::vector<std::uint32_t> qg;
    if (!group_column.empty()) qg = groups;
    std::vector<std::uint8_t> cold(preds.size());
    for (std::size_t i = 0; i < preds.size(); ++i) cold[i] = preds[i].cold ? 1 : 0;
    m.safe_ttl.quantile = calibrate_quantile_ttl(calib_wall, all_pred, calib_req, head_quantiles,
                                                 m.target.quantiles.size(), m.target.quantiles.levels, qg,
                                                 options.safe_ttl.quantile, cold);
  }

  const double calib_rmse = rmse_hours(calib_wall, all_pred);
  nlohmann::json metrics = {{"validation_rmse_hours", trained.best_val_rmse_hours},
                            {"best_epoch", trained.best_epoch},
                            {"fit_rows", n_fit},
                            {"calibration_rows", n_calib},
                            {"calibration_rmse_hours", calib_rmse},
                            {"ensemble", options.ensemble},
                            {"safe_ttl_group_column", group_column},
                            {"safe_ttl_request_aware", !m.safe_ttl.request.empty()},
                            {"safe_ttl_kill_budget", kill_budget_name(options.safe_ttl.request.budget)},
                            {"prediction_time", std::string(prediction_time_name(hcfg.at))},
                            {"censored_training", options.censored},
                            {"censored_fit_rows", censored_rows}};
  if (!m.target.residual.empty()) {
    nlohmann::json by_group = nlohmann::json::object();
    const auto names = m.target.residual.names_by_group();
    const auto& cats = encoder.category_columns();
    const auto g = m.target.residual.group_cat;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty()) continue;
      const std::string value = g < 0 ? "all" : i == 0 ? "(unknown)" : cats[static_cast<std::size_t>(g)].vocabulary[i - 1];
      by_group[value] = names[i];
    }
    metrics["residual_base"] = by_group;
  }
  m.serving_variant = std::string(engine::variant_name(calib_predictor.variant));
  if (options.compression.any()) {
    metrics["compression"] = nlohmann::json::parse(compression_json(options.compression));
    metrics["fine_tuned_from_model_created_utc"] = options.init->meta.created_utc;
  }
  m.meta.data_hash = table_digest(jobs, n_train);
  m.provenance.split = split.fraction > 0 ? split.fraction
                                          : static_cast<double>(n_train) / static_cast<double>(jobs.rows());
  m.provenance.eligible_rows = jobs.rows();
  m.provenance.train_rows = n_train;
  m.provenance.data_hash_all = table_digest(jobs, jobs.rows());
  m.provenance.last_train_submit = jobs.num(Field::SubmitTime)[n_train - 1];  // rows are in submit order
  m.provenance.fields = field_coverage(jobs, encoder_input_fields(encoder), n_train);
  if (options.init) {  // the trace it came from is the starting model's, unless the caller says
    m.provenance.trace_format = options.init->provenance.trace_format;
    m.provenance.trace_name = options.init->provenance.trace_name;
  }
  m.meta.created_utc = model_creation_time_utc();
  m.meta.metrics_json = metrics.dump();
  m.meta.config_json = train_config_json(options.train);
  m.meta.ttlpred_version = kVersion;

  if (report) {
    report->train = std::move(trained);
    report->fit_rows = n_fit;
    report->calibration_rows = n_calib;
    report->calibration_rmse_hours = calib_rmse;
    report->group_column = group_column;
    report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return m;
}

}  // namespace ttlpred
