#include "train/compression.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "quant/sparse24.hpp"
#include "util/aligned_vector.hpp"
#include "util/error.hpp"

namespace ttlpred {

std::string compression_label(const CompressionConfig& c) {
  std::string s;
  if (c.qat_int8) s = "int8-qat";
  if (c.sparse_2_4) {
    if (!s.empty()) s += "+";
    s += c.sparsity_method == SparsityMethod::SrSte ? "2:4 (sr-ste)" : "2:4";
  }
  return s;
}

std::string compression_json(const CompressionConfig& c) {
  nlohmann::json j = {{"qat", c.qat_int8 ? "int8" : "none"},
                      {"sparsity", c.sparse_2_4 ? "2:4" : "none"}};
  if (c.sparse_2_4) {
    j["sparsity_method"] = c.sparsity_method == SparsityMethod::SrSte ? "sr-ste" : "fixed-mask";
    if (c.sparsity_method == SparsityMethod::SrSte) j["srste_decay"] = c.srste_decay;
  }
  if (c.qat_int8) {
    j["act_levels"] = c.act_qmax;
    j["act_calibration"] = std::string(quant::range_method_name(c.act_calibration.method));
    j["calibration_rows"] = c.calibration_rows;
  }
  return j.dump();
}

SparsityMethod sparsity_method_from_name(const std::string& name) {
  if (name == "fixed-mask") return SparsityMethod::FixedMask;
  if (name == "sr-ste") return SparsityMethod::SrSte;
  throw Error("unknown sparsity method '" + name + "' (known: fixed-mask, sr-ste)");
}

ActQuantPlan act_quant_plan(const quant::ActivationRanges& table, float qmax) {
  ActQuantPlan p;
  for (const quant::ActivationRange& r : table.layer_inputs) p.layer_inputs.push_back(quant::ActFakeQuant::make(r, qmax));
  return p;
}

WeightCompressor::WeightCompressor(const NetShape& shape, const CompressionConfig& config)
    : shape_(shape), layout_(shape), config_(config), keep_(layout_.total, 1) {}

void WeightCompressor::compute_mask(const float* latent, std::vector<std::uint8_t>& keep) const {
  for (std::size_t l = 0; l < shape_.widths.size(); ++l) {
    const std::uint32_t in = shape_.layer_inputs(l);
    for (std::uint32_t o = 0; o < shape_.widths[l]; ++o) {
      const std::size_t at = layout_.weight[l] + std::size_t{o} * in;
      quant::mask_2_4(latent + at, in, keep.data() + at);
    }
  }
}

void WeightCompressor::start(float* latent) {
  if (!config_.sparse_2_4) return;
  compute_mask(latent, keep_);
  project(latent);
}

void WeightCompressor::effective(const float* latent, float* eff) {
  if (config_.sparse_2_4 && config_.sparsity_method == SparsityMethod::SrSte) compute_mask(latent, keep_);
  std::copy(latent, latent + layout_.total, eff);
  if (config_.sparse_2_4)
    for (std::size_t i = layout_.embeddings_end; i < layout_.total; ++i)
      if (!keep_[i]) eff[i] = 0.0f;
  if (!config_.qat_int8) return;
  for (std::size_t l = 0; l < shape_.widths.size(); ++l) {
    const std::uint32_t in = shape_.layer_inputs(l);
    // A fused int8 plan quantizes layer 0 over its dense columns; the embedding columns are
    // folded into per-category float tables.
    const std::uint32_t quantized = l == 0 ? shape_.dense_inputs : in;
    for (std::uint32_t o = 0; o < shape_.widths[l]; ++o)
      quant::fake_quantize_weight_row(eff + layout_.weight[l] + std::size_t{o} * in, quantized);
  }
}

void WeightCompressor::latent_gradient(const float* latent, float* grad) const {
  if (!config_.sparse_2_4) return;  // plain straight-through: nothing clips a weight
  const bool srste = config_.sparsity_method == SparsityMethod::SrSte;
  for (std::size_t i = layout_.embeddings_end; i < layout_.total; ++i)
    if (!keep_[i]) grad[i] = srste ? grad[i] + config_.srste_decay * latent[i] : 0.0f;
}

void WeightCompressor::project(float* latent) const {
  if (!config_.sparse_2_4 || config_.sparsity_method != SparsityMethod::FixedMask) return;
  for (std::size_t i = layout_.embeddings_end; i < layout_.total; ++i)
    if (!keep_[i]) latent[i] = 0.0f;
}

std::vector<float> WeightCompressor::exported(const float* latent) const {
  std::vector<float> out(latent, latent + layout_.total);
  if (config_.sparse_2_4) {
    std::vector<std::uint8_t> keep(keep_);
    // SR-STE: the mask of the weights as they are now, as the engine will select them.
    if (config_.sparsity_method == SparsityMethod::SrSte) compute_mask(latent, keep);
    for (std::size_t i = layout_.embeddings_end; i < layout_.total; ++i)
      if (!keep[i]) out[i] = 0.0f;
  }
  return out;
}

void simulate_int8_static(const MlpModel& model, const quant::ActivationRanges& table, const EncodedBatch& x,
                          std::span<float> out_z) {
  if (table.layer_inputs.size() != model.layers.size())
    throw Error("int8 simulation: the calibration table has " + std::to_string(table.layer_inputs.size()) +
                " layer ranges, the model has " + std::to_string(model.layers.size()) + " layers");
  if (out_z.size() != x.rows) throw Error("int8 simulation: output size differs from the number of rows");
  if (x.dense_width != model.dense_inputs || x.cat_width != model.embeddings.size())
    throw Error("int8 simulation: the batch's widths differ from the model's inputs");
  const NetShape shape = shape_of(model);
  const NetLayout layout(shape);
  CompressionConfig qat;
  qat.qat_int8 = true;
  WeightCompressor wc(shape, qat);
  const std::vector<float> latent = pack_parameters(model);
  AlignedVector<float> eff(layout.total);
  wc.effective(latent.data(), eff.data());
  const ActQuantPlan aq = act_quant_plan(table, table.act_qmax > 0.0f ? table.act_qmax : 255.0f);
  NetWorkspace<float> ws;
  std::vector<std::uint32_t> rows;
  constexpr std::size_t kChunk = 1024;
  for (std::size_t b = 0; b < x.rows; b += kChunk) {
    const std::size_t e = std::min(x.rows, b + kChunk);
    rows.resize(e - b);
    for (std::size_t i = b; i < e; ++i) rows[i - b] = static_cast<std::uint32_t>(i);
    net_forward<float>(shape, layout, eff.data(), x, rows, ws, out_z.data() + b, &aq);
  }
}

}  // namespace ttlpred
