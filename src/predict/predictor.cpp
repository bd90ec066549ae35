#include "predict/predictor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "engine/cpu_backend.hpp"
#include "util/error.hpp"

namespace ttlpred {

engine::Variant model_made_for(const ModelFile& model) {
  std::string name = model.serving_variant;
  if (name.empty()) {
    // Files written before the serving-variant section kept it in the metrics.
    const auto meta = nlohmann::json::parse(model.meta.metrics_json, nullptr, false);
    if (meta.is_object() && meta.contains("safe_ttl_variant") && meta["safe_ttl_variant"].is_string())
      name = meta["safe_ttl_variant"].get<std::string>();
  }
  if (!name.empty()) {
    try {
      return engine::variant_from_name(name);
    } catch (const Error&) {
      // a variant this build does not know (a later build's file): the default serves it
    }
  }
  return engine::Variant::Fp32Fused;
}

Predictor::Predictor(ModelFile model, const PredictorOptions& options, const std::string& what)
    : model_(std::make_shared<const ModelFile>(std::move(model))), options_(options), what_(what) {
  if (!(options.alpha > 0 && options.alpha < 1)) throw Error("alpha must be in (0, 1), got " + std::to_string(options.alpha));
  if (!(options.min_seconds >= 0) || !std::isfinite(options.min_seconds))
    throw Error("--min-seconds must be a finite number >= 0, got " + std::to_string(options.min_seconds));
  if (!(options.max_ttl_s >= 0) || !std::isfinite(options.max_ttl_s) ||
      (options.max_ttl_s > 0 && options.max_ttl_s < options.min_seconds))
    throw Error("--max-ttl must be 0 (no cap) or a finite number >= --min-seconds (" +
                std::to_string(options.min_seconds) + "), got " + std::to_string(options.max_ttl_s));
  encoder_ = std::make_shared<const FeatureEncoder>(FeatureEncoder::from_bytes(model_->encoder, what + " (encoder section)"));
  if (encoder_->dense_width() != model_->mlp.dense_inputs || encoder_->cat_width() != model_->mlp.embeddings.size())
    throw Error(what + ": the encoder (" + std::to_string(encoder_->dense_width()) + " dense, " +
                std::to_string(encoder_->cat_width()) + " categorical) does not match the network (" +
                std::to_string(model_->mlp.dense_inputs) + ", " + std::to_string(model_->mlp.embeddings.size()) + ")");
  model_->target.residual.check_fits(encoder_->dense_width(), encoder_->cat_cardinality(), what);
  if (model_->mlp.layers.empty() || model_->mlp.layers.back().out != model_->target.outputs())
    throw Error(what + ": the network's outputs do not match its target (the mean and " +
                std::to_string(model_->target.quantiles.size()) + " quantile heads)");
  const engine::BackendKind& kind = options.backend ? *options.backend : engine::cpu_backend();
  if (options.variant_from_model) {
    options_.variant = model_made_for(*model_);
    // The fused fp32 plan is the CPU engine's packing of the same fp32 arithmetic: a backend
    // without it answers a plain model with its fp32. Any other variant the model was made for
    // (int8 on its QAT grid, 2:4 on its pruned weights) is refused where it does not run,
    // since the safe TTL was calibrated on it.
    if (options_.variant == engine::Variant::Fp32Fused && !kind.runs(options_.variant) &&
        kind.runs(engine::Variant::Fp32))
      options_.variant = engine::Variant::Fp32;
  }
  engine::BackendOptions bo;
  bo.isa = options.isa;
  bo.device = options.device;
  backend_ = engine::compile_backend(kind, *model_, options_.variant, bo, what);

  group_cat_ = category_position(model_->safe_ttl.group_column, what);
  // A production's first outcome is what tells its cost; where jobs carry no production, a
  // user's first few (log_count comes first in a key's block).
  const HistoryConfig& hc = encoder_->history_config();
  auto key_position = [&](HistoryKey key) {
    for (std::size_t k = 0; k < hc.keys.size(); ++k)
      if (hc.keys[k] == key) return static_cast<int>(k * hc.stats_per_key());
    return -1;
  };
  production_count_ = key_position(HistoryKey::ProductionTag);
  user_count_ = key_position(HistoryKey::User);
}

bool Predictor::cold_start(const float* history_row, bool has_production) const {
  // A key the job has no value for reads as no history (log_count 0), hence has_production.
  if (has_production && production_count_ >= 0) return !(history_row[production_count_] > 0.0f);
  if (user_count_ < 0) return false;
  return history_row[user_count_] < std::log1p(static_cast<float>(kColdStartOutcomes)) - 1e-6f;
}

int Predictor::category_position(const std::string& column, const std::string& what) const {
  if (column.empty()) return -1;
  const auto& cats = encoder_->category_columns();
  for (std::size_t j = 0; j < cats.size(); ++j)
    if (info(cats[j].field).name == column) return static_cast<int>(j);
  throw Error(what + ": safe-TTL groups by '" + column + "', which the encoder does not encode");
}

PredictorOptions predictor_options_named(const std::string& variant, const std::string& isa, double alpha,
                                         double max_ttl_s, double min_seconds) {
  PredictorOptions o;
  o.max_ttl_s = max_ttl_s;
  o.min_seconds = min_seconds;
  if (variant == "auto")
    o.variant_from_model = true;
  else
    o.variant = engine::variant_from_name(variant);
  if (!isa.empty()) o.isa = engine::isa_from_name(isa);
  o.alpha = alpha;
  return o;
}

Predictor Predictor::load(const std::string& path, const PredictorOptions& options) {
  return Predictor(load_model_file(path), options, path);
}

HistoryState Predictor::initial_history() const {
  if (model_->history.empty()) return HistoryState(encoder_->history_config());
  // Read when a service starts or reloads, after the model: named like the other sections.
  HistoryState s = HistoryState::from_bytes(model_->history, what_ + " (history section)");
  if (!(s.config() == encoder_->history_config()))
    throw Error(what_ + " (history section): its configuration does not match the encoder's");
  return s;
}

double bound_seconds(double value_s, double requested_ttl_s, const PredictorOptions& options, bool& capped) {
  // NaN reads as +inf, "longer than can be told": the request or the cap answer it, never
  // the floor, which would kill the job within a minute.
  double v = std::isnan(value_s) ? std::numeric_limits<double>::infinity() : std::max(value_s, options.min_seconds);
  v = cap_at_request(v, requested_ttl_s);
  if (options.max_ttl_s > 0 && !(requested_ttl_s > 0) && v > options.max_ttl_s) {
    v = options.max_ttl_s;
    capped = true;
  }
  if (std::isinf(v))
    throw Error("an answer that is not a finite number (" + std::to_string(value_s) +
                ") for a job with neither a request nor a cap (--max-ttl 0): nothing bounds it");
  return v;
}

// `z` is the network's output with the row's residual offset added (TargetTransform::offset_z).
Prediction Predictor::finish(float z, double requested_ttl_s, std::uint32_t group) const {
  Prediction p;
  p.group = group;
  p.expected_wall_s = bound_seconds(model_->target.decode_seconds(z), requested_ttl_s, options_, p.capped);
  const double safe = model_->safe_ttl.empty()
                          ? p.expected_wall_s
                          : model_->safe_ttl.safe_ttl(p.expected_wall_s, group, options_.alpha, requested_ttl_s);
  p.safe_ttl_s = bound_seconds(safe, requested_ttl_s, options_, p.capped);
  return p;
}

Prediction Predictor::finish(const float* out, float offset, double requested_ttl_s, std::uint32_t group,
                             bool cold) const {
  const QuantileTtlCalibration& rule = model_->safe_ttl.quantile;
  if (rule.empty()) {
    Prediction p = finish(out[0] + offset, requested_ttl_s, group);
    p.cold = cold;
    return p;
  }
  Prediction p;
  p.group = group;
  p.cold = cold;
  p.expected_wall_s = bound_seconds(model_->target.decode_seconds(out[0] + offset), requested_ttl_s, options_, p.capped);
  p.upper_s = model_->target.decode_quantile_head(out + 1, offset, rule.head);
  const double safe =
      model_->safe_ttl.safe_ttl(p.expected_wall_s, p.upper_s, group, options_.alpha, requested_ttl_s, cold);
  p.safe_ttl_s = bound_seconds(safe, requested_ttl_s, options_, p.capped);
  return p;
}

void Predictor::predict(std::span<const JobRecord> jobs, const HistoryState& history, std::span<Prediction> out) const {
  if (out.size() < jobs.size()) throw Error("predict: output span is shorter than the batch");
  if (history.width() != encoder_->history_width()) throw Error("predict: history state width does not match the model");
  const std::size_t dw = encoder_->dense_width(), cw = encoder_->cat_width();
  thread_local std::vector<float> dense, hist, z;
  thread_local std::vector<std::uint32_t> cats;
  thread_local std::vector<std::uint8_t> cold;
  const std::size_t n = jobs.size();
  if (dense.size() < n * dw) dense.resize(n * dw);
  if (cats.size() < n * cw) cats.resize(n * cw);
  if (hist.size() < history.width()) hist.resize(history.width());
  if (cold.size() < n) cold.resize(n);
  const std::size_t width = model_->target.outputs();
  if (z.size() < n * width) z.resize(n * width);
  for (std::size_t i = 0; i < n; ++i) {
    history.features(jobs[i], hist.data());
    cold[i] = cold_start(hist.data(), jobs[i].known(Field::ProductionTag)) ? 1 : 0;
    encoder_->encode_one(jobs[i], hist.data(), dense.data() + i * dw, cats.data() + i * cw);
  }
  backend_->predict(dense.data(), cats.data(), n, z.data());
  for (std::size_t i = 0; i < n; ++i) {
    const float* d = dense.data() + i * dw;
    const std::uint32_t* c = cats.data() + i * cw;
    const float offset = model_->target.offset_z(d, c);
    out[i] = finish(z.data() + i * width, offset, jobs[i][Field::RequestedTtl], calibration_group(group_cat_, d, c),
                    cold[i] != 0);
  }
}

std::uint32_t Predictor::calibration_group(int column, const float* dense, const std::uint32_t* cats) const {
  if (column < 0) return kNoGroup;
  const std::uint32_t g = cats[static_cast<std::size_t>(column)];
  return model_->target.residual.falls_back(dense, cats) ? g | kFallbackStratum : g;
}

std::vector<Prediction> Predictor::predict_rows(const JobTable& table, std::span<const std::size_t> rows,
                                                const HistoryMatrix& history, std::vector<std::uint32_t>* group_ids,
                                                const std::string& group_column, std::vector<float>* quantiles_s) const {
  const EncodedBatch batch = encoder_->encode_batch(table, rows, &history);
  const std::size_t width = model_->target.outputs();
  std::vector<float> z(rows.size() * width);
  // Chunks keep the engine's scratch small and the cache warm.
  constexpr std::size_t kChunk = 1024;
  for (std::size_t s = 0; s < rows.size(); s += kChunk) {
    const std::size_t m = std::min(kChunk, rows.size() - s);
    backend_->predict(batch.dense_row(s), batch.cat_width ? batch.cat_row(s) : nullptr, m, z.data() + s * width);
  }
  const auto requested = table.num(Field::RequestedTtl);
  std::vector<Prediction> out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const float offset = model_->target.offset_z(batch.dense_row(i), batch.cat_width ? batch.cat_row(i) : nullptr);
    out[i] = finish(z.data() + i * width, offset, requested[rows[i]],
                    calibration_group(group_cat_, batch.dense_row(i), batch.cat_row(i)),
                    history.width > 0 && cold_start(history.row(rows[i]), !table.text(Field::ProductionTag, rows[i]).empty()));
  }
  if (quantiles_s) {
    const std::size_t k = width - 1;
    quantiles_s->assign(rows.size() * k, 0.0f);
    double q[kMaxQuantileHeads];
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const float offset = model_->target.offset_z(batch.dense_row(i), batch.cat_width ? batch.cat_row(i) : nullptr);
      model_->target.decode_quantile_seconds(z.data() + i * width + 1, offset, q);
      for (std::size_t j = 0; j < k; ++j) (*quantiles_s)[i * k + j] = static_cast<float>(q[j]);
    }
  }
  if (group_ids) {
    const int pos = category_position(group_column, "predict");
    group_ids->resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
      (*group_ids)[i] = pos == group_cat_ ? out[i].group : calibration_group(pos, batch.dense_row(i), batch.cat_row(i));
  }
  return out;
}

}  // namespace ttlpred
