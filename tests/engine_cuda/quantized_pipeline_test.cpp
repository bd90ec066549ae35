// The GPU variants' arithmetic, emulated on the host with the backend's own packing and
// grids: shows, without a GPU, that the int8 arithmetic the kernels implement is the CPU
// engine's and QAT's grid (test::Int8Emulation: every output the exact int8 arithmetic can
// reach), and that the error bounds the GPU tests use hold with margin for the quantization
// design itself (what remains for a GPU run is the kernels' faithfulness).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include "../train/int8_emulation.hpp"
#include "engine/cuda/cuda_pack.hpp"
#include "engine/cuda/cuda_self_check.hpp"
#include "engine/plan.hpp"
#include "model/reference_forward.hpp"
#include "quant/half.hpp"

namespace ttlpred::cuda {
namespace {

float round_half(float x) { return quant::half_to_float(quant::float_to_half(x)); }

// int8-static as the GPU runs it, on the host, from the CUDA packing: the requantization form
// (elementwise_kernels.cu's gather, requant and final-layer kernels, in the same float steps).
std::vector<float> emulate_int8(const MlpModel& m, const quant::ActivationRanges& t, const EncodedBatch& x) {
  const auto layers = pack_layers(m);
  const PackedEmbeddings emb = pack_embeddings(m);
  const std::vector<Int8Grid> grids = int8_grids(t, m.layers.size());
  std::vector<float> out(x.rows);
  for (std::size_t r = 0; r < x.rows; ++r) {
    std::vector<std::int8_t> s8(layers[0].q_in_pad, 0);
    for (std::uint32_t k = 0; k < m.dense_inputs; ++k) s8[k] = quantize_activation(x.dense_row(r)[k], grids[0]);
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      const PackedLayer& p = layers[l];
      std::vector<std::int8_t> next(p.out_pad, 0);
      for (std::uint32_t n = 0; n < p.out_pad; ++n) {
        std::int32_t acc = 0;
        for (std::uint32_t k = 0; k < p.q_in_pad; ++k)
          acc += std::int32_t{s8[k]} * std::int32_t{p.weight_i8[std::size_t{n} * p.q_in_pad + k]};
        float v = static_cast<float>(acc) * (grids[l].scale * p.weight_scale[n]) + p.bias_f32[n];
        if (l == 0)
          for (std::size_t j = 0; j < x.cat_width; ++j)
            v += emb.folded[emb.folded_offset[j] + std::size_t{x.cat_row(r)[j]} * p.out_pad + n];
        next[n] = quantize_activation(activate(v, p.act), grids[l + 1]);
      }
      s8 = std::move(next);
    }
    const PackedLayer& last = layers.back();
    float s = 0.0f;
    for (std::uint32_t k = 0; k < last.in_pad; ++k)
      s += static_cast<float>(s8[k]) * grids.back().scale * last.weight_dequant[k];
    out[r] = activate(s + last.bias_f32[0], last.act);
  }
  return out;
}

TEST(Int8Grid, GpuArithmeticOnTheCudaPackingLandsWhereTheCpuPlanAndQatDo) {
  // Odd widths, two embeddings, LeakyReLU (nonzero zero points), and the bench shape.
  const std::vector<RandomModelSpec> specs = {{13, {{7, 3}, {100, 5}}, {37, 19, 1}, Activation::LeakyRelu},
                                              {80, {{50, 8}, {50, 8}}, {256, 256, 256, 1}, Activation::Relu}};
  std::uint64_t seed = 11;
  for (const RandomModelSpec& spec : specs) {
    const MlpModel m = make_random_model(spec, seed++);
    // A table as quantization-aware training writes it: the 127-level grid it trained on.
    quant::ActivationRanges t = quant::measure_activation_ranges(m, make_random_batch(m, 1000, seed++));
    t.act_qmax = 127.0f;
    const EncodedBatch x = make_random_batch(m, 400, seed++);
    const test::Int8Reachable exact = test::Int8Emulation(m, t).run(x);
    ASSERT_EQ(exact.rows_truncated, 0u);
    const std::vector<float> gpu = emulate_int8(m, t, x);
    engine::CompileOptions co;
    co.isa = engine::Isa::Scalar;
    co.calibration = t;
    const std::vector<float> cpu = engine::compile(m, engine::Variant::Int8Static, co).predict(x);
    std::size_t gpu_off = 0, cpu_off = 0;
    for (std::size_t i = 0; i < x.rows; ++i) {
      gpu_off += test::distance_to_reachable(gpu[i], exact.outputs[i]) > 1e-4;
      cpu_off += test::distance_to_reachable(cpu[i], exact.outputs[i]) > 1e-4;
    }
    EXPECT_EQ(gpu_off, 0u) << "rows of the GPU arithmetic off the exact int8 grid";
    EXPECT_EQ(cpu_off, 0u) << "rows of the CPU plan off the exact int8 grid";
  }
}

// fp16: fp16 inputs, weights and activations, fp32 accumulation; the last layer in fp32.
std::vector<double> emulate_fp16(const MlpModel& m, const EncodedBatch& b) {
  const auto layers = pack_layers(m);
  std::vector<double> out;
  for (std::size_t r = 0; r < b.rows; ++r) {
    std::vector<float> x(b.dense_row(r), b.dense_row(r) + b.dense_width);
    for (std::size_t j = 0; j < m.embeddings.size(); ++j) {
      const Embedding& e = m.embeddings[j];
      const float* row = e.table.data() + std::size_t{b.cat_row(r)[j]} * e.dim;
      x.insert(x.end(), row, row + e.dim);
    }
    std::transform(x.begin(), x.end(), x.begin(), round_half);
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      const PackedLayer& p = layers[l];
      std::vector<float> y(p.out);
      for (std::uint32_t o = 0; o < p.out; ++o) {
        float s = 0;
        for (std::uint32_t i = 0; i < p.in; ++i) s += quant::half_to_float(p.weight_f16[o * p.in_pad + i]) * x[i];
        y[o] = round_half(activate(s + p.bias_f32[o], p.act));
      }
      x = std::move(y);
    }
    const PackedLayer& last = layers.back();
    for (std::uint32_t o = 0; o < last.out; ++o) {
      float s = 0;
      for (std::uint32_t i = 0; i < last.in; ++i) s += x[i] * last.weight_f32[o * last.in_pad + i];
      out.push_back(activate(s + last.bias_f32[o], last.act));
    }
  }
  return out;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double ref_max = 0, err = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ref_max = std::max(ref_max, std::fabs(ref[i]));
    err = std::max(err, std::fabs(got[i] - ref[i]));
  }
  return err / std::max(1.0, ref_max);
}

std::vector<double> reference(const MlpModel& m, const EncodedBatch& b) {
  std::vector<double> ref(b.rows * m.layers.back().out);
  reference_forward(m, b.dense.data(), b.cats.data(), b.rows, ref.data());
  return ref;
}

struct Model {
  const char* name;
  MlpModel model;
};

std::vector<Model> models() {
  RandomModelSpec odd{13, {{7, 3}, {100, 5}}, {37, 19, 1}, Activation::Relu};
  RandomModelSpec leaky{33, {}, {64, 50, 1}, Activation::LeakyRelu};
  return {{"bench shape", make_bench_model({96, 256, 256, 256, 1}, 1)},
          {"odd widths", make_random_model(odd, 2)},
          {"leaky", make_random_model(leaky, 3)}};
}

TEST(QuantizedPipeline, Int8StaticStaysWellInsideItsBound) {
  for (const Model& m : models()) {
    const quant::ActivationRanges t = quant::measure_activation_ranges(m.model, make_random_batch(m.model, 1024, 10));
    const EncodedBatch data = make_random_batch(m.model, 256, 11);  // other rows than calibration
    const double err = relative_error(emulate_int8(m.model, t, data), reference(m.model, data));
    std::cout << "[   info   ] int8-static emulated, " << m.name << ": max error " << err << " of max(1, max|ref|)\n";
    EXPECT_LT(err, variant_tolerance(engine::Variant::Int8Static) / 3) << m.name;
    EXPECT_GT(err, 1e-4) << m.name << ": int8 cannot be this exact; is the emulation quantizing?";
  }
}

TEST(QuantizedPipeline, Fp16StaysWellInsideItsBound) {
  for (const Model& m : models()) {
    const EncodedBatch data = make_random_batch(m.model, 256, 12);
    const std::vector<double> got = emulate_fp16(m.model, data);
    const double err = relative_error(std::vector<float>(got.begin(), got.end()), reference(m.model, data));
    std::cout << "[   info   ] fp16 emulated, " << m.name << ": max error " << err << " of max(1, max|ref|)\n";
    EXPECT_LT(err, variant_tolerance(engine::Variant::Fp16) / 5) << m.name;
  }
}

}  // namespace
}  // namespace ttlpred::cuda
