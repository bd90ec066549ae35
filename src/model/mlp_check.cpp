#include "model/mlp_check.hpp"

#include <cmath>
#include <string>

#include "util/error.hpp"

namespace ttlpred {

namespace {

std::string at_layer(std::size_t i) { return "model: layers[" + std::to_string(i) + "]"; }

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

void check_mlp(const MlpModel& model) {
  if (model.layers.empty()) throw Error("model: has no layers");
  for (std::size_t j = 0; j < model.embeddings.size(); ++j) {
    const Embedding& e = model.embeddings[j];
    const std::string where = "model: embeddings[" + std::to_string(j) + "]";
    if (e.cardinality == 0) throw Error(where + ".cardinality is 0 (needs at least the OOV row)");
    if (e.dim == 0) throw Error(where + ".dim is 0");
    if (e.table.size() != std::size_t{e.cardinality} * e.dim)
      throw Error(where + ".table has " + std::to_string(e.table.size()) + " values, expected cardinality*dim = " +
                  std::to_string(std::size_t{e.cardinality} * e.dim));
    if (!all_finite(e.table)) throw Error(where + ".table holds a non-finite value");
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
    if (!all_finite(l.weight)) throw Error(at_layer(i) + ".weight holds a non-finite value");
    if (!all_finite(l.bias)) throw Error(at_layer(i) + ".bias holds a non-finite value");
    if (static_cast<std::uint8_t>(l.act) > static_cast<std::uint8_t>(Activation::LeakyRelu))
      throw Error(at_layer(i) + ".act is not a known activation (" + std::to_string(static_cast<int>(l.act)) + ")");
    in = l.out;
  }
}

}  // namespace ttlpred
