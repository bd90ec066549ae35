#include "peers/onednn_peer.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <dnnl.hpp>
#include <vector>

#include "util/error.hpp"

namespace ttlpred::peers {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct OneDnnMlp::State {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  Kind kind = Kind::Fp32;
  std::size_t batch = 0;
  struct Layer {
    dnnl::matmul prim;
    memory src, wei, bias, dst;
  };
  std::vector<Layer> layers;
  memory input;  // the caller's f32 rows
  dnnl::reorder quantize_input;  // int8: f32 -> s8 with the calibrated scale
};

std::string OneDnnMlp::name(Kind kind) { return kind == Kind::Fp32 ? "onednn_fp32" : "onednn_int8"; }

OneDnnMlp::OneDnnMlp(const MlpModel& model, Kind kind, std::size_t batch, const quant::ActivationRanges* calibration,
                     int threads)
    : s_(std::make_unique<State>()) {
  if (!model.embeddings.empty()) throw Error("oneDNN peer: models with embeddings are not supported");
  if (kind == Kind::Int8 && (!calibration || calibration->layer_inputs.size() != model.layers.size()))
    throw Error("oneDNN peer: int8 needs a calibration table with one range per layer");
  omp_set_num_threads(std::max(1, threads));
  State& s = *s_;
  s.kind = kind;
  s.batch = batch;
  const auto M = static_cast<memory::dim>(batch);
  const bool int8 = kind == Kind::Int8;
  // Activation scales: symmetric s8 for the (signed) model inputs, u8 after each ReLU.
  std::vector<float> act_scale(model.layers.size(), 1.0f);
  // Without VNNI, oneDNN multiplies with vpmaddubsw, whose int16 pair sums saturate for full
  // 8-bit operands; its documentation advises 7-bit weights there, as we do.
  const float wmax = __builtin_cpu_supports("avx512vnni") ? 127.0f : 63.0f;
  if (int8)
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
      const quant::ActivationRange r = calibration->layer_inputs[i];
      const float amax = std::max(std::fabs(r.lo), std::fabs(r.hi));
      act_scale[i] = amax > 0 ? amax / (i == 0 ? 127.0f : 255.0f) : 1.0f;
    }
  s.input = memory({{M, static_cast<memory::dim>(model.dense_inputs)}, dt::f32, tag::ab}, s.eng, DNNL_MEMORY_NONE);
  memory prev_dst;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const DenseLayer& l = model.layers[i];
    const bool last = i + 1 == model.layers.size();
    const auto K = static_cast<memory::dim>(l.in), N = static_cast<memory::dim>(l.out);
    const dt src_dt = !int8 ? dt::f32 : (i == 0 ? dt::s8 : dt::u8);
    const dt dst_dt = (!int8 || last) ? dt::f32 : dt::u8;
    memory::desc src_md({M, K}, src_dt, tag::ab), wei_md({K, N}, int8 ? dt::s8 : dt::f32, tag::any),
        bias_md({1, N}, dt::f32, tag::ab), dst_md({M, N}, dst_dt, tag::ab);
    dnnl::primitive_attr attr;
    dnnl::post_ops po;
    if (l.act == Activation::Relu) po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    if (l.act == Activation::LeakyRelu) po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, kLeakyReluSlope, 0.0f);
    attr.set_post_ops(po);
    std::vector<float> bias(l.bias);
    std::vector<std::int8_t> wq;
    if (int8) {
      const float out_scale = last ? 1.0f : act_scale[i + 1];
      std::vector<float> scales(l.out);
      wq.resize(l.weight.size());
      for (std::uint32_t n = 0; n < l.out; ++n) {
        float amax = 0.0f;
        for (std::uint32_t k = 0; k < l.in; ++k) amax = std::max(amax, std::fabs(l.weight[std::size_t{n} * l.in + k]));
        const float sw = amax > 0 ? amax / wmax : 1.0f;
        for (std::uint32_t k = 0; k < l.in; ++k)
          wq[std::size_t{n} * l.in + k] = static_cast<std::int8_t>(std::nearbyint(l.weight[std::size_t{n} * l.in + k] / sw));
        scales[n] = act_scale[i] * sw / out_scale;
        bias[n] = l.bias[n] / (act_scale[i] * sw);  // oneDNN adds the bias before the output scale
      }
      attr.set_output_scales(1 << 1, scales);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, bias_md, dst_md), attr, s.eng);
    State::Layer L;
    L.prim = dnnl::matmul(pd);
    memory user_w({{K, N}, int8 ? dt::s8 : dt::f32, tag::ba}, s.eng,
                  int8 ? static_cast<void*>(wq.data()) : const_cast<float*>(l.weight.data()));
    L.wei = memory(pd.weights_desc(), s.eng);
    dnnl::reorder(user_w, L.wei).execute(s.strm, user_w, L.wei);
    L.bias = memory(bias_md, s.eng);
    std::copy(bias.begin(), bias.end(), static_cast<float*>(L.bias.get_data_handle()));
    if (i == 0) {
      if (int8) {
        L.src = memory(src_md, s.eng);
        dnnl::primitive_attr rattr;
        rattr.set_output_scales(0, {1.0f / act_scale[0]});
        s.quantize_input = dnnl::reorder(dnnl::reorder::primitive_desc(s.input, L.src, rattr));
      } else {
        L.src = s.input;
      }
    } else {
      L.src = prev_dst;
    }
    L.dst = last ? memory(dst_md, s.eng, DNNL_MEMORY_NONE) : memory(dst_md, s.eng);
    prev_dst = L.dst;
    s.layers.push_back(std::move(L));
  }
  s.strm.wait();
}

OneDnnMlp::~OneDnnMlp() = default;

void OneDnnMlp::run(const float* dense, float* out) {
  State& s = *s_;
  s.input.set_data_handle(const_cast<float*>(dense));
  s.layers.back().dst.set_data_handle(out);
  if (s.kind == Kind::Int8) s.quantize_input.execute(s.strm, s.input, s.layers[0].src);
  for (State::Layer& L : s.layers)
    L.prim.execute(s.strm, {{DNNL_ARG_SRC, L.src}, {DNNL_ARG_WEIGHTS, L.wei}, {DNNL_ARG_BIAS, L.bias}, {DNNL_ARG_DST, L.dst}});
  s.strm.wait();
}

}  // namespace ttlpred::peers
