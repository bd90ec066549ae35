#include "train/ensemble.hpp"

#include <algorithm>
#include <cmath>

#include "model/mlp_io.hpp"
#include "train/metrics.hpp"
#include "train/mlp_trainer.hpp"
#include "util/error.hpp"

namespace ttlpred {

MlpModel merge_ensemble(std::span<const MlpModel> members) {
  if (members.empty()) throw Error("ensemble: no members");
  const MlpModel& first = members[0];
  for (const auto& m : members) {
    validate_mlp(m, "ensemble member");
    bool same = m.dense_inputs == first.dense_inputs && m.embeddings.size() == first.embeddings.size() &&
                m.layers.size() == first.layers.size();
    for (std::size_t j = 0; same && j < m.embeddings.size(); ++j)
      same = m.embeddings[j].cardinality == first.embeddings[j].cardinality;
    for (std::size_t l = 0; same && l < m.layers.size(); ++l) same = m.layers[l].act == first.layers[l].act;
    if (!same) throw Error("ensemble: members differ in inputs, depth or activations");
  }
  if (members.size() == 1) return first;
  const std::size_t K = members.size();
  MlpModel out;
  out.dense_inputs = first.dense_inputs;
  // Embedding j: each category's row is the members' rows side by side.
  std::vector<std::vector<std::uint32_t>> emb_offset(K);  // member k's slice start within column j
  for (std::size_t j = 0; j < first.embeddings.size(); ++j) {
    Embedding e;
    e.cardinality = first.embeddings[j].cardinality;
    for (std::size_t k = 0; k < K; ++k) {
      emb_offset[k].push_back(e.dim);
      e.dim += members[k].embeddings[j].dim;
    }
    e.table.assign(static_cast<std::size_t>(e.cardinality) * e.dim, 0.f);
    for (std::size_t c = 0; c < e.cardinality; ++c)
      for (std::size_t k = 0; k < K; ++k) {
        const auto& me = members[k].embeddings[j];
        for (std::size_t d = 0; d < me.dim; ++d) e.table[c * e.dim + emb_offset[k][j] + d] = me.table[c * me.dim + d];
      }
    out.embeddings.push_back(std::move(e));
  }
  // Where member k's first-layer input i lands in the merged first-layer input.
  std::vector<std::vector<std::uint32_t>> input_map(K);
  for (std::size_t k = 0; k < K; ++k) {
    for (std::uint32_t i = 0; i < first.dense_inputs; ++i) input_map[k].push_back(i);
    std::uint32_t base = first.dense_inputs;
    for (std::size_t j = 0; j < out.embeddings.size(); ++j) {
      for (std::uint32_t d = 0; d < members[k].embeddings[j].dim; ++d) input_map[k].push_back(base + emb_offset[k][j] + d);
      base += out.embeddings[j].dim;
    }
  }
  std::vector<std::uint32_t> prev_offset(K, 0);  // member k's slice start in the previous layer's output
  for (std::size_t l = 0; l < first.layers.size(); ++l) {
    const bool last = l + 1 == first.layers.size();
    DenseLayer d;
    d.act = first.layers[l].act;
    d.in = l == 0 ? out.first_layer_inputs() : out.layers[l - 1].out;
    d.out = 0;
    std::vector<std::uint32_t> offset(K);
    for (std::size_t k = 0; k < K; ++k) {
      offset[k] = last ? 0 : d.out;
      if (!last) d.out += members[k].layers[l].out;
    }
    // The last layer averages the members' outputs: the mean, and the raw quantile heads
    // (monotone after the cumulative softplus whatever they are: model/quantile_heads.hpp).
    if (last) d.out = first.layers[l].out;
    d.weight.assign(static_cast<std::size_t>(d.in) * d.out, 0.f);
    d.bias.assign(d.out, 0.f);
    const float inv_k = 1.0f / static_cast<float>(K);
    for (std::size_t k = 0; k < K; ++k) {
      const auto& ml = members[k].layers[l];
      const float scale = last ? inv_k : 1.0f;
      for (std::uint32_t o = 0; o < ml.out; ++o) {
        for (std::uint32_t i = 0; i < ml.in; ++i) {
          const std::uint32_t col = l == 0 ? input_map[k][i] : prev_offset[k] + i;
          d.weight[static_cast<std::size_t>(offset[k] + o) * d.in + col] = scale * ml.weight[static_cast<std::size_t>(o) * ml.in + i];
        }
        d.bias[offset[k] + o] += scale * ml.bias[o];
      }
    }
    prev_offset = offset;
    out.layers.push_back(std::move(d));
  }
  validate_mlp(out, "merged ensemble");
  return out;
}

TrainResult train_ensemble(const EncodedBatch& x, std::span<const float> wall_s, const TrainConfig& config,
                           std::uint32_t members, const ProgressFn& progress, std::span<const float> cap_s,
                           std::span<const std::uint8_t> lower_bound) {
  if (members == 0) throw Error("ensemble: at least one member is needed");
  std::vector<MlpModel> models;
  TrainResult first;
  for (std::uint32_t k = 0; k < members; ++k) {
    TrainConfig c = config;
    c.seed = config.seed + k;
    auto r = train_mlp(x, wall_s, c, progress, cap_s, lower_bound);
    models.push_back(std::move(r.model));
    if (k == 0) first = std::move(r);
  }
  TrainResult result = std::move(first);
  result.model = merge_ensemble(models);
  if (result.validation_rows > 0) {
    const std::size_t b = result.train_rows, n = result.validation_rows;
    std::vector<float> z(x.rows);
    predict_mlp_raw(result.model, x, z, config.threads);
    add_offsets(result.target, x, 0, z);
    const std::span<const float> zval(z.data() + b, n);
    const auto wval = wall_s.subspan(b, n);
    if (config.target != TargetKind::Hours) result.target.fit_smearing(wval, zval, config.smearing_points);
    std::vector<float> pred(n);
    for (std::size_t i = 0; i < n; ++i) {
      pred[i] = static_cast<float>(result.target.decode_seconds(zval[i]));
      if (!cap_s.empty() && cap_s[b + i] > 0.0f) pred[i] = std::min(pred[i], cap_s[b + i]);
    }
    result.best_val_rmse_hours = rmse_hours(wval, pred);
  }
  return result;
}

}  // namespace ttlpred
