#include "engine/reference_mlp.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "quant/sparse24.hpp"
#include "util/error.hpp"

namespace ttlpred::engine {

namespace {

std::string at_layer(std::size_t i) { return "model: layers[" + std::to_string(i) + "]"; }

}  // namespace

void validate_model(const MlpModel& model) {
  if (model.layers.empty()) throw Error("model: has no layers");
  for (std::size_t j = 0; j < model.embeddings.size(); ++j) {
    const Embedding& e = model.embeddings[j];
    const std::string where = "model: embeddings[" + std::to_string(j) + "]";
    if (e.cardinality == 0) throw Error(where + ".cardinality is 0 (needs at least the OOV row)");
    if (e.table.size() != std::size_t{e.cardinality} * e.dim)
      throw Error(where + ".table has " + std::to_string(e.table.size()) + " values, expected cardinality*dim = " +
                  std::to_string(std::size_t{e.cardinality} * e.dim));
    for (float v : e.table)
      if (!std::isfinite(v)) throw Error(where + ".table holds a non-finite value");
  }
  std::uint32_t in = model.first_layer_inputs();
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const DenseLayer& l = model.layers[i];
    if (l.in != in)
      throw Error(at_layer(i) + ".in is " + std::to_string(l.in) + ", expected " + std::to_string(in) +
                  (i == 0 ? " (dense_inputs + embedding dims)" : " (previous layer's out)"));
    if (l.out == 0) throw Error(at_layer(i) + ".out is 0");
    if (l.in == 0) throw Error(at_layer(i) + ".in is 0");
    if (l.weight.size() != std::size_t{l.out} * l.in)
      throw Error(at_layer(i) + ".weight has " + std::to_string(l.weight.size()) + " values, expected out*in = " +
                  std::to_string(std::size_t{l.out} * l.in));
    if (l.bias.size() != l.out)
      throw Error(at_layer(i) + ".bias has " + std::to_string(l.bias.size()) + " values, expected out = " +
                  std::to_string(l.out));
    for (float v : l.weight)
      if (!std::isfinite(v)) throw Error(at_layer(i) + ".weight holds a non-finite value");
    for (float v : l.bias)
      if (!std::isfinite(v)) throw Error(at_layer(i) + ".bias holds a non-finite value");
    if (static_cast<std::uint8_t>(l.act) > 2) throw Error(at_layer(i) + ".act is not a known activation");
    in = l.out;
  }
}

void reference_forward(const MlpModel& model, const float* dense, const std::uint32_t* cats,
                       std::size_t batch, double* out) {
  const std::size_t n_emb = model.embeddings.size();
  std::vector<double> x, y;
  for (std::size_t r = 0; r < batch; ++r) {
    x.assign(dense + r * model.dense_inputs, dense + (r + 1) * model.dense_inputs);
    for (std::size_t j = 0; j < n_emb; ++j) {
      const Embedding& e = model.embeddings[j];
      const std::uint32_t c = cats[r * n_emb + j];
      if (c >= e.cardinality) throw Error("reference_forward: category index out of range");
      x.insert(x.end(), e.table.begin() + std::size_t{c} * e.dim, e.table.begin() + std::size_t{c + 1} * e.dim);
    }
    for (const DenseLayer& l : model.layers) {
      y.assign(l.out, 0.0);
      for (std::uint32_t o = 0; o < l.out; ++o) {
        double s = l.bias[o];
        for (std::uint32_t i = 0; i < l.in; ++i) s += static_cast<double>(l.weight[std::size_t{o} * l.in + i]) * x[i];
        y[o] = activate(s, l.act);
      }
      x.swap(y);
    }
    for (std::size_t o = 0; o < x.size(); ++o) out[r * x.size() + o] = x[o];
  }
}

MlpModel prune_2_4(const MlpModel& model) {
  MlpModel pruned = model;
  std::vector<std::uint8_t> keep;
  for (DenseLayer& l : pruned.layers) {
    keep.resize(l.in);
    for (std::uint32_t o = 0; o < l.out; ++o) {
      float* row = l.weight.data() + std::size_t{o} * l.in;
      quant::mask_2_4(row, l.in, keep.data());
      for (std::uint32_t k = 0; k < l.in; ++k)
        if (!keep[k]) row[k] = 0.0f;
    }
  }
  return pruned;
}

}  // namespace ttlpred::engine
