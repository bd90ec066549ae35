#pragma once
// A small valid model with deterministic weights, and what a refused model file says: shared
// by the model tests.
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "model/mlp.hpp"
#include "model/model_file.hpp"

namespace ttlpred::test {

inline MlpModel tiny_model() {
  MlpModel m;
  m.dense_inputs = 3;
  m.embeddings.push_back({4, 2, {0.f, 0.f, .1f, .2f, .3f, .4f, .5f, .6f}});
  const std::uint32_t widths[] = {5, 4, 1};
  std::uint32_t in = m.first_layer_inputs();
  float v = 0.01f;
  for (std::uint32_t out : widths) {
    DenseLayer d;
    d.in = in;
    d.out = out;
    for (std::uint32_t i = 0; i < in * out; ++i) d.weight.push_back(v += 0.01f);
    for (std::uint32_t o = 0; o < out; ++o) d.bias.push_back(-v);
    d.act = out == 1 ? Activation::None : Activation::Relu;
    m.layers.push_back(std::move(d));
    in = out;
  }
  return m;
}

// What parse_model_file says when it refuses `bytes` read as file `name`; "(accepted)" when
// it does not.
inline std::string model_file_refusal(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  try {
    parse_model_file(bytes, name);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace ttlpred::test
