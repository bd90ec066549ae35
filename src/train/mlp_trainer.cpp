#include "train/mlp_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "model/mlp_io.hpp"
#include "train/adamw.hpp"
#include "train/compression.hpp"
#include "util/aligned_vector.hpp"
#include "train/mlp_net.hpp"
#include "util/splitmix.hpp"
#include "util/thread_pool.hpp"
#include "util/error.hpp"

namespace ttlpred {

namespace {

using Clock = std::chrono::steady_clock;

// Rows per forward chunk when predicting: fixed, so that results do not depend on threads.
constexpr std::size_t kPredictChunk = 1024;

void check_inputs(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& c) {
  if (x.dense.size() != x.rows * x.dense_width || x.cats.size() != x.rows * x.cat_width ||
      x.cat_cardinality.size() != x.cat_width)
    throw Error("training batch is inconsistent: array sizes do not match rows x widths");
  if (wall_s.size() != x.rows)
    throw Error("training: " + std::to_string(wall_s.size()) + " run times for " + std::to_string(x.rows) + " rows");
  for (std::size_t i = 0; i < wall_s.size(); ++i)
    if (!std::isfinite(wall_s[i]) || wall_s[i] < 0.0f)
      throw Error("training: run time of row " + std::to_string(i) + " is negative or not finite");
  for (std::size_t j = 0; j < x.cat_width; ++j)
    if (x.cat_cardinality[j] == 0) throw Error("training: categorical column " + std::to_string(j) + " has cardinality 0");
  for (std::size_t r = 0; r < x.rows; ++r)
    for (std::size_t j = 0; j < x.cat_width; ++j)
      if (x.cats[r * x.cat_width + j] >= x.cat_cardinality[j])
        throw Error("training: row " + std::to_string(r) + " categorical column " + std::to_string(j) + " index " +
                    std::to_string(x.cats[r * x.cat_width + j]) + " is not below its cardinality " +
                    std::to_string(x.cat_cardinality[j]));
  if (c.hidden.empty() || std::find(c.hidden.begin(), c.hidden.end(), 0u) != c.hidden.end())
    throw Error("training: hidden widths must be positive and at least one layer is needed");
  if (c.batch_size == 0 || c.shards == 0 || c.max_epochs == 0) throw Error("training: batch size, shards and epochs must be positive");
  if (!(c.validation_fraction >= 0.0 && c.validation_fraction < 1.0)) throw Error("training: validation fraction must lie in [0, 1)");
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f)) throw Error("training: dropout must lie in [0, 1)");
  if (!(c.learning_rate > 0.0f)) throw Error("training: learning rate must be positive");
  if (c.target == TargetKind::Power && !(c.power_lambda > 0.0 && c.power_lambda <= 1.0))
    throw Error("training: power target needs 0 < lambda <= 1");
}

NetShape make_shape(const EncodedBatch& x, const TrainConfig& c) {
  NetShape s;
  s.dense_inputs = static_cast<std::uint32_t>(x.dense_width);
  for (auto card : x.cat_cardinality) {
    s.emb_card.push_back(card);
    s.emb_dim.push_back(embedding_dim_for(card, c));
  }
  for (auto w : c.hidden) {
    s.widths.push_back(w);
    s.acts.push_back(c.activation);
  }
  s.widths.push_back(1);
  s.acts.push_back(Activation::None);
  return s;
}

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

// Network outputs for rows [begin, end) of x, in fixed chunks spread over threads.
void forward_range(const NetShape& s, const NetLayout& L, const float* params, const EncodedBatch& x, std::size_t begin,
                   std::size_t end, float* out, ThreadPool& pool, const ActQuantPlan* act_quant = nullptr) {
  const std::size_t n = end - begin;
  const std::size_t chunks = (n + kPredictChunk - 1) / kPredictChunk;
  std::vector<NetWorkspace<float>> ws(static_cast<std::size_t>(pool.size()));
  std::vector<std::vector<std::uint32_t>> rows(ws.size());
  pool.run(chunks, [&](std::size_t c, int worker) {
    const std::size_t b = begin + c * kPredictChunk, e = std::min(end, b + kPredictChunk);
    auto& r = rows[static_cast<std::size_t>(worker)];
    r.resize(e - b);
    std::iota(r.begin(), r.end(), static_cast<std::uint32_t>(b));
    net_forward<float>(s, L, params, x, r, ws[static_cast<std::size_t>(worker)], out + (b - begin), act_quant);
  });
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

}  // namespace

std::uint32_t embedding_dim_for(std::uint32_t cardinality, const TrainConfig& c) {
  if (c.embedding_dim > 0) return c.embedding_dim;
  const double d = std::ceil(1.6 * std::pow(static_cast<double>(cardinality), 0.56));
  return std::clamp<std::uint32_t>(static_cast<std::uint32_t>(d), 1, std::max<std::uint32_t>(1, c.max_embedding_dim));
}

namespace {

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

// The epoch loop shared by training from scratch and fine-tuning: `init` are the starting
// parameters (NetLayout order), `tt` the target transform without smearing.
TrainResult run_training(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& c,
                         const ProgressFn& progress, std::span<const float> cap_s, const NetShape& shape,
                         std::span<const float> init, TargetTransform tt, const CompressionConfig& comp,
                         bool start_is_candidate, std::span<const std::uint8_t> lower_bound) {
  if (!cap_s.empty() && cap_s.size() != x.rows)
    throw Error("training: " + std::to_string(cap_s.size()) + " requested TTLs for " + std::to_string(x.rows) + " rows");
  if (!lower_bound.empty() && lower_bound.size() != x.rows)
    throw Error("training: " + std::to_string(lower_bound.size()) + " censoring flags for " + std::to_string(x.rows) + " rows");
  if (x.rows > std::numeric_limits<std::uint32_t>::max()) throw Error("training: more than 2^32 rows");
  const std::size_t n = x.rows;
  const std::size_t n_val = static_cast<std::size_t>(std::floor(static_cast<double>(n) * c.validation_fraction));
  const std::size_t n_tr = n - n_val;
  if (n_tr == 0) throw Error("training: no training rows");
  ThreadPool pool(c.threads);

  TrainResult result;
  result.train_rows = n_tr;
  result.validation_rows = n_val;
  result.target = tt;
  std::vector<float> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = tt.encode_seconds(wall_s[i]);

  // Training on hours already targets the mean: no smearing there.
  const std::size_t smear_points = tt.kind == TargetKind::Hours ? 0 : c.smearing_points;
  const NetLayout L(shape);
  AlignedVector<float> params(init.begin(), init.end());

  // Compressed training: the forward pass runs on `eff` (masked and/or fake-quantized
  // weights) and, under QAT, rounds every layer's input to the epoch's ranges.
  std::optional<WeightCompressor> wc;
  AlignedVector<float> eff;
  if (comp.any()) {
    wc.emplace(shape, comp);
    wc->start(params.data());
    eff.resize(L.total);
  }
  EncodedBatch range_rows;
  if (comp.qat_int8) range_rows = strided_rows(x, n_tr, comp.calibration_rows);
  quant::CalibrationTable ranges, best_ranges;
  ActQuantPlan act_quant;
  const ActQuantPlan* aq = comp.qat_int8 ? &act_quant : nullptr;
  auto forward_params = [&]() -> const float* {
    if (!wc) return params.data();
    wc->effective(params.data(), eff.data());
    return eff.data();
  };

  AlignedVector<float> best = params;
  AdamW opt(L.total, c.adam_beta1, c.adam_beta2, c.adam_eps);
  // Decoupled weight decay on weight matrices only: biases and embeddings are not shrunk.
  std::vector<std::uint8_t> decay(L.total, 0);
  for (std::size_t l = 0; l < shape.widths.size(); ++l)
    std::fill(decay.begin() + static_cast<std::ptrdiff_t>(L.weight[l]), decay.begin() + static_cast<std::ptrdiff_t>(L.bias[l]), 1);
  const std::size_t S = c.shards;
  std::vector<NetWorkspace<float>> ws(S);
  std::vector<double> shard_sse(S);
  AlignedVector<float> grad(L.total);
  std::vector<std::uint32_t> order(n_tr);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 shuffle_rng(c.seed ^ 0x5DEECE66Dull);
  const std::uint64_t steps_per_epoch = (n_tr + c.batch_size - 1) / c.batch_size;
  std::uint64_t step = 0;
  std::vector<float> val_z(n_val), best_val_z;
  std::vector<float> y_batch(c.batch_size);
  std::vector<std::uint8_t> bound_batch(lower_bound.empty() ? 0 : c.batch_size);
  double best_rmse = std::numeric_limits<double>::infinity();
  std::uint32_t since_best = 0;

  auto measure_ranges = [&] {
    if (!comp.qat_int8) return;
    ranges = quant::calibrate(unpack_parameters(shape, std::span<const float>(forward_params(), L.total)), range_rows,
                              comp.act_calibration);
    ranges.act_qmax = comp.act_qmax;
    act_quant = act_quant_plan(ranges, comp.act_qmax);
  };
  // Scores the current parameters on the validation tail and keeps them if they are the best.
  auto validate = [&](std::uint32_t epoch, EpochStats& st) {
    if (n_val == 0) {
      st.val_rmse_hours = std::numeric_limits<double>::quiet_NaN();
      best = params;
      best_ranges = ranges;
      st.best = true;
      return;
    }
    forward_range(shape, L, forward_params(), x, n_tr, n, val_z.data(), pool, aq);
    TargetTransform probe = tt;
    probe.fit_smearing(wall_s.subspan(n_tr), val_z, smear_points);
    st.val_rmse_hours = rmse_hours_of(probe, val_z, wall_s.subspan(n_tr), cap_s.empty() ? cap_s : cap_s.subspan(n_tr));
    if (st.val_rmse_hours < best_rmse) {
      best_rmse = st.val_rmse_hours;
      best = params;
      best_ranges = ranges;
      best_val_z = val_z;
      result.best_epoch = epoch;
      since_best = 0;
      st.best = true;
    } else {
      ++since_best;
    }
  };

  if (start_is_candidate && n_val > 0) {
    // Fine-tuning: the starting weights (pruned, or rounded with fresh ranges) compete as
    // "epoch 0", so a fine-tune that does not help on the validation tail changes nothing.
    const auto t0 = Clock::now();
    measure_ranges();
    EpochStats st;
    st.max_epochs = c.max_epochs;
    st.train_loss = std::numeric_limits<double>::quiet_NaN();
    validate(0, st);
    since_best = 0;
    st.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    result.history.push_back(st);
    if (progress) progress(st);
  }

  for (std::uint32_t epoch = 1; epoch <= c.max_epochs; ++epoch) {
    const auto t0 = Clock::now();
    measure_ranges();
    for (std::size_t i = n_tr; i-- > 1;) std::swap(order[i], order[shuffle_rng.below(i + 1)]);
    double epoch_sse = 0.0;
    double lr = c.learning_rate;
    for (std::size_t start = 0; start < n_tr; start += c.batch_size, ++step) {
      const std::size_t bsz = std::min<std::size_t>(c.batch_size, n_tr - start);
      const std::span<const std::uint32_t> batch(order.data() + start, bsz);
      for (std::size_t i = 0; i < bsz; ++i) y_batch[i] = y[batch[i]];
      if (!lower_bound.empty())
        for (std::size_t i = 0; i < bsz; ++i) bound_batch[i] = lower_bound[batch[i]];
      const float scale = 1.0f / static_cast<float>(bsz);  // gradient of the batch mean
      const DropoutPlan drop{c.dropout, c.seed, step};
      const float* fwd = forward_params();
      const std::size_t per = (bsz + S - 1) / S;
      pool.run(S, [&](std::size_t k, int) {
        const std::size_t b = std::min(bsz, k * per), e = std::min(bsz, b + per);
        shard_sse[k] = 0.0;
        if (b == e) return;
        shard_sse[k] = net_backward<float>(shape, L, fwd, x, batch.subspan(b, e - b), y_batch.data() + b, scale, drop,
                                           ws[k], aq, lower_bound.empty() ? nullptr : bound_batch.data() + b);
      });
      // Sum shard gradients in shard order (each element in the same order on any thread count).
      const std::size_t layer_begin = L.embeddings_end;
      const std::size_t blocks = 16;
      const std::size_t span_len = (L.total - layer_begin + blocks - 1) / blocks;
      pool.run(blocks, [&](std::size_t blk, int) {
        const std::size_t b = std::min(L.total, layer_begin + blk * span_len), e = std::min(L.total, b + span_len);
        bool first = true;
        for (std::size_t k = 0; k < S; ++k) {
          if (std::min(bsz, k * per) >= std::min(bsz, k * per + per)) continue;
          const float* g = ws[k].grad.data();
          if (first)
            std::copy(g + b, g + e, grad.data() + b);
          else
            for (std::size_t i = b; i < e; ++i) grad[i] += g[i];
          first = false;
        }
      });
      std::fill(grad.begin(), grad.begin() + static_cast<std::ptrdiff_t>(layer_begin), 0.0f);
      for (std::size_t k = 0; k < S; ++k) {
        const std::size_t b = std::min(bsz, k * per), e = std::min(bsz, b + per);
        if (b < e) add_embedding_gradients<float>(shape, L, x, batch.subspan(b, e - b), ws[k], grad.data());
        epoch_sse += shard_sse[k];
      }
      if (wc) wc->latent_gradient(params.data(), grad.data());
      if (c.clip_norm > 0.0f) {
        double norm = 0.0;
        for (float g : grad) norm += static_cast<double>(g) * g;
        norm = std::sqrt(norm);
        if (norm > c.clip_norm) {
          const float f = static_cast<float>(c.clip_norm / norm);
          for (float& g : grad) g *= f;
        }
      }
      lr = learning_rate_at(c, step, steps_per_epoch);
      opt.step(params.data(), grad.data(), decay.data(), static_cast<float>(lr), c.weight_decay, pool);
      if (wc) wc->project(params.data());
    }
    const double train_seconds = std::chrono::duration<double>(Clock::now() - t0).count();

    EpochStats st;
    st.epoch = epoch;
    st.max_epochs = c.max_epochs;
    st.train_loss = epoch_sse / static_cast<double>(n_tr);
    st.samples_per_s = static_cast<double>(n_tr) / std::max(train_seconds, 1e-9);
    st.learning_rate = lr;
    if (!std::isfinite(st.train_loss))
      throw Error("training diverged (loss is not finite) in epoch " + std::to_string(epoch) +
                  "; lower the learning rate or use a compressed target");
    validate(epoch, st);
    st.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    result.history.push_back(st);
    if (progress) progress(st);
    if (n_val > 0 && since_best >= c.patience && epoch < c.max_epochs) {
      result.stopped_early = true;
      break;
    }
  }

  if (wc) {
    const std::vector<float> stored = wc->exported(best.data());
    result.model = unpack_parameters(shape, stored);
  } else {
    result.model = unpack_parameters(shape, best);
  }
  validate_mlp(result.model, "trained model");
  if (comp.qat_int8) result.act_ranges = best_ranges;
  TargetTransform& tt_out = result.target;
  if (n_val > 0) {
    result.best_val_rmse_hours = best_rmse;
    tt_out.fit_smearing(wall_s.subspan(n_tr), best_val_z, smear_points);
  } else {
    // No held-out rows: smear with the last training rows' residuals (optimistic but unbiased in the mean).
    const std::size_t m = std::min<std::size_t>(n_tr, 50000);
    std::vector<float> z(m);
    const float* p = best.data();
    if (wc) {
      wc->effective(best.data(), eff.data());
      p = eff.data();
    }
    forward_range(shape, L, p, x, n_tr - m, n_tr, z.data(), pool, aq);
    tt_out.fit_smearing(wall_s.subspan(n_tr - m, m), z, smear_points);
    result.best_val_rmse_hours = std::numeric_limits<double>::quiet_NaN();
  }
  return result;
}

}  // namespace

TrainResult train_mlp(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& c,
                      const ProgressFn& progress, std::span<const float> cap_s, std::span<const std::uint8_t> lower_bound) {
  check_inputs(x, wall_s, c);
  const std::size_t n = x.rows;
  const std::size_t n_tr = n - static_cast<std::size_t>(std::floor(static_cast<double>(n) * c.validation_fraction));
  if (n_tr == 0) throw Error("training: no training rows");
  // Target transform fitted on the training rows only.
  TargetTransform tt;
  tt.kind = c.target;
  tt.lambda = c.power_lambda;
  double sum = 0, sq = 0;
  for (std::size_t i = 0; i < n_tr; ++i) {
    const double v = tt.to_t(wall_s[i] / 3600.0);
    sum += v;
    sq += v * v;
  }
  tt.mean = sum / static_cast<double>(n_tr);
  const double var = sq / static_cast<double>(n_tr) - tt.mean * tt.mean;
  tt.stddev = var > 1e-12 ? std::sqrt(var) : 1.0;
  const NetShape shape = make_shape(x, c);
  const auto init = init_parameters<float>(shape, c.seed);
  return run_training(x, wall_s, c, progress, cap_s, shape, init, tt, CompressionConfig{}, false, lower_bound);
}

TrainResult finetune_mlp(const MlpModel& start, const TargetTransform& target, const EncodedBatch& x,
                         std::span<const float> wall_s, const TrainConfig& c, const CompressionConfig& compression,
                         const ProgressFn& progress, std::span<const float> cap_s,
                         std::span<const std::uint8_t> lower_bound) {
  check_inputs(x, wall_s, c);
  validate_mlp(start, "starting model");
  if (x.dense_width != start.dense_inputs || x.cat_width != start.embeddings.size())
    throw Error("fine-tuning: the batch has " + std::to_string(x.dense_width) + " dense and " +
                std::to_string(x.cat_width) + " categorical columns, the starting model expects " +
                std::to_string(start.dense_inputs) + " and " + std::to_string(start.embeddings.size()));
  for (std::size_t j = 0; j < x.cat_width; ++j)
    if (x.cat_cardinality[j] > start.embeddings[j].cardinality)
      throw Error("fine-tuning: categorical column " + std::to_string(j) + " has " +
                  std::to_string(x.cat_cardinality[j]) + " values, the starting model's embedding " +
                  std::to_string(start.embeddings[j].cardinality));
  TargetTransform tt = target;
  tt.smear.clear();
  const std::vector<float> init = pack_parameters(start);
  return run_training(x, wall_s, c, progress, cap_s, shape_of(start), init, tt, compression, true, lower_bound);
}

void predict_mlp_raw(const MlpModel& model, const EncodedBatch& x, std::span<float> out_z, int threads) {
  validate_mlp(model, "model");
  if (out_z.size() != x.rows) throw Error("predict: output size differs from the number of rows");
  if (x.dense_width != model.dense_inputs || x.cat_width != model.embeddings.size())
    throw Error("predict: the batch has " + std::to_string(x.dense_width) + " dense and " + std::to_string(x.cat_width) +
                " categorical columns, the model expects " + std::to_string(model.dense_inputs) + " and " +
                std::to_string(model.embeddings.size()));
  if (x.dense.size() != x.rows * x.dense_width || x.cats.size() != x.rows * x.cat_width)
    throw Error("predict: batch array sizes do not match rows x widths");
  const NetShape shape = shape_of(model);
  const NetLayout L(shape);
  const auto packed = pack_parameters(model);
  const AlignedVector<float> params(packed.begin(), packed.end());
  ThreadPool pool(threads);
  forward_range(shape, L, params.data(), x, 0, x.rows, out_z.data(), pool);
}

void predict_mlp(const MlpModel& model, const TargetTransform& target, const EncodedBatch& x,
                 std::span<float> out_wall_s, int threads) {
  predict_mlp_raw(model, x, out_wall_s, threads);
  for (float& v : out_wall_s) v = static_cast<float>(target.decode_seconds(v));
}

}  // namespace ttlpred
