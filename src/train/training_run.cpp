#include "train/training_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "model/mlp_io.hpp"
#include "util/error.hpp"

namespace ttlpred::train_detail {

namespace {

using Clock = std::chrono::steady_clock;

// Rows per forward chunk when predicting: fixed, so that results do not depend on threads.
constexpr std::size_t kPredictChunk = 1024;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double learning_rate_at(const TrainConfig& c, std::uint64_t step, std::uint64_t steps_per_epoch) {
  if (c.schedule == LrSchedule::Constant) return c.learning_rate;
  const double warm = std::max(1.0, static_cast<double>(c.warmup_epochs) * static_cast<double>(steps_per_epoch));
  const double total = static_cast<double>(c.max_epochs) * static_cast<double>(steps_per_epoch);
  const double s = static_cast<double>(step) + 1.0;
  if (s <= warm) return c.learning_rate * s / warm;
  const double progress = std::min(1.0, (s - warm) / std::max(1.0, total - warm));
  const double floor = c.min_lr_fraction;
  return c.learning_rate * (floor + (1.0 - floor) * 0.5 * (1.0 + std::cos(3.141592653589793 * progress)));
}

double rmse_hours_of(const TargetTransform& t, std::span<const float> z, std::span<const float> wall_s,
                     std::span<const float> cap_s) {
  double sse = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    double pred = t.decode_seconds(z[i]);
    if (!cap_s.empty() && cap_s[i] > 0.0f) pred = std::min<double>(pred, cap_s[i]);  // NaN compares false
    const double e = (pred - wall_s[i]) / 3600.0;
    sse += e * e;
  }
  return z.empty() ? std::numeric_limits<double>::quiet_NaN() : std::sqrt(sse / static_cast<double>(z.size()));
}

// Up to `max_rows` training rows, evenly strided: what each QAT epoch measures ranges on.
EncodedBatch strided_rows(const EncodedBatch& x, std::size_t n, std::size_t max_rows) {
  EncodedBatch b;
  b.dense_width = x.dense_width;
  b.cat_width = x.cat_width;
  b.cat_cardinality = x.cat_cardinality;
  const std::size_t step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, max_rows));
  for (std::size_t r = 0; r < n && b.rows < max_rows; r += step, ++b.rows) {
    b.dense.insert(b.dense.end(), x.dense_row(r), x.dense_row(r) + x.dense_width);
    b.cats.insert(b.cats.end(), x.cat_row(r), x.cat_row(r) + x.cat_width);
  }
  return b;
}

std::vector<std::uint8_t> weight_decay_mask(const NetShape& shape, const NetLayout& L) {
  std::vector<std::uint8_t> decay(L.total, 0);
  for (std::size_t l = 0; l < shape.widths.size(); ++l)
    std::fill(decay.begin() + static_cast<std::ptrdiff_t>(L.weight[l]), decay.begin() + static_cast<std::ptrdiff_t>(L.bias[l]), 1);
  return decay;
}

}  // namespace

void forward_range(const NetShape& s, const NetLayout& L, const float* params, const EncodedBatch& x, std::size_t begin,
                   std::size_t end, float* out, ThreadPool& pool, const ActQuantPlan* act_quant) {
  const std::size_t n = end - begin;
  const std::size_t chunks = (n + kPredictChunk - 1) / kPredictChunk;
  const std::size_t width = s.widths.back();
  std::vector<NetWorkspace<float>> ws(static_cast<std::size_t>(pool.size()));
  std::vector<std::vector<std::uint32_t>> rows(ws.size());
  std::vector<std::vector<float>> all(width > 1 ? ws.size() : 0);  // every output, when there are heads
  pool.run(chunks, [&](std::size_t c, int worker) {
    const std::size_t b = begin + c * kPredictChunk, e = std::min(end, b + kPredictChunk);
    const auto w = static_cast<std::size_t>(worker);
    auto& r = rows[w];
    r.resize(e - b);
    std::iota(r.begin(), r.end(), static_cast<std::uint32_t>(b));
    if (width == 1) {
      net_forward<float>(s, L, params, x, r, ws[w], out + (b - begin), act_quant);
      return;
    }
    all[w].resize(r.size() * width);
    net_forward<float>(s, L, params, x, r, ws[w], all[w].data(), act_quant);
    for (std::size_t i = 0; i < r.size(); ++i) out[b - begin + i] = all[w][i * width];
  });
}

std::size_t TrainingRun::validation_rows(const TrainingData& d, const TrainConfig& c) {
  const std::size_t n = d.x.rows;
  if (!d.cap_s.empty() && d.cap_s.size() != n)
    throw Error("training: " + std::to_string(d.cap_s.size()) + " requested TTLs for " + std::to_string(n) + " rows");
  if (!d.lower_bound.empty() && d.lower_bound.size() != n)
    throw Error("training: " + std::to_string(d.lower_bound.size()) + " censoring flags for " + std::to_string(n) + " rows");
  if (n > std::numeric_limits<std::uint32_t>::max()) throw Error("training: more than 2^32 rows");
  const std::size_t n_val = static_cast<std::size_t>(std::floor(static_cast<double>(n) * c.validation_fraction));
  if (n == n_val) throw Error("training: no training rows");
  return n_val;
}

TrainingRun::TrainingRun(TrainingData data, const TrainConfig& config, const NetShape& shape,
                         std::span<const float> init, TargetTransform tt, const CompressionConfig& comp)
    : d_(data),
      c_(config),
      comp_(comp),
      shape_(shape),
      layout_(shape),
      n_val_(validation_rows(data, config)),
      n_tr_(data.x.rows - n_val_),
      smear_points_(tt.kind == TargetKind::Hours ? 0 : config.smearing_points),
      pool_(config.threads),
      y_(data.x.rows),
      params_(init.begin(), init.end()),
      aq_(comp.qat_int8 ? &act_quant_ : nullptr),
      opt_(layout_.total, config.adam_beta1, config.adam_beta2, config.adam_eps),
      decay_(weight_decay_mask(shape, layout_)),
      ws_(config.shards),
      shard_sse_(config.shards),
      grad_(layout_.total),
      order_(n_tr_),
      shuffle_rng_(config.seed ^ 0x5DEECE66Dull),
      steps_per_epoch_((n_tr_ + config.batch_size - 1) / config.batch_size),
      val_z_(n_val_),
      y_batch_(config.batch_size),
      bound_batch_(data.lower_bound.empty() ? 0 : config.batch_size),
      best_rmse_(std::numeric_limits<double>::infinity()) {
  result_.train_rows = n_tr_;
  result_.validation_rows = n_val_;
  result_.target = tt;
  quantile_loss_.levels = result_.target.quantiles.levels;
  quantile_loss_.weight = config.quantile_weight;
  if (shape_.widths.back() != result_.target.outputs())
    throw Error("training: the network has " + std::to_string(shape_.widths.back()) + " outputs, the target " +
                std::to_string(result_.target.outputs()));
  // With a residual base the network learns the target's distance from the row's base.
  for (std::size_t i = 0; i < y_.size(); ++i)
    y_[i] = tt.encode_seconds(d_.wall_s[i]) -
            tt.offset_z(d_.x.dense_row(i), d_.x.cat_width ? d_.x.cat_row(i) : nullptr);
  if (comp_.any()) {
    wc_.emplace(shape_, comp_);
    wc_->start(params_.data());
    eff_.resize(layout_.total);
  }
  if (comp_.qat_int8) range_rows_ = strided_rows(d_.x, n_tr_, comp_.calibration_rows);
  best_ = params_;
  std::iota(order_.begin(), order_.end(), 0u);
}

TrainResult TrainingRun::run(const ProgressFn& progress, bool start_is_candidate) {
  auto report = [&](const EpochStats& st) {
    result_.history.push_back(st);
    if (progress) progress(st);
  };
  if (start_is_candidate && n_val_ > 0) report(score_start());
  for (std::uint32_t epoch = 1; epoch <= c_.max_epochs; ++epoch) {
    const auto t0 = Clock::now();
    EpochStats st = train_epoch(epoch);
    validate(epoch, st);
    st.seconds = seconds_since(t0);
    report(st);
    if (should_stop(epoch)) {
      result_.stopped_early = true;
      break;
    }
  }
  return finish();
}

EpochStats TrainingRun::score_start() {
  // The starting weights (pruned, or rounded with fresh ranges) compete as "epoch 0", so a
  // fine-tune that does not help on the validation tail changes nothing.
  const auto t0 = Clock::now();
  measure_ranges();
  EpochStats st;
  st.max_epochs = c_.max_epochs;
  st.train_loss = std::numeric_limits<double>::quiet_NaN();
  validate(0, st);
  since_best_ = 0;
  st.seconds = seconds_since(t0);
  return st;
}

EpochStats TrainingRun::train_epoch(std::uint32_t epoch) {
  const auto t0 = Clock::now();
  measure_ranges();
  for (std::size_t i = n_tr_; i-- > 1;) std::swap(order_[i], order_[shuffle_rng_.below(i + 1)]);
  double sse = 0.0;
  lr_ = c_.learning_rate;
  for (std::size_t start = 0; start < n_tr_; start += c_.batch_size, ++step_)
    train_batch(start, std::min<std::size_t>(c_.batch_size, n_tr_ - start), sse);
  const double train_seconds = seconds_since(t0);

  EpochStats st;
  st.epoch = epoch;
  st.max_epochs = c_.max_epochs;
  st.train_loss = sse / static_cast<double>(n_tr_);
  st.samples_per_s = static_cast<double>(n_tr_) / std::max(train_seconds, 1e-9);
  st.learning_rate = lr_;
  if (!std::isfinite(st.train_loss))
    throw Error("training diverged (loss is not finite) in epoch " + std::to_string(epoch) +
                "; lower the learning rate or use a compressed target");
  return st;
}

void TrainingRun::train_batch(std::size_t start, std::size_t bsz, double& sse) {
  const std::span<const std::uint32_t> batch(order_.data() + start, bsz);
  for (std::size_t i = 0; i < bsz; ++i) y_batch_[i] = y_[batch[i]];
  if (!d_.lower_bound.empty())
    for (std::size_t i = 0; i < bsz; ++i) bound_batch_[i] = d_.lower_bound[batch[i]];
  const float scale = 1.0f / static_cast<float>(bsz);  // gradient of the batch mean
  const DropoutPlan drop{c_.dropout, c_.seed, step_};
  const float* fwd = forward_params();
  const std::size_t S = c_.shards;
  const std::size_t per = (bsz + S - 1) / S;
  pool_.run(S, [&](std::size_t k, int) {
    const std::size_t b = std::min(bsz, k * per), e = std::min(bsz, b + per);
    shard_sse_[k] = 0.0;
    if (b == e) return;
    shard_sse_[k] = net_backward<float>(shape_, layout_, fwd, d_.x, batch.subspan(b, e - b), y_batch_.data() + b, scale,
                                        drop, ws_[k], aq_, d_.lower_bound.empty() ? nullptr : bound_batch_.data() + b,
                                        quantile_loss_.levels.empty() ? nullptr : &quantile_loss_);
  });
  reduce_gradients(batch, per, sse);
  if (wc_) wc_->latent_gradient(params_.data(), grad_.data());
  clip_gradient();
  lr_ = learning_rate_at(c_, step_, steps_per_epoch_);
  opt_.step(params_.data(), grad_.data(), decay_.data(), static_cast<float>(lr_), c_.weight_decay, pool_);
  if (wc_) wc_->project(params_.data());
}

void TrainingRun::reduce_gradients(std::span<const std::uint32_t> batch, std::size_t per, double& sse) {
  // Each element is summed in the same order on any thread count.
  const std::size_t bsz = batch.size(), S = c_.shards, total = layout_.total;
  const std::size_t layer_begin = layout_.embeddings_end;
  const std::size_t blocks = 16;
  const std::size_t span_len = (total - layer_begin + blocks - 1) / blocks;
  pool_.run(blocks, [&](std::size_t blk, int) {
    const std::size_t b = std::min(total, layer_begin + blk * span_len), e = std::min(total, b + span_len);
    bool first = true;
    for (std::size_t k = 0; k < S; ++k) {
      if (std::min(bsz, k * per) >= std::min(bsz, k * per + per)) continue;
      const float* g = ws_[k].grad.data();
      if (first)
        std::copy(g + b, g + e, grad_.data() + b);
      else
        for (std::size_t i = b; i < e; ++i) grad_[i] += g[i];
      first = false;
    }
  });
  std::fill(grad_.begin(), grad_.begin() + static_cast<std::ptrdiff_t>(layer_begin), 0.0f);
  for (std::size_t k = 0; k < S; ++k) {
    const std::size_t b = std::min(bsz, k * per), e = std::min(bsz, b + per);
    if (b < e) add_embedding_gradients<float>(shape_, layout_, d_.x, batch.subspan(b, e - b), ws_[k], grad_.data());
    sse += shard_sse_[k];
  }
}

void TrainingRun::clip_gradient() {
  if (!(c_.clip_norm > 0.0f)) return;
  double norm = 0.0;
  for (float g : grad_) norm += static_cast<double>(g) * g;
  norm = std::sqrt(norm);
  if (norm > c_.clip_norm) {
    const float f = static_cast<float>(c_.clip_norm / norm);
    for (float& g : grad_) g *= f;
  }
}

void TrainingRun::validate(std::uint32_t epoch, EpochStats& st) {
  if (n_val_ == 0) {
    st.val_rmse_hours = std::numeric_limits<double>::quiet_NaN();
    best_ = params_;
    best_ranges_ = ranges_;
    st.best = true;
    return;
  }
  const std::size_t n = d_.x.rows;
  forward_range(shape_, layout_, forward_params(), d_.x, n_tr_, n, val_z_.data(), pool_, aq_);
  add_offsets(result_.target, d_.x, n_tr_, val_z_);
  TargetTransform probe = result_.target;
  const auto wall_val = d_.wall_s.subspan(n_tr_);
  probe.fit_smearing(wall_val, val_z_, smear_points_);
  st.val_rmse_hours = rmse_hours_of(probe, val_z_, wall_val, d_.cap_s.empty() ? d_.cap_s : d_.cap_s.subspan(n_tr_));
  if (st.val_rmse_hours < best_rmse_) {
    best_rmse_ = st.val_rmse_hours;
    best_ = params_;
    best_ranges_ = ranges_;
    best_val_z_ = val_z_;
    result_.best_epoch = epoch;
    since_best_ = 0;
    st.best = true;
  } else {
    ++since_best_;
  }
}

bool TrainingRun::should_stop(std::uint32_t epoch) const {
  return n_val_ > 0 && since_best_ >= c_.patience && epoch < c_.max_epochs;
}

void TrainingRun::measure_ranges() {
  if (!comp_.qat_int8) return;
  ranges_ = quant::measure_activation_ranges(unpack_parameters(shape_, std::span<const float>(forward_params(), layout_.total)),
                             range_rows_, comp_.act_calibration);
  ranges_.act_qmax = comp_.act_qmax;
  act_quant_ = act_quant_plan(ranges_, comp_.act_qmax);
}

const float* TrainingRun::forward_params() {
  if (!wc_) return params_.data();
  wc_->effective(params_.data(), eff_.data());
  return eff_.data();
}

TrainResult TrainingRun::finish() {
  if (wc_) {
    const std::vector<float> stored = wc_->exported(best_.data());
    result_.model = unpack_parameters(shape_, stored);
  } else {
    result_.model = unpack_parameters(shape_, best_);
  }
  validate_mlp(result_.model, "trained model");
  if (comp_.qat_int8) result_.act_ranges = best_ranges_;
  TargetTransform& tt_out = result_.target;
  if (n_val_ > 0) {
    result_.best_val_rmse_hours = best_rmse_;
    tt_out.fit_smearing(d_.wall_s.subspan(n_tr_), best_val_z_, smear_points_);
  } else {
    // No held-out rows: smear with the last training rows' residuals (optimistic but unbiased in the mean).
    const std::size_t m = std::min<std::size_t>(n_tr_, 50000);
    std::vector<float> z(m);
    const float* p = best_.data();
    if (wc_) {
      wc_->effective(best_.data(), eff_.data());
      p = eff_.data();
    }
    forward_range(shape_, layout_, p, d_.x, n_tr_ - m, n_tr_, z.data(), pool_, aq_);
    add_offsets(tt_out, d_.x, n_tr_ - m, z);
    tt_out.fit_smearing(d_.wall_s.subspan(n_tr_ - m, m), z, smear_points_);
    result_.best_val_rmse_hours = std::numeric_limits<double>::quiet_NaN();
  }
  return std::move(result_);
}

}  // namespace ttlpred::train_detail
