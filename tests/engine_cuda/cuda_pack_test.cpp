// Host-side parts of the CUDA backend: these run everywhere, GPU or not. They check that the
// GPU packing follows the CPU engine's rules (model/, quant/): the same fp16 bits, the same
// s8 weights, the same affine activation grid, the same folded embeddings.
#include "engine/cuda/cuda_pack.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/cuda/cuda_self_check.hpp"
#include "engine/cuda/gpu_bench.hpp"
#include "engine/plan.hpp"
#include "model/mlp_check.hpp"
#include "model/reference_forward.hpp"
#include "quant/activation_ranges.hpp"
#include "quant/fake_quant.hpp"
#include "quant/half.hpp"
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

TEST(PackLayers, PadsWithZerosAndQuantizesByTheSharedRules) {
  const MlpModel m = tiny_model();
  const auto layers = pack_layers(m);
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
  EXPECT_EQ(l0.weight_f16[1 * 16 + 2], quant::float_to_half(1.0f));
  // int8: layer 0 quantizes its 2 dense columns only (the embedding is folded in float).
  EXPECT_EQ(l0.q_in, 2u);
  EXPECT_EQ(l0.q_in_pad, 16u);
  EXPECT_FLOAT_EQ(l0.weight_scale[2], 1.0f / 127.0f);  // row 2's dense columns: -1, -1
  EXPECT_EQ(l0.weight_i8[2 * 16 + 0], -127);
  EXPECT_FLOAT_EQ(l0.weight_scale[1], 1.0f / 127.0f);  // row 1's dense columns: 0, 1 (its embedding 1 is not counted)
  EXPECT_EQ(l0.weight_scale[9], 1.0f);  // padding
  EXPECT_EQ(layers[1].in_pad, 16u);
  EXPECT_EQ(layers[1].q_in, 3u);
  EXPECT_EQ(layers[1].weight_f32[2], -3.0f);
  EXPECT_EQ(layers[1].weight_i8[2], -127);
  EXPECT_FLOAT_EQ(layers[1].weight_dequant[1], 3.0f / 127.0f * 85.0f);  // 2 = 85 codes of 3/127
}

TEST(PackEmbeddings, MapsColumnsToTablesAndFoldsThemThroughLayerZero) {
  MlpModel m = tiny_model();
  m.embeddings.push_back({2, 1, {7.0f, 8.0f}});
  m.layers[0].in = 5;
  m.layers[0].weight = {1, 0, 0, 0, 1, /**/ 0, 1, 1, 0, 0, /**/ -1, -1, 0, -2, 0};
  const PackedEmbeddings pe = pack_embeddings(m);
  EXPECT_EQ(pe.tables.size(), 8u);
  EXPECT_EQ(pe.table_offset, (std::vector<std::uint32_t>{0, 6}));
  EXPECT_EQ(pe.column_table, (std::vector<std::uint32_t>{0, 0, 1}));
  EXPECT_EQ(pe.column_component, (std::vector<std::uint32_t>{0, 1, 0}));
  ASSERT_EQ(pe.folded_offset, (std::vector<std::uint64_t>{0, 3 * 16}));
  // Embedding 0, category 2 = (0.5, 2): layer-0 columns 2 and 3 -> (0, 0.5, -4).
  EXPECT_FLOAT_EQ(pe.folded[2 * 16 + 0], 0.0f);
  EXPECT_FLOAT_EQ(pe.folded[2 * 16 + 1], 0.5f);
  EXPECT_FLOAT_EQ(pe.folded[2 * 16 + 2], -4.0f);
  // Embedding 1, category 1 = (8): column 4 -> (8, 0, 0).
  EXPECT_FLOAT_EQ(pe.folded[48 + 16 + 0], 8.0f);
  EXPECT_FLOAT_EQ(pe.folded[48 + 16 + 5], 0.0f);  // padding
}

TEST(PackLayers, RefusesWhatTheCpuRefusesWithTheSameMessage) {
  MlpModel m = tiny_model();
  m.layers[1].in = 4;
  try {
    pack_layers(m);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layers[1].in is 4, expected 3"), std::string::npos) << e.what();
    try {
      engine::compile(m, engine::Variant::Fp32Fused);
      FAIL() << "the CPU engine accepted it";
    } catch (const Error& cpu) {
      EXPECT_STREQ(cpu.what(), e.what());
    }
  }
  m = tiny_model();
  m.embeddings[0].table.pop_back();
  EXPECT_THROW(pack_embeddings(m), Error);
  m = tiny_model();
  m.layers[0].bias[1] = std::nanf("");
  EXPECT_THROW(pack_layers(m), Error);
  EXPECT_THROW(pack_layers(MlpModel{}), Error);
}

// A calibration table as quantization-aware training writes it: ranges per layer input and
// the 127-level grid it trained on.
quant::ActivationRanges qat_table(const MlpModel& m, const EncodedBatch& x) {
  quant::ActivationRanges t = quant::measure_activation_ranges(m, x);
  t.act_qmax = 127.0f;
  return t;
}

TEST(Int8Grid, IsTheQatGridAndTheCpuPlansGrid) {
  const MlpModel m = make_random_model({13, {{7, 3}, {100, 5}}, {37, 19, 1}, Activation::LeakyRelu}, 5);
  const quant::ActivationRanges t = qat_table(m, make_random_batch(m, 500, 6));
  const std::vector<Int8Grid> grids = int8_grids(t, m.layers.size());
  ASSERT_EQ(grids.size(), 3u);
  for (std::size_t l = 0; l < grids.size(); ++l) {
    const quant::ActFakeQuant qat = quant::ActFakeQuant::make(t.layer_inputs[l], 127.0f);  // what QAT trains on
    EXPECT_EQ(grids[l].scale, qat.scale) << l;
    EXPECT_EQ(grids[l].inv_scale, qat.inv_scale) << l;
    EXPECT_EQ(grids[l].zero_point, qat.zero_point) << l;
    EXPECT_EQ(grids[l].qmax, 127.0f);
    EXPECT_EQ(grids[l].lo, -qat.zero_point);
    EXPECT_EQ(grids[l].hi, 127.0f - qat.zero_point);
    // Every code the QAT grid has is one s8 value here, and back to the same real value.
    for (float x : {-5.0f, -0.3f, 0.0f, 0.01f, 0.7f, 3.0f, 50.0f}) {
      const std::int8_t s8 = quantize_activation(x, grids[l]);
      EXPECT_EQ(static_cast<float>(s8), qat.code(x) - qat.zero_point) << l << " " << x;
      EXPECT_FLOAT_EQ(grids[l].scale * static_cast<float>(s8), qat(x)) << l << " " << x;
    }
  }
  // The weights: each channel's codes and scale are quant::fake_quant's (layer 0: dense columns).
  const auto layers = pack_layers(m);
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const DenseLayer& d = m.layers[l];
    for (std::uint32_t o = 0; o < d.out; ++o) {
      std::vector<float> row(d.weight.begin() + std::ptrdiff_t{o} * d.in, d.weight.begin() + std::ptrdiff_t{o + 1} * d.in);
      quant::fake_quantize_weight_row(row.data(), layers[l].q_in);
      for (std::uint32_t k = 0; k < layers[l].q_in; ++k)
        ASSERT_EQ(layers[l].weight_scale[o] * static_cast<float>(layers[l].weight_i8[std::size_t{o} * layers[l].q_in_pad + k]),
                  row[k])
            << l << " " << o << " " << k;
    }
  }
  quant::ActivationRanges short_table = t;
  short_table.layer_inputs.pop_back();
  EXPECT_THROW(int8_grids(short_table, m.layers.size()), Error);
}

TEST(CompileCuda, RejectsBeforeTouchingTheGpu) {
  const MlpModel m = tiny_model();
  EXPECT_THROW(compile_cuda(m, engine::Variant::Int8Static, {}), Error);    // no activation ranges
  EXPECT_THROW(compile_cuda(m, engine::Variant::Fp16Sparse24, {}), Error);  // cuSPARSELt absent
  EXPECT_THROW(compile_cuda(m, engine::Variant::Bf16, {}), Error);          // not a GPU variant
  CudaOptions bad;
  bad.fused_rows_per_block = 24;
  EXPECT_THROW(compile_cuda(m, engine::Variant::Fp16, bad), Error);
  EXPECT_THROW(compile_cuda(MlpModel{}, engine::Variant::Fp32, {}), Error);
  MlpModel one_layer = tiny_model();
  one_layer.layers.erase(one_layer.layers.begin());
  one_layer.layers[0].in = 4;
  one_layer.layers[0].weight = {1, 2, 3, 4};
  quant::ActivationRanges t;
  t.layer_inputs = {{-1.0f, 1.0f}};
  CudaOptions with_table;
  with_table.calibration = &t;
  try {
    compile_cuda(one_layer, engine::Variant::Int8Static, with_table);
    FAIL() << "a network without a hidden layer was accepted for int8-static";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at least one hidden layer"), std::string::npos) << e.what();
  }
}

TEST(Variants, TheBackendRunsVariantsOfTheOneVocabulary) {
  EXPECT_EQ(cuda_variants(),
            (std::vector<engine::Variant>{engine::Variant::Fp32, engine::Variant::Fp16, engine::Variant::Int8Static}));
  EXPECT_TRUE(cuda_runs(engine::Variant::Int8Static));
  EXPECT_FALSE(cuda_runs(engine::Variant::Fp32Fused));
  std::vector<std::string> names;
  for (const CudaForm& f : cuda_forms()) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fp32", "fp16", "fused", "int8-static", "int8-static/requant"}));
  EXPECT_EQ(self_check_forms(), names);
  const CudaForm fused = cuda_form("fused");
  EXPECT_EQ(fused.variant, engine::Variant::Fp16);
  EXPECT_TRUE(fused.fp16_fused_kernel);
  EXPECT_THROW(cuda_form("int4"), Error);
}

TEST(GpuBench, ParsesShapes) {
  EXPECT_EQ(parse_shape("96,256,256,256,1"), (std::vector<std::uint32_t>{96, 256, 256, 256, 1}));
  EXPECT_THROW(parse_shape("96"), Error);
  EXPECT_THROW(parse_shape("96,,1"), Error);
  EXPECT_THROW(parse_shape("96,0,1"), Error);
  EXPECT_THROW(parse_shape("96,2x,1"), Error);
}

TEST(RandomModels, BenchShapeUsesEmbeddingsAndBatchesStayInTheTables) {
  const MlpModel m = make_bench_model({96, 256, 256, 256, 1}, 1);
  EXPECT_EQ(m.dense_inputs, 80u);
  EXPECT_EQ(m.first_layer_inputs(), 96u);
  EXPECT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers.back().act, Activation::None);
  EXPECT_NO_THROW(check_mlp(m));
  const EncodedBatch b = make_random_batch(m, 2000, 2);
  std::uint32_t top = 0;
  for (std::uint32_t c : b.cats) top = std::max(top, c);
  EXPECT_EQ(top, 63u);  // every index in range, the last row of a table reached
  std::vector<double> ref(b.rows);
  EXPECT_NO_THROW(reference_forward(m, b.dense.data(), b.cats.data(), b.rows, ref.data()));
}

}  // namespace
}  // namespace ttlpred::cuda
