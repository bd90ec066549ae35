#include "engine/plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/kernels.hpp"
#include "engine/pack.hpp"
#include "model/folded_embeddings.hpp"
#include "model/mlp_check.hpp"
#include "quant/fake_quant.hpp"
#include "quant/sparse24.hpp"
#include "util/error.hpp"

namespace ttlpred::engine {

using detail::kPanel;
using detail::LayerCall;
using detail::LayerStore;
using detail::WeightFormat;

namespace {

// Rows pushed through the whole network at once: small enough that the activations of a
// chunk stay in L1/L2 between layers, large enough to amortize each layer's weights.
constexpr std::size_t kChunkRows = 64;

std::size_t round_up(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }

const detail::KernelSet& kernels_for(Isa isa, bool emulated) {
  switch (isa) {
    case Isa::Avx2: return detail::avx2_kernels();
    case Isa::Avx512: return emulated ? detail::avx512_emulated_kernels() : detail::avx512_kernels();
    case Isa::Avx512Vnni: return emulated ? detail::avx512vnni_emulated_kernels() : detail::avx512vnni_kernels();
    case Isa::Avx512Bf16: return emulated ? detail::avx512bf16_emulated_kernels() : detail::avx512bf16_kernels();
    case Isa::Avx512Amx: return emulated ? detail::avx512amx_emulated_kernels() : detail::avx512amx_kernels();
    default: return detail::scalar_kernels();
  }
}

}  // namespace

struct Plan::Impl {
  Variant variant = Variant::Fp32;
  Isa isa = Isa::Scalar;
  const detail::KernelSet* kernels = nullptr;
  bool baseline = false, int8 = false, dynamic = false;
  float static_qmax = 255.0f;  // int8-static: largest u8 activation code
  std::uint32_t dense_inputs = 0, outputs = 0;
  std::vector<std::uint32_t> cardinality;
  std::vector<LayerStore> layers;
  std::vector<std::vector<float>> folded;  // fused: embedding j through layer 0, card x cols
  std::vector<const float*> folded_ptrs;
  std::vector<Embedding> embeddings;       // baseline: gathered, not folded
  std::size_t stride = 0;                  // scratch row stride, elements
  std::size_t scratch_bytes = 0;

  void run_chunk(const float* dense, const std::uint32_t* cats, std::size_t rows, float* out, std::byte* scratch) const;
};

namespace {

struct Scratch {
  float* f[2];
  std::uint8_t* q[2];
  float* row_scale;
  float* row_zp;
};

Scratch carve(std::byte* base, std::size_t stride) {
  Scratch s;
  const std::size_t fbytes = kChunkRows * stride * sizeof(float), qbytes = kChunkRows * stride;
  s.f[0] = reinterpret_cast<float*>(base);
  s.f[1] = reinterpret_cast<float*>(base + fbytes);
  s.q[0] = reinterpret_cast<std::uint8_t*>(base + 2 * fbytes);
  s.q[1] = reinterpret_cast<std::uint8_t*>(base + 2 * fbytes + qbytes);
  s.row_scale = reinterpret_cast<float*>(base + 2 * fbytes + 2 * qbytes);
  s.row_zp = s.row_scale + kChunkRows;
  return s;
}

void apply_activation(float* y, std::size_t rows, std::size_t cols, std::size_t stride, Activation act) {
  for (std::size_t m = 0; m < rows; ++m)
    for (std::size_t n = 0; n < cols; ++n) {
      float& v = y[m * stride + n];
      v = activate(v, act);
    }
}

}  // namespace

void Plan::Impl::run_chunk(const float* dense, const std::uint32_t* cats, std::size_t rows, float* out,
                           std::byte* base) const {
  Scratch s = carve(base, stride);
  const detail::KernelSet& k = *kernels;
  const std::size_t n_emb = cardinality.size();
  const std::size_t last = layers.size() - 1;

  if (baseline) {
    // Framework-style: concatenate the inputs, then per layer a GEMM, a bias pass and an
    // activation pass, each over memory.
    float* x = s.f[0];
    for (std::size_t m = 0; m < rows; ++m) {
      float* row = x + m * stride;
      std::copy(dense + m * dense_inputs, dense + (m + 1) * dense_inputs, row);
      std::size_t at = dense_inputs;
      for (std::size_t j = 0; j < n_emb; ++j) {
        const Embedding& e = embeddings[j];
        const float* src = e.table.data() + std::size_t{cats[m * n_emb + j]} * e.dim;
        std::copy(src, src + e.dim, row + at);
        at += e.dim;
      }
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const detail::PackedLayer& L = layers[i].packed;
      LayerCall c;
      c.rows = rows;
      c.x = x;
      c.x_stride = stride;
      const bool is_last = i == last;
      float* y = is_last ? out : s.f[(i + 1) % 2];
      c.y = y;
      c.y_stride = is_last ? L.out : stride;
      c.y_cols = L.out;
      c.raw = true;
      k.gemm[static_cast<int>(L.format)](L, c);
      for (std::size_t m = 0; m < rows; ++m)
        for (std::size_t n = 0; n < L.out; ++n) y[m * c.y_stride + n] += L.bias[n];
      apply_activation(y, rows, L.out, c.y_stride, L.act);
      x = y;
    }
    return;
  }

  // Fused paths. `xf` / `xq` is the current layer's input (float or u8).
  const float* xf = dense;
  std::size_t xf_stride = dense_inputs;
  const std::uint8_t* xq = nullptr;
  const LayerStore& first = layers[0];
  if (first.packed.format == WeightFormat::F16Sp24 && first.packed.in_padded != dense_inputs) {
    // The sparse kernel reads whole groups of 4 inputs: give it zero-padded rows.
    for (std::size_t m = 0; m < rows; ++m) {
      float* row = s.f[1] + m * stride;
      std::copy(dense + m * dense_inputs, dense + (m + 1) * dense_inputs, row);
      std::fill(row + dense_inputs, row + first.packed.in_padded, 0.0f);
    }
    xf = s.f[1];
    xf_stride = stride;
  }
  if (int8 && !dynamic) {
    const float qmax = static_qmax;
    k.quantize_static(dense, rows, dense_inputs, dense_inputs, s.q[0], stride, first.packed.in_padded,
                      1.0f / first.in_scale, first.in_zp, qmax);
    xq = s.q[0];
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerStore& st = layers[i];
    const detail::PackedLayer& L = st.packed;
    const bool is_last = i == last;
    LayerCall c;
    c.rows = rows;
    if (i == 0 && n_emb > 0) {
      c.cats = cats;
      c.cat_stride = n_emb;
      c.n_folded = static_cast<std::uint32_t>(n_emb);
      c.folded = folded_ptrs.data();
    }
    if (dynamic) {
      k.quantize_dynamic(xf, rows, L.in, xf_stride, s.q[i % 2], stride, L.in_padded, k.act_qmax, s.row_scale,
                         s.row_zp);
      c.x = s.q[i % 2];
      c.x_stride = stride;
      c.row_scale = s.row_scale;
      c.row_zp = s.row_zp;
    } else if (int8) {
      c.x = xq;
      c.x_stride = stride;
    } else {
      c.x = xf;
      c.x_stride = xf_stride;
    }
    if (is_last) {
      c.y = out;
      c.y_stride = L.out;
      c.y_cols = L.out;
    } else if (int8 && !dynamic) {
      const LayerStore& next = layers[i + 1];
      std::uint8_t* y = s.q[(i + 1) % 2];
      c.y = y;
      c.y_stride = stride;
      c.y_cols = L.cols_padded();
      c.out_u8 = true;
      c.out_inv_scale = 1.0f / next.in_scale;
      c.out_zp = next.in_zp;
      c.out_qmax = static_qmax;
      xq = y;
    } else {
      float* y = s.f[i % 2];
      c.y = y;
      c.y_stride = stride;
      c.y_cols = L.cols_padded();
      xf = y;
      xf_stride = stride;
    }
    k.gemm[static_cast<int>(L.format)](L, c);
  }
}

void Plan::predict(const float* dense, const std::uint32_t* cats, std::size_t batch, float* out) const {
  if (!impl_) throw Error("predict: the plan is empty (not compiled)");
  if (batch == 0) return;
  const Impl& p = *impl_;
  const std::size_t n_emb = p.cardinality.size();
  if ((p.dense_inputs > 0 && !dense) || !out || (n_emb > 0 && !cats))
    throw Error("predict: null input or output buffer");
  if (n_emb > 0) check_category_indices(p.cardinality.data(), n_emb, cats, batch, "predict");
  // One arena per thread, grown to the largest plan it has run: no allocation per call and
  // no sharing between threads.
  thread_local std::vector<std::byte> arena;
  if (arena.size() < p.scratch_bytes) arena.resize(p.scratch_bytes);
  for (std::size_t r = 0; r < batch; r += kChunkRows) {
    const std::size_t rows = std::min(kChunkRows, batch - r);
    p.run_chunk(dense + r * p.dense_inputs, n_emb ? cats + r * n_emb : nullptr, rows, out + r * p.outputs,
                arena.data());
  }
}

void Plan::predict(const EncodedBatch& batch, float* out) const {
  if (!impl_) throw Error("predict: the plan is empty (not compiled)");
  if (batch.dense_width != impl_->dense_inputs || batch.cat_width != impl_->cardinality.size())
    throw Error("predict: batch has " + std::to_string(batch.dense_width) + " dense and " +
                std::to_string(batch.cat_width) + " categorical columns, the model expects " +
                std::to_string(impl_->dense_inputs) + " and " + std::to_string(impl_->cardinality.size()));
  if (batch.dense.size() < batch.rows * batch.dense_width || batch.cats.size() < batch.rows * batch.cat_width)
    throw Error("predict: batch arrays are shorter than rows x width");
  predict(batch.dense.data(), batch.cats.empty() ? nullptr : batch.cats.data(), batch.rows, out);
}

std::vector<float> Plan::predict(const EncodedBatch& batch) const {
  std::vector<float> out(batch.rows * outputs());
  predict(batch, out.data());
  return out;
}

Variant Plan::variant() const { return impl_ ? impl_->variant : Variant::Fp32; }
Isa Plan::isa() const { return impl_ ? impl_->isa : Isa::Scalar; }
std::uint32_t Plan::dense_inputs() const { return impl_ ? impl_->dense_inputs : 0; }
std::uint32_t Plan::n_categorical() const { return impl_ ? static_cast<std::uint32_t>(impl_->cardinality.size()) : 0; }
std::uint32_t Plan::outputs() const { return impl_ ? impl_->outputs : 0; }

std::size_t Plan::packed_bytes() const {
  if (!impl_) return 0;
  std::size_t n = 0;
  for (const LayerStore& l : impl_->layers) n += l.bytes();
  for (const auto& f : impl_->folded) n += f.size() * sizeof(float);
  return n;
}

std::vector<std::string> Plan::kernel_names() const {
  std::vector<std::string> names;
  if (!impl_) return names;
  for (const LayerStore& l : impl_->layers) {
    std::string n = impl_->kernels->gemm_name[static_cast<int>(l.packed.format)];
    if (impl_->baseline) n += " + bias pass + activation pass";
    names.push_back(n);
  }
  return names;
}

Plan compile(const MlpModel& input_model, Variant variant, const CompileOptions& options) {
  check_mlp(input_model);
  const VariantTraits& traits = variant_traits(variant);
  const Isa isa = options.isa.value_or(best_isa());
  if (!isa_implemented(isa))
    throw Error("ISA '" + std::string(isa_name(isa)) +
                "' has no kernels in this build (implemented: scalar, avx2, avx512, avx512-vnni, avx512-bf16, avx512-amx)");
  if (options.emulated && !isa_emulated(isa))
    throw Error("ISA '" + std::string(isa_name(isa)) +
                "' has no emulated kernels (emulated: avx512, avx512-vnni, avx512-bf16, avx512-amx)");
  if (!options.emulated && !host_supports(isa))
    throw Error("ISA '" + std::string(isa_name(isa)) + "' is not supported by this CPU");

  const MlpModel model = traits.sparse ? quant::prune_2_4(input_model) : input_model;
  auto impl = std::make_shared<Plan::Impl>();
  impl->variant = variant;
  impl->isa = isa;
  impl->kernels = &kernels_for(isa, options.emulated);
  impl->baseline = !traits.fused;
  impl->int8 = traits.int8;
  impl->dynamic = traits.dynamic;
  impl->dense_inputs = model.dense_inputs;
  impl->outputs = model.layers.back().out;
  for (const Embedding& e : model.embeddings) impl->cardinality.push_back(e.cardinality);

  const bool needs_calib = traits.needs_calibration;
  if (needs_calib) {
    if (!options.calibration)
      throw Error("variant '" + std::string(variant_name(variant)) +
                  "' needs calibrated activation ranges (quantize the model with calibration data first)");
    if (options.calibration->layer_inputs.size() != model.layers.size())
      throw Error("calibration table has " + std::to_string(options.calibration->layer_inputs.size()) +
                  " layer ranges, the model has " + std::to_string(model.layers.size()) + " layers");
  }

  if (needs_calib) impl->static_qmax = quant::plan_act_qmax(*options.calibration, impl->kernels->act_qmax);
  const WeightFormat format = variant_weight_format(variant, isa);
  if (!impl->kernels->gemm[static_cast<int>(format)])
    throw Error("ISA '" + std::string(isa_name(isa)) + "' has no kernel for the " +
                std::string(weight_format_name(format)) + " weights of variant '" + std::string(traits.name) + "'");
  std::size_t widest = model.first_layer_inputs();
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const DenseLayer& l = model.layers[i];
    // Fused plans feed layer 0 only the dense inputs; the embedding columns are folded.
    const std::uint32_t in = (i == 0 && !impl->baseline) ? model.dense_inputs : l.in;
    detail::WeightView view{l.weight.data(), l.in, l.out, in};
    LayerStore st = detail::pack_layer(view, l.bias.data(), l.act, format);
    if (needs_calib) {
      const quant::QuantParams q = quant::quant_params(options.calibration->layer_inputs[i], impl->static_qmax);
      st.in_scale = q.scale;
      st.in_zp = q.zero_point;
      // acc * s_in * s_w + b with x = s_in * (q - zp): fold -zp * sum(w) into the bias.
      for (std::uint32_t n = 0; n < l.out; ++n) {
        st.col_scale[n] *= q.scale;
        st.bias[n] -= st.col_scale[n] * q.zero_point * st.wsum[n];
      }
    }
    st.bind();
    widest = std::max<std::size_t>({widest, st.packed.cols_padded(), st.packed.in_padded});
    impl->layers.push_back(std::move(st));
  }

  if (impl->baseline) {
    impl->embeddings = model.embeddings;
  } else {
    // Embedding j folded through layer 0's columns for it: one row per category, so that a
    // categorical input costs one add per output at run time.
    impl->folded = fold_embeddings(model, impl->layers[0].packed.cols_padded());
    for (const auto& f : impl->folded) impl->folded_ptrs.push_back(f.data());
  }
  impl->stride = round_up(widest, kPanel);
  impl->scratch_bytes = kChunkRows * impl->stride * (2 * sizeof(float) + 2) + 2 * kChunkRows * sizeof(float);
  Plan plan;
  plan.impl_ = std::move(impl);
  return plan;
}

}  // namespace ttlpred::engine
