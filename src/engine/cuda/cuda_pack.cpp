#include "engine/cuda/cuda_pack.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/folded_embeddings.hpp"
#include "model/mlp_check.hpp"
#include "quant/fake_quant.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {

std::vector<Int8Grid> int8_grids(const quant::ActivationRanges& table, std::size_t layers) {
  if (table.layer_inputs.size() != layers)
    throw Error("CUDA int8-static: calibration table has " + std::to_string(table.layer_inputs.size()) +
                " layer ranges, the model has " + std::to_string(layers) + " layers");
  const float qmax = quant::plan_act_qmax(table, kCudaActQmax);
  std::vector<Int8Grid> grids;
  for (const quant::ActivationRange& r : table.layer_inputs) {
    const quant::QuantParams p = quant::quant_params(r, qmax);
    Int8Grid g;
    g.scale = p.scale;
    g.inv_scale = 1.0f / p.scale;
    g.zero_point = p.zero_point;
    g.qmax = qmax;
    g.lo = -p.zero_point;
    g.hi = qmax - p.zero_point;
    grids.push_back(g);
  }
  return grids;
}

std::int8_t quantize_activation(float x, const Int8Grid& g) {
  return static_cast<std::int8_t>(std::clamp(std::nearbyint(x * g.inv_scale), g.lo, g.hi));
}

std::vector<PackedLayer> pack_layers(const MlpModel& model) {
  check_mlp(model);
  std::vector<PackedLayer> packed;
  packed.reserve(model.layers.size());
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const DenseLayer& d = model.layers[l];
    PackedLayer p;
    p.in = d.in;
    p.out = d.out;
    p.in_pad = pad_width(d.in);
    p.out_pad = pad_width(d.out);
    p.act = d.act;
    const std::size_t n = static_cast<std::size_t>(p.out_pad) * p.in_pad;
    p.weight_f32.assign(n, 0.0f);
    p.bias_f32.assign(p.out_pad, 0.0f);
    for (std::uint32_t o = 0; o < d.out; ++o) {
      std::copy_n(d.weight.begin() + static_cast<std::ptrdiff_t>(std::size_t{o} * d.in), d.in,
                  p.weight_f32.begin() + static_cast<std::ptrdiff_t>(std::size_t{o} * p.in_pad));
      p.bias_f32[o] = d.bias[o];
    }
    p.weight_f16.resize(n);
    std::transform(p.weight_f32.begin(), p.weight_f32.end(), p.weight_f16.begin(), quant::float_to_half);
    p.bias_f16.resize(p.out_pad);
    std::transform(p.bias_f32.begin(), p.bias_f32.end(), p.bias_f16.begin(), quant::float_to_half);

    p.q_in = l == 0 ? model.dense_inputs : d.in;
    p.q_in_pad = pad_width(p.q_in);
    p.weight_i8.assign(static_cast<std::size_t>(p.out_pad) * p.q_in_pad, 0);
    p.weight_scale.assign(p.out_pad, 1.0f);
    quant::quantize_weight_rows(d.weight.data(), d.in, d.out, p.q_in, p.weight_i8.data(), p.q_in_pad,
                                p.weight_scale.data());
    p.weight_dequant.assign(static_cast<std::size_t>(d.out) * p.in_pad, 0.0f);
    for (std::uint32_t o = 0; o < d.out; ++o)
      for (std::uint32_t k = 0; k < p.q_in; ++k)
        p.weight_dequant[std::size_t{o} * p.in_pad + k] =
            p.weight_scale[o] * static_cast<float>(p.weight_i8[std::size_t{o} * p.q_in_pad + k]);
    packed.push_back(std::move(p));
  }
  return packed;
}

PackedEmbeddings pack_embeddings(const MlpModel& model) {
  check_mlp(model);
  PackedEmbeddings pe;
  for (std::uint32_t j = 0; j < model.embeddings.size(); ++j) {
    const Embedding& e = model.embeddings[j];
    pe.table_offset.push_back(static_cast<std::uint32_t>(pe.tables.size()));
    pe.dim.push_back(e.dim);
    pe.cardinality.push_back(e.cardinality);
    pe.tables.insert(pe.tables.end(), e.table.begin(), e.table.end());
    for (std::uint32_t c = 0; c < e.dim; ++c) {
      pe.column_table.push_back(j);
      pe.column_component.push_back(c);
    }
  }
  for (const std::vector<float>& f : fold_embeddings(model, pad_width(model.layers[0].out))) {
    pe.folded_offset.push_back(pe.folded.size());
    pe.folded.insert(pe.folded.end(), f.begin(), f.end());
  }
  return pe;
}

}  // namespace ttlpred::cuda
