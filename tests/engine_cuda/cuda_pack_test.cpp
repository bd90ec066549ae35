// Host-side parts of the CUDA backend: these run everywhere, GPU or not.
#include "engine/cuda/cuda_pack.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/cuda/cuda_self_check.hpp"
#include "engine/cuda/gpu_bench.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {
namespace {

MlpModel tiny_model() {
  // 2 dense + one 2-wide embedding (3 rows) -> 3 (ReLU) -> 1.
  MlpModel m;
  m.dense_inputs = 2;
  m.embeddings.push_back({3, 2, {0.0f, 0.0f, 1.0f, -1.0f, 0.5f, 2.0f}});
  m.layers.push_back({4, 3, {1, 0, 0, 0, /**/ 0, 1, 1, 0, /**/ -1, -1, 0, -2}, {0.5f, 0.0f, 0.25f}, Activation::Relu});
  m.layers.push_back({3, 1, {1, 2, -3}, {0.1f}, Activation::None});
  return m;
}

TEST(HalfConversion, KnownValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);               // largest half
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);               // rounds to inf
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -26)), 0x0000);  // below half of it
  EXPECT_EQ(float_to_half_bits(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie to even (down)
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even (up)
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
}

TEST(HalfConversion, EveryFiniteHalfRoundTrips) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00u) == 0x7c00u) continue;  // inf / nan
    const auto bits = static_cast<std::uint16_t>(h);
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(bits)), bits) << std::hex << h;
  }
  EXPECT_FLOAT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
  EXPECT_FLOAT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
}

TEST(Int8, QuantizeRoundsAndSaturates) {
  EXPECT_EQ(quantize_int8(1.0f, 0.5f), 2);
  EXPECT_EQ(quantize_int8(-0.74f, 0.5f), -1);
  EXPECT_EQ(quantize_int8(1000.0f, 1.0f), 127);
  EXPECT_EQ(quantize_int8(-1000.0f, 1.0f), -127);  // symmetric: -128 is never used
}

TEST(PackLayers, PadsWithZerosAndScalesPerChannel) {
  const auto layers = pack_layers(tiny_model());
  ASSERT_EQ(layers.size(), 2u);
  const PackedLayer& l0 = layers[0];
  EXPECT_EQ(l0.in_pad, 16u);
  EXPECT_EQ(l0.out_pad, 16u);
  ASSERT_EQ(l0.weight_f32.size(), 256u);
  EXPECT_EQ(l0.weight_f32[1 * 16 + 2], 1.0f);   // row 1, column 2
  EXPECT_EQ(l0.weight_f32[2 * 16 + 3], -2.0f);
  EXPECT_EQ(l0.weight_f32[0 * 16 + 5], 0.0f);   // padding columns
  EXPECT_EQ(l0.weight_f32[7 * 16 + 0], 0.0f);   // padding rows
  EXPECT_EQ(l0.bias_f32[2], 0.25f);
  EXPECT_EQ(l0.bias_f32[9], 0.0f);
  EXPECT_FLOAT_EQ(l0.weight_scale[2], 2.0f / 127.0f);
  EXPECT_EQ(l0.weight_i8[2 * 16 + 3], -127);
  EXPECT_EQ(l0.weight_i8[1 * 16 + 2], 127);
  EXPECT_EQ(l0.weight_scale[9], 1.0f);          // all-zero channel keeps a usable scale
  EXPECT_EQ(l0.weight_f16[1 * 16 + 2], 0x3c00);
  EXPECT_EQ(layers[1].in_pad, 16u);
  EXPECT_EQ(layers[1].weight_f32[2], -3.0f);
}

TEST(PackEmbeddings, MapsColumnsToTables) {
  MlpModel m = tiny_model();
  m.embeddings.push_back({2, 1, {7.0f, 8.0f}});
  m.layers[0].in = 5;
  m.layers[0].weight.resize(15, 0.0f);
  const PackedEmbeddings pe = pack_embeddings(m);
  EXPECT_EQ(pe.tables.size(), 8u);
  EXPECT_EQ(pe.table_offset, (std::vector<std::uint32_t>{0, 6}));
  EXPECT_EQ(pe.column_table, (std::vector<std::uint32_t>{0, 0, 1}));
  EXPECT_EQ(pe.column_component, (std::vector<std::uint32_t>{0, 1, 0}));
}

TEST(ValidateModel, NamesTheBadField) {
  MlpModel m = tiny_model();
  m.layers[1].in = 4;
  try {
    validate_model(m);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 1: in = 4 but its input has 3"), std::string::npos) << e.what();
  }
  m = tiny_model();
  m.embeddings[0].table.pop_back();
  EXPECT_THROW(validate_model(m), Error);
  m = tiny_model();
  m.layers[0].bias[1] = std::nanf("");
  EXPECT_THROW(validate_model(m), Error);
  EXPECT_THROW(validate_model(MlpModel{}), Error);
}

TEST(ReferenceForward, MatchesHandComputation) {
  const MlpModel m = tiny_model();
  const float dense[] = {1.0f, 2.0f, /**/ -1.0f, 0.0f};
  const std::uint32_t cats[] = {2, /**/ 9};  // 9 is past the table: OOV row 0
  std::vector<double> range;
  const auto out = reference_forward(m, dense, cats, 2, &range);
  // Row 0: x = [1, 2, 0.5, 2]; h = relu([1.5, 2.5, -1-2-0-4+0.25]) = [1.5, 2.5, 0]; y = 1.5+5+0.1.
  // Row 1: x = [-1, 0, 0, 0]; h = relu([-0.5, 0, 1.25]) = [0, 0, 1.25]; y = -3.75 + 0.1.
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0], 6.5 + double{0.1f}, 1e-12);  // the bias is the float 0.1f
  EXPECT_NEAR(out[1], -3.75 + double{0.1f}, 1e-12);
  ASSERT_EQ(range.size(), 4u);
  EXPECT_DOUBLE_EQ(range[0], -1.0);
  EXPECT_DOUBLE_EQ(range[1], 2.0);
  EXPECT_DOUBLE_EQ(range[2], 0.0);
  EXPECT_DOUBLE_EQ(range[3], 2.5);
}

TEST(Calibration, SymmetricScalesFromLayerRanges) {
  const MlpModel m = tiny_model();
  EncodedBatch b;
  b.rows = 2;
  b.dense_width = 2;
  b.cat_width = 1;
  b.dense = {1.0f, 2.0f, -1.0f, 0.0f};
  b.cats = {2, 9};
  const auto scales = calibrate_activation_scales(m, b);
  ASSERT_EQ(scales.size(), 2u);
  EXPECT_FLOAT_EQ(scales[0], 2.0f / 127.0f);
  EXPECT_FLOAT_EQ(scales[1], 2.5f / 127.0f);
  b.dense_width = 3;
  EXPECT_THROW(calibrate_activation_scales(m, b), Error);
}

TEST(CompileCuda, RejectsBeforeTouchingTheGpu) {
  const MlpModel m = tiny_model();
  EXPECT_THROW(compile_cuda(m, CudaVariant::Int8Static, {}), Error);  // no calibration batch
  EXPECT_THROW(compile_cuda(m, CudaVariant::Sparse24, {}), Error);    // cuSPARSELt absent
  CudaOptions bad;
  bad.fused_rows_per_block = 24;
  EXPECT_THROW(compile_cuda(m, CudaVariant::Fused, bad), Error);
  EXPECT_THROW(compile_cuda(MlpModel{}, CudaVariant::Fp32, {}), Error);
}

TEST(Variants, NamesRoundTrip) {
  for (CudaVariant v : built_cuda_variants()) EXPECT_EQ(parse_cuda_variant(to_string(v)), v);
  EXPECT_EQ(parse_cuda_variant("int8-static"), CudaVariant::Int8Static);
  EXPECT_EQ(parse_cuda_variant("fp16-2:4"), CudaVariant::Sparse24);  // named, but not built here
  EXPECT_FALSE(parse_cuda_variant("int4").has_value());
}

TEST(GpuBench, ParsesShapes) {
  EXPECT_EQ(parse_shape("96,256,256,256,1"), (std::vector<std::uint32_t>{96, 256, 256, 256, 1}));
  EXPECT_THROW(parse_shape("96"), Error);
  EXPECT_THROW(parse_shape("96,,1"), Error);
  EXPECT_THROW(parse_shape("96,0,1"), Error);
  EXPECT_THROW(parse_shape("96,2x,1"), Error);
}

TEST(RandomModels, BenchShapeUsesEmbeddingsAndBatchesHitOov) {
  const MlpModel m = make_bench_model({96, 256, 256, 256, 1}, 1);
  EXPECT_EQ(m.dense_inputs, 80u);
  EXPECT_EQ(m.first_layer_inputs(), 96u);
  EXPECT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers.back().act, Activation::None);
  EXPECT_NO_THROW(validate_model(m));
  const EncodedBatch b = make_random_batch(m, 2000, 2);
  std::size_t oov = 0;
  for (std::uint32_t c : b.cats) oov += c >= 64 ? 1 : 0;
  EXPECT_GT(oov, 0u);
  EXPECT_LT(oov, b.cats.size() / 4);
}

}  // namespace
}  // namespace ttlpred::cuda
