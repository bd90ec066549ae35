#pragma once
// Random models and inputs for the engine tests: He-style uniform weights so that
// activations stay of order one through any depth, deterministic per seed.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/mlp.hpp"

namespace ttlpred::test {

struct EmbSpec {
  std::uint32_t cardinality, dim;
};

inline MlpModel random_model(std::uint32_t dense, const std::vector<EmbSpec>& embs,
                             const std::vector<std::uint32_t>& hidden, std::uint32_t outputs, unsigned seed,
                             Activation act = Activation::Relu) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  MlpModel m;
  m.dense_inputs = dense;
  for (const EmbSpec& e : embs) {
    Embedding emb;
    emb.cardinality = e.cardinality;
    emb.dim = e.dim;
    for (std::size_t i = 0; i < std::size_t{e.cardinality} * e.dim; ++i) emb.table.push_back(u(rng));
    m.embeddings.push_back(emb);
  }
  std::uint32_t in = m.first_layer_inputs();
  std::vector<std::uint32_t> widths = hidden;
  widths.push_back(outputs);
  for (std::size_t i = 0; i < widths.size(); ++i) {
    DenseLayer l;
    l.in = in;
    l.out = widths[i];
    const float a = std::sqrt(6.0f / static_cast<float>(in));
    for (std::size_t k = 0; k < std::size_t{l.in} * l.out; ++k) l.weight.push_back(a * u(rng));
    for (std::uint32_t k = 0; k < l.out; ++k) l.bias.push_back(0.1f * u(rng));
    l.act = i + 1 == widths.size() ? Activation::None : act;
    m.layers.push_back(l);
    in = l.out;
  }
  return m;
}

struct Inputs {
  std::vector<float> dense;
  std::vector<std::uint32_t> cats;
};

inline Inputs random_inputs(const MlpModel& m, std::size_t rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  Inputs in;
  for (std::size_t i = 0; i < rows * m.dense_inputs; ++i) in.dense.push_back(n(rng));
  for (std::size_t r = 0; r < rows; ++r)
    for (const Embedding& e : m.embeddings) in.cats.push_back(static_cast<std::uint32_t>(rng() % e.cardinality));
  return in;
}

}  // namespace ttlpred::test
