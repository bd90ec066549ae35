#include "model/folded_embeddings.hpp"

#include "util/error.hpp"

namespace ttlpred {

std::vector<std::vector<float>> fold_embeddings(const MlpModel& model, std::uint32_t stride) {
  const DenseLayer& l0 = model.layers.at(0);
  if (stride < l0.out) throw Error("fold_embeddings: stride is below the first layer's width");
  std::vector<std::vector<float>> folded;
  std::uint32_t offset = model.dense_inputs;
  for (const Embedding& e : model.embeddings) {
    std::vector<float> f(std::size_t{e.cardinality} * stride, 0.0f);
    for (std::uint32_t c = 0; c < e.cardinality; ++c)
      for (std::uint32_t n = 0; n < l0.out; ++n) {
        double s = 0.0;
        for (std::uint32_t d = 0; d < e.dim; ++d)
          s += double{l0.weight[std::size_t{n} * l0.in + offset + d]} * e.table[std::size_t{c} * e.dim + d];
        f[std::size_t{c} * stride + n] = static_cast<float>(s);
      }
    offset += e.dim;
    folded.push_back(std::move(f));
  }
  return folded;
}

}  // namespace ttlpred
