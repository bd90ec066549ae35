// The GPU variants' arithmetic, emulated on the host with the same packed weights and scales:
// shows, without a GPU, that the error bounds the GPU tests use hold with margin for the
// quantization design itself (what remains for the GPU run is the kernels' faithfulness).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "engine/cuda/cuda_pack.hpp"
#include "engine/cuda/cuda_self_check.hpp"

namespace ttlpred::cuda {
namespace {

float act(float x, Activation a) {
  if (a == Activation::Relu) return std::max(x, 0.0f);
  if (a == Activation::LeakyRelu && x < 0) return x * kLeakyReluSlope;
  return x;
}
float round_half(float x) { return half_bits_to_float(float_to_half_bits(x)); }

// int8-static as the int32 + requant form runs it: quantized input, int32 accumulation,
// dequantize with in_scale * w_scale[n], bias, activation, requantize (fp16 before the last layer).
std::vector<double> emulate_int8(const MlpModel& m, const EncodedBatch& b, const std::vector<float>& scales) {
  const auto layers = pack_layers(m);
  std::vector<double> out;
  std::vector<double> row(m.first_layer_inputs());
  for (std::size_t r = 0; r < b.rows; ++r) {
    gather_first_layer_input(m, b.dense_row(r), b.cat_row(r), row.data());
    std::vector<float> x(row.begin(), row.end());
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      const PackedLayer& p = layers[l];
      std::vector<std::int32_t> qx(p.in);
      for (std::uint32_t i = 0; i < p.in; ++i) qx[i] = quantize_int8(x[i], scales[l]);
      std::vector<float> y(p.out);
      for (std::uint32_t o = 0; o < p.out; ++o) {
        std::int32_t acc = 0;
        for (std::uint32_t i = 0; i < p.in; ++i) acc += p.weight_i8[o * p.in_pad + i] * qx[i];
        y[o] = act(static_cast<float>(acc) * (scales[l] * p.weight_scale[o]) + p.bias_f32[o], p.act);
        if (l + 2 == layers.size()) y[o] = round_half(y[o]);  // fp16 into the last layer
      }
      x = std::move(y);
    }
    const PackedLayer& last = layers.back();
    for (std::uint32_t o = 0; o < last.out; ++o) {
      float s = 0;
      for (std::uint32_t i = 0; i < last.in; ++i) s += x[i] * last.weight_f32[o * last.in_pad + i];
      out.push_back(act(s + last.bias_f32[o], last.act));
    }
  }
  return out;
}

// fp16 / fused: fp16 inputs, weights and activations, fp32 accumulation.
std::vector<double> emulate_fp16(const MlpModel& m, const EncodedBatch& b) {
  const auto layers = pack_layers(m);
  std::vector<double> out;
  std::vector<double> row(m.first_layer_inputs());
  for (std::size_t r = 0; r < b.rows; ++r) {
    gather_first_layer_input(m, b.dense_row(r), b.cat_row(r), row.data());
    std::vector<float> x(row.size());
    std::transform(row.begin(), row.end(), x.begin(), [](double v) { return round_half(static_cast<float>(v)); });
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      const PackedLayer& p = layers[l];
      std::vector<float> y(p.out);
      for (std::uint32_t o = 0; o < p.out; ++o) {
        float s = 0;
        for (std::uint32_t i = 0; i < p.in; ++i) s += half_bits_to_float(p.weight_f16[o * p.in_pad + i]) * x[i];
        y[o] = round_half(act(s + p.bias_f32[o], p.act));
      }
      x = std::move(y);
    }
    const PackedLayer& last = layers.back();
    for (std::uint32_t o = 0; o < last.out; ++o) {
      float s = 0;
      for (std::uint32_t i = 0; i < last.in; ++i) s += x[i] * last.weight_f32[o * last.in_pad + i];
      out.push_back(act(s + last.bias_f32[o], last.act));
    }
  }
  return out;
}

double relative_error(const std::vector<double>& got, const std::vector<double>& ref) {
  double ref_max = 0, err = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ref_max = std::max(ref_max, std::fabs(ref[i]));
    err = std::max(err, std::fabs(got[i] - ref[i]));
  }
  return err / std::max(1.0, ref_max);
}

struct Model {
  const char* name;
  MlpModel model;
};

std::vector<Model> models() {
  RandomModelSpec odd{13, {{7, 3}, {100, 5}}, {37, 19, 1}, Activation::Relu};
  RandomModelSpec leaky{33, {}, {64, 50, 3}, Activation::LeakyRelu};
  return {{"bench shape", make_bench_model({96, 256, 256, 256, 1}, 1)},
          {"odd widths", make_random_model(odd, 2)},
          {"leaky", make_random_model(leaky, 3)}};
}

TEST(QuantizedPipeline, Int8StaticStaysWellInsideItsBound) {
  for (const Model& m : models()) {
    const EncodedBatch calib = make_random_batch(m.model, 1024, 10);
    const EncodedBatch data = make_random_batch(m.model, 256, 11);  // other rows than calibration
    const auto ref = reference_forward(m.model, data.dense.data(), data.cats.data(), data.rows);
    const double err = relative_error(emulate_int8(m.model, data, calibrate_activation_scales(m.model, calib)), ref);
    std::cout << "[   info   ] int8-static emulated, " << m.name << ": max error " << err << " of max(1, max|ref|)\n";
    EXPECT_LT(err, variant_tolerance(CudaVariant::Int8Static) / 3) << m.name;
    EXPECT_GT(err, 1e-4) << m.name << ": int8 cannot be this exact; is the emulation quantizing?";
  }
}

TEST(QuantizedPipeline, Fp16StaysWellInsideItsBound) {
  for (const Model& m : models()) {
    const EncodedBatch data = make_random_batch(m.model, 256, 12);
    const auto ref = reference_forward(m.model, data.dense.data(), data.cats.data(), data.rows);
    const double err = relative_error(emulate_fp16(m.model, data), ref);
    std::cout << "[   info   ] fp16 emulated, " << m.name << ": max error " << err << " of max(1, max|ref|)\n";
    EXPECT_LT(err, variant_tolerance(CudaVariant::Fp16) / 5) << m.name;
  }
}

}  // namespace
}  // namespace ttlpred::cuda
