#include "model/mlp_io.hpp"

#include <cmath>

#include "model/mlp_check.hpp"
#include "model/quantile_heads.hpp"

namespace ttlpred {

namespace {
// Bounds that keep a corrupted header from asking for absurd allocations.
constexpr std::uint64_t kMaxWidth = 1u << 16;
constexpr std::uint64_t kMaxCardinality = 1u << 26;
constexpr std::uint64_t kMaxEmbeddingDim = 1024;
constexpr std::uint64_t kMaxLayers = 64;

}  // namespace

void validate_mlp(const MlpModel& m, const std::string& what) {
  try {
    check_mlp(m);
  } catch (const Error& e) {
    throw Error(what + ": invalid " + e.what());
  }
  // One output (the mean) and up to kMaxQuantileHeads quantile heads (model/quantile_heads.hpp).
  if (m.layers.back().out < 1 || m.layers.back().out > 1 + kMaxQuantileHeads || m.layers.back().act != Activation::None)
    throw Error(what + ": invalid model: the last layer must have 1 to " + std::to_string(1 + kMaxQuantileHeads) +
                " outputs and no activation");
}

void write_mlp(BinaryWriter& w, const MlpModel& m) {
  w.put<std::uint32_t>(m.dense_inputs);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m.embeddings.size()));
  for (const auto& e : m.embeddings) {
    w.put<std::uint32_t>(e.cardinality);
    w.put<std::uint32_t>(e.dim);
    w.put_vector(e.table);
  }
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m.layers.size()));
  for (const auto& d : m.layers) {
    w.put<std::uint32_t>(d.in);
    w.put<std::uint32_t>(d.out);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(d.act));
    w.put_vector(d.weight);
    w.put_vector(d.bias);
  }
}

MlpModel read_mlp(BinaryReader& r) {
  MlpModel m;
  m.dense_inputs = r.get<std::uint32_t>();
  if (m.dense_inputs > kMaxWidth) r.fail("model claims " + std::to_string(m.dense_inputs) + " dense inputs");
  const auto n_emb = r.get<std::uint32_t>();
  if (n_emb > 4096) r.fail("model claims " + std::to_string(n_emb) + " embeddings");
  for (std::uint32_t j = 0; j < n_emb; ++j) {
    Embedding e;
    e.cardinality = r.get<std::uint32_t>();
    e.dim = r.get<std::uint32_t>();
    if (e.cardinality > kMaxCardinality || e.dim > kMaxEmbeddingDim)
      r.fail("embedding " + std::to_string(j) + " has implausible shape " + std::to_string(e.cardinality) + " x " +
             std::to_string(e.dim));
    e.table = r.get_vector<float>(static_cast<std::size_t>(e.cardinality) * e.dim);
    m.embeddings.push_back(std::move(e));
  }
  const auto n_layers = r.get<std::uint32_t>();
  if (n_layers > kMaxLayers) r.fail("model claims " + std::to_string(n_layers) + " layers");
  for (std::uint32_t l = 0; l < n_layers; ++l) {
    DenseLayer d;
    d.in = r.get<std::uint32_t>();
    d.out = r.get<std::uint32_t>();
    if (d.in > kMaxWidth || d.out > kMaxWidth)
      r.fail("layer " + std::to_string(l) + " has implausible shape " + std::to_string(d.out) + " x " + std::to_string(d.in));
    d.act = static_cast<Activation>(r.get<std::uint8_t>());
    d.weight = r.get_vector<float>(static_cast<std::size_t>(d.in) * d.out);
    d.bias = r.get_vector<float>(d.out);
    m.layers.push_back(std::move(d));
  }
  try {
    validate_mlp(m, "model");
  } catch (const Error& e) {
    r.fail(e.what());
  }
  return m;
}

std::size_t mlp_parameter_count(const MlpModel& m) {
  std::size_t n = 0;
  for (const auto& e : m.embeddings) n += e.table.size();
  for (const auto& d : m.layers) n += d.weight.size() + d.bias.size();
  return n;
}

}  // namespace ttlpred
