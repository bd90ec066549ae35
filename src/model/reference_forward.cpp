#include "model/reference_forward.hpp"

#include <vector>

#include "model/model_input.hpp"

namespace ttlpred {

void reference_forward(const MlpModel& model, const float* dense, const std::uint32_t* cats, std::size_t batch,
                       double* out, const LayerInputObserver& observe) {
  const std::size_t n_emb = model.embeddings.size();
  if (n_emb > 0) {
    std::vector<std::uint32_t> cardinality;
    for (const Embedding& e : model.embeddings) cardinality.push_back(e.cardinality);
    check_category_indices(cardinality.data(), cardinality.size(), cats, batch, "reference_forward");
  }
  std::vector<double> x, y;
  for (std::size_t r = 0; r < batch; ++r) {
    x.assign(dense + r * model.dense_inputs, dense + (r + 1) * model.dense_inputs);
    for (std::size_t j = 0; j < n_emb; ++j) {
      const Embedding& e = model.embeddings[j];
      const std::uint32_t c = cats[r * n_emb + j];
      x.insert(x.end(), e.table.begin() + std::size_t{c} * e.dim, e.table.begin() + std::size_t{c + 1} * e.dim);
    }
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
      const DenseLayer& l = model.layers[i];
      if (observe) observe(i, x);
      y.assign(l.out, 0.0);
      for (std::uint32_t o = 0; o < l.out; ++o) {
        double s = l.bias[o];
        for (std::uint32_t k = 0; k < l.in; ++k) s += static_cast<double>(l.weight[std::size_t{o} * l.in + k]) * x[k];
        y[o] = activate(s, l.act);
      }
      x.swap(y);
    }
    for (std::size_t o = 0; o < x.size(); ++o) out[r * x.size() + o] = x[o];
  }
}

}  // namespace ttlpred
