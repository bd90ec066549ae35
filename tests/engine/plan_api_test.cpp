// The plan's contract: names, errors that name the culprit, the EncodedBatch overload,
// pruning, packing sizes, calibration methods end to end, and the scalar helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/kernels.hpp"
#include "engine/plan.hpp"
#include "model/reference_forward.hpp"
#include "quant/sparse24.hpp"
#include "quant/activation_ranges.hpp"
#include "test_models.hpp"
#include "util/error.hpp"

namespace ttlpred::engine {
namespace {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Variants, NamesRoundTripAndListsParse) {
  for (Variant v : kAllVariants) EXPECT_EQ(variant_from_name(variant_name(v)), v);
  EXPECT_EQ(variants_from_list("all").size(), 8u);
  const auto two = variants_from_list("int8-static,fp16-2:4");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], Variant::Int8Static);
  EXPECT_EQ(two[1], Variant::Fp16Sparse24);
  EXPECT_NE(error_of([] { variant_from_name("fp8"); }).find("unknown variant 'fp8'"), std::string::npos);
  EXPECT_NE(error_of([] { variants_from_list("fp32,,fp16"); }).find("empty variant"), std::string::npos);
}

TEST(Variants, OneTraitsTableDescribesEveryVariant) {
  const auto traits = all_variant_traits();
  ASSERT_EQ(traits.size(), std::size(kAllVariants));
  std::string listed = variant_names_list(), help = variant_help_lines();
  for (const VariantTraits& t : traits) {
    EXPECT_EQ(&variant_traits(t.variant), &t);
    EXPECT_EQ(variant_from_name(t.name), t.variant);
    EXPECT_NE(listed.find(std::string(t.name)), std::string::npos) << t.name;
    EXPECT_NE(help.find(std::string(t.summary)), std::string::npos) << t.name;
    EXPECT_TRUE(!t.needs_calibration || (t.int8 && !t.dynamic)) << t.name;
    EXPECT_TRUE(!t.dynamic || t.int8) << t.name;
    EXPECT_EQ(t.fused, t.variant != Variant::Fp32) << t.name;
  }
  // Layouts of their own on the ISAs that have instructions for them.
  EXPECT_EQ(variant_weight_format(Variant::Bf16, Isa::Avx2), WeightFormat::BF16);
  EXPECT_EQ(variant_weight_format(Variant::Bf16, Isa::Avx512Bf16), WeightFormat::BF16Pairs);
  EXPECT_EQ(variant_weight_format(Variant::Bf16, Isa::Avx512Amx), WeightFormat::BF16Tiles);
  EXPECT_EQ(variant_weight_format(Variant::Int8Static, Isa::Avx512Amx), WeightFormat::QS8Tiles);
  EXPECT_EQ(variant_weight_format(Variant::Int8Sparse24, Isa::Avx512Amx), WeightFormat::QS8Sp24);
  EXPECT_EQ(variant_weight_format(Variant::Fp32Fused, Isa::Scalar), WeightFormat::F32);
  // The serving variant of each fine-tuning.
  EXPECT_EQ(variant_serving(Compression::None), Variant::Fp32Fused);
  EXPECT_EQ(variant_serving(Compression::QatInt8), Variant::Int8Static);
  EXPECT_EQ(variant_serving(Compression::Sparse24), Variant::Fp16Sparse24);
  EXPECT_EQ(variant_serving(Compression::QatInt8Sparse24), Variant::Int8Sparse24);
}

TEST(Isas, NamesAndPinning) {
  EXPECT_EQ(isa_from_name("avx2"), Isa::Avx2);
  EXPECT_EQ(usable_isas().front(), Isa::Scalar);
  EXPECT_TRUE(host_supports(best_isa()));
  const MlpModel m = test::random_model(4, {}, {8}, 1, 1);
  CompileOptions opt;
  for (Isa isa : {Isa::Avx512, Isa::Avx512Vnni, Isa::Avx512Bf16, Isa::Avx512Amx}) {
    opt.isa = isa;
    opt.emulated = false;
    if (!host_supports(isa)) {
      EXPECT_NE(error_of([&] { compile(m, Variant::Int8Static, opt); }).find("not supported by this CPU"),
                std::string::npos);
    }
    opt.emulated = true;  // the emulated tiles run anywhere
    EXPECT_EQ(compile(m, Variant::Bf16, opt).isa(), isa);
  }
  opt.isa = Isa::Avx2;
  EXPECT_NE(error_of([&] { compile(m, Variant::Fp32Fused, opt); }).find("no emulated kernels"), std::string::npos);
  EXPECT_NE(error_of([] { isa_from_name("neon"); }).find("unknown ISA 'neon'"), std::string::npos);
}

TEST(Compile, RejectsInconsistentModelsNamingTheField) {
  MlpModel m = test::random_model(4, {{3, 2}}, {8, 8}, 1, 2);
  m.layers[1].in = 7;
  EXPECT_NE(error_of([&] { compile(m, Variant::Fp32Fused); }).find("layers[1].in is 7, expected 8"), std::string::npos);
  m = test::random_model(4, {{3, 2}}, {8}, 1, 2);
  m.embeddings[0].table.pop_back();
  EXPECT_NE(error_of([&] { compile(m, Variant::Fp32); }).find("embeddings[0].table"), std::string::npos);
  m = test::random_model(4, {}, {8}, 1, 2);
  m.layers[0].bias[3] = NAN;
  EXPECT_NE(error_of([&] { compile(m, Variant::Fp16); }).find("layers[0].bias holds a non-finite"), std::string::npos);
  EXPECT_NE(error_of([] { compile(MlpModel{}, Variant::Fp32); }).find("no layers"), std::string::npos);
}

TEST(Compile, StaticInt8NeedsMatchingCalibration) {
  const MlpModel m = test::random_model(4, {}, {8, 8}, 1, 3);
  EXPECT_NE(error_of([&] { compile(m, Variant::Int8Static); }).find("needs calibrated activation ranges"),
            std::string::npos);
  CompileOptions opt;
  opt.calibration = quant::ActivationRanges{};
  opt.calibration->layer_inputs.resize(2);
  EXPECT_NE(error_of([&] { compile(m, Variant::Int8Sparse24, opt); }).find("2 layer ranges, the model has 3"),
            std::string::npos);
}

TEST(Predict, RejectsBadCategoriesAndWidthsBeforeWriting) {
  const MlpModel m = test::random_model(2, {{3, 2}}, {8}, 1, 4);
  const Plan plan = compile(m, Variant::Fp32Fused);
  const float dense[4] = {0, 1, 2, 3};
  const std::uint32_t cats[2] = {1, 3};
  float out[2] = {42, 42};
  EXPECT_NE(error_of([&] { plan.predict(dense, cats, 2, out); }).find("row 1, categorical column 0: index 3 >= cardinality 3"),
            std::string::npos);
  EXPECT_EQ(out[0], 42.0f);
  EncodedBatch b;
  b.rows = 1;
  b.dense_width = 3;
  b.cat_width = 1;
  b.dense = {0, 0, 0};
  b.cats = {0};
  EXPECT_NE(error_of([&] { plan.predict(b); }).find("3 dense and 1 categorical columns, the model expects 2 and 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { Plan().predict(nullptr, nullptr, 1, nullptr); }).find("empty"), std::string::npos);
  plan.predict(nullptr, nullptr, 0, nullptr);  // an empty batch is a no-op
}

TEST(Predict, EncodedBatchOverloadMatchesPointers) {
  const MlpModel m = test::random_model(5, {{4, 2}, {6, 3}}, {16}, 2, 5);
  const test::Inputs in = test::random_inputs(m, 9, 6);
  EncodedBatch b;
  b.rows = 9;
  b.dense_width = 5;
  b.cat_width = 2;
  b.dense = in.dense;
  b.cats = in.cats;
  b.cat_cardinality = {4, 6};
  const Plan plan = compile(m, Variant::Fp16);
  std::vector<float> direct(18);
  plan.predict(in.dense.data(), in.cats.data(), 9, direct.data());
  EXPECT_EQ(plan.predict(b), direct);
  EXPECT_EQ(plan.outputs(), 2u);
  EXPECT_EQ(plan.n_categorical(), 2u);
  EXPECT_EQ(plan.dense_inputs(), 5u);
}

TEST(Prune24, KeepsTheTwoLargestOfEveryGroupOfFour) {
  MlpModel m = test::random_model(6, {}, {3}, 1, 7);
  m.layers[0].weight = {1, -5, 3, 2, 0.5f, -0.25f,  //
                        0, 0, 0, 7, 1, 1,           //
                        4, 4, 4, 4, -9, 8};
  const MlpModel p = quant::prune_2_4(m);
  const std::vector<float> want = {0, -5, 3, 0, 0.5f, -0.25f,  //
                                   0, 0, 0, 7, 1, 1,           //
                                   4, 4, 0, 0, -9, 8};
  EXPECT_EQ(p.layers[0].weight, want);
}

TEST(Packing, SmallerFormatsTakeLessMemory) {
  const MlpModel m = test::random_model(96, {}, {256, 256}, 1, 8);
  const test::Inputs in = test::random_inputs(m, 64, 9);
  CompileOptions opt;
  opt.calibration = quant::measure_activation_ranges(m, in.dense.data(), nullptr, 64);
  const double f32 = static_cast<double>(compile(m, Variant::Fp32Fused, opt).packed_bytes());
  EXPECT_NEAR(compile(m, Variant::Fp16, opt).packed_bytes() / f32, 0.5, 0.03);
  EXPECT_NEAR(compile(m, Variant::Int8Static, opt).packed_bytes() / f32, 0.27, 0.03);
  // 2:4: half the values plus 1/8 (fp16) or 1/4 (int8) of a byte of index per kept weight.
  EXPECT_NEAR(compile(m, Variant::Fp16Sparse24, opt).packed_bytes() / f32, 0.5 * 0.5 * 1.125, 0.03);
  EXPECT_NEAR(compile(m, Variant::Int8Sparse24, opt).packed_bytes() / f32, 0.27 * 0.5 * 1.25 + 0.02, 0.04);
}

// A kernel's name says what it is, XNNPACK style: data types, tile, and after "__" the
// instructions it needs (not the set it was dispatched from). The avx512-bf16 set adds bf16
// kernels to the VNNI set, so its int8 kernels are the VNNI ones; every emulated kernel says
// so. One row per (set, variant) whose kernel a user or a benchmark report would read.
TEST(Packing, KernelNamesSayWhichInstructionsTheyNeed) {
  const MlpModel m = test::random_model(96, {}, {64, 64}, 1, 8);
  const test::Inputs in = test::random_inputs(m, 64, 9);
  CompileOptions opt;
  opt.calibration = quant::measure_activation_ranges(m, in.dense.data(), nullptr, 64);
  struct Row {
    Isa isa;
    Variant variant;
    const char* first_layer;  // native kernels; emulated ones add "_emulated"
  };
  const Row rows[] = {
      {Isa::Scalar, Variant::Int8Static, "qu8s8_gemm_1x16c4__scalar"},
      {Isa::Scalar, Variant::Fp32Fused, "f32_gemm_1x16__scalar"},
      {Isa::Avx2, Variant::Int8Static, "qu8s8_gemm_4x16c4__avx2"},
      {Isa::Avx2, Variant::Fp32Fused, "f32_gemm_4x16__avx2_fma"},
      {Isa::Avx512, Variant::Int8Static, "qu8s8_gemm_8x32c4__avx512bw"},
      {Isa::Avx512, Variant::Fp32Fused, "f32_gemm_8x32__avx512f"},
      {Isa::Avx512Vnni, Variant::Int8Static, "qu8s8_gemm_8x32c4__avx512vnni"},
      {Isa::Avx512Vnni, Variant::Int8Sparse24, "qu8s8_sp24_gemm_8x32c8__avx512vnni"},
      {Isa::Avx512Vnni, Variant::Fp32Fused, "f32_gemm_8x32__avx512f"},
      {Isa::Avx512Bf16, Variant::Int8Static, "qu8s8_gemm_8x32c4__avx512vnni"},
      {Isa::Avx512Bf16, Variant::Bf16, "bf16_gemm_8x32c2__avx512bf16"},
      {Isa::Avx512Bf16, Variant::Fp32Fused, "f32_gemm_8x32__avx512f"},
      {Isa::Avx512Amx, Variant::Int8Static, "qu8s8_gemm_32x32c4__amx"},
      {Isa::Avx512Amx, Variant::Bf16, "bf16_gemm_32x32c2__amx"},
      {Isa::Avx512Amx, Variant::Fp32Fused, "f32_gemm_8x32__avx512f"},
  };
  std::size_t checked = 0;
  for (const Row& r : rows)
    for (bool emulated : {false, true}) {
      if (emulated ? !isa_emulated(r.isa) : !host_supports(r.isa)) continue;
      opt.isa = r.isa;
      opt.emulated = emulated;
      const auto names = compile(m, r.variant, opt).kernel_names();
      ASSERT_EQ(names.size(), 3u);
      const std::string want = std::string(r.first_layer) + (emulated ? "_emulated" : "");
      EXPECT_EQ(names[0], want) << isa_name(r.isa) << " " << variant_name(r.variant);
      ++checked;
    }
  // Scalar and the emulated AVX-512 and AMX sets run on every host.
  EXPECT_GE(checked, 2u + 12u);
}

// Every calibration method yields an int8-static plan that generalizes to new inputs.
TEST(Calibration, EveryMethodGivesAnAccurateStaticPlan) {
  const MlpModel m = test::random_model(24, {{5, 3}}, {64, 64}, 1, 10);
  const test::Inputs calib = test::random_inputs(m, 512, 11), eval = test::random_inputs(m, 200, 12);
  std::vector<double> want(200);
  reference_forward(m, eval.dense.data(), eval.cats.data(), 200, want.data());
  double ref2 = 0;
  for (double v : want) ref2 += v * v;
  for (auto method : {quant::RangeMethod::MinMax, quant::RangeMethod::Percentile, quant::RangeMethod::Mse}) {
    quant::ActivationRangeOptions co;
    co.method = method;
    CompileOptions opt;
    opt.calibration = quant::measure_activation_ranges(m, calib.dense.data(), calib.cats.data(), 512, co);
    for (Isa isa : usable_isas()) {
      opt.isa = isa;
      std::vector<float> got(200);
      compile(m, Variant::Int8Static, opt).predict(eval.dense.data(), eval.cats.data(), 200, got.data());
      double err2 = 0;
      for (std::size_t i = 0; i < 200; ++i) err2 += (got[i] - want[i]) * (got[i] - want[i]);
      EXPECT_LT(std::sqrt(err2 / ref2), 0.1) << quant::range_method_name(method) << " " << isa_name(isa);
    }
  }
}

// Kernel sets are registered by weight format (TTLPRED_GEMM), each name the function's own:
// a set derived from another keeps its base's kernels for the formats it does not replace.
// Only sets this host may touch are read (a native AVX-512 set is built with its ISA's flags).
TEST(KernelSets, AreRegisteredByWeightFormat) {
  std::vector<std::pair<const char*, const detail::KernelSet*>> sets = {
      {"scalar", &detail::scalar_kernels()},
      {"avx512_emulated", &detail::avx512_emulated_kernels()},
      {"avx512vnni_emulated", &detail::avx512vnni_emulated_kernels()},
      {"avx512bf16_emulated", &detail::avx512bf16_emulated_kernels()}};
  if (host_supports(Isa::Avx2)) sets.push_back({"avx2", &detail::avx2_kernels()});
  for (const auto& [name, set] : sets)
    for (int f = 0; f < kNumWeightFormats; ++f)
      EXPECT_EQ(set->gemm[f] == nullptr, set->gemm_name[f] == nullptr) << name << " format " << f;
  const detail::KernelSet& bw = detail::avx512_emulated_kernels();
  const detail::KernelSet& vnni = detail::avx512vnni_emulated_kernels();
  const detail::KernelSet& bf16 = detail::avx512bf16_emulated_kernels();
  const int qs8 = static_cast<int>(WeightFormat::QS8), f32 = static_cast<int>(WeightFormat::F32);
  const int pairs = static_cast<int>(WeightFormat::BF16Pairs);
  EXPECT_STREQ(bw.gemm_name[qs8], "qu8s8_gemm_8x32c4__avx512bw_emulated");
  EXPECT_STREQ(vnni.gemm_name[qs8], "qu8s8_gemm_8x32c4__avx512vnni_emulated");
  EXPECT_EQ(vnni.gemm[f32], bw.gemm[f32]);  // inherited
  EXPECT_STREQ(vnni.gemm_name[f32], "f32_gemm_8x32__avx512f_emulated");
  EXPECT_EQ(vnni.gemm[pairs], nullptr);
  EXPECT_STREQ(bf16.gemm_name[pairs], "bf16_gemm_8x32c2__avx512bf16_emulated");
  EXPECT_EQ(bf16.gemm[qs8], vnni.gemm[qs8]);
  EXPECT_EQ(vnni.act_qmax, 255.0f);
  EXPECT_EQ(bw.act_qmax, 127.0f);
  EXPECT_EQ(detail::scalar_kernels().gemm[static_cast<int>(WeightFormat::QS8Tiles)], nullptr);
}

}  // namespace
}  // namespace ttlpred::engine

#include "engine/compile_model_file.hpp"
#include "quant/activation_ranges_io.hpp"

namespace ttlpred::engine {
namespace {

TEST(CompileModelFile, UsesTheFilesCalibrationForStaticInt8) {
  ModelFile f;
  f.mlp = test::random_model(8, {{4, 2}}, {16}, 1, 41);
  EXPECT_NE(error_of([&] { compile(f, Variant::Int8Static, {}, "m.model"); })
                .find("m.model: variant 'int8-static' needs int8 calibration and the model file has none"),
            std::string::npos);
  const test::Inputs in = test::random_inputs(f.mlp, 32, 42);
  const quant::ActivationRanges t = quant::measure_activation_ranges(f.mlp, in.dense.data(), in.cats.data(), 32);
  f.int8_calibration = quant::activation_ranges_bytes(t);
  CompileOptions opt;
  opt.calibration = t;
  std::vector<float> a(32), b(32);
  compile(f, Variant::Int8Static, {}, "m.model").predict(in.dense.data(), in.cats.data(), 32, a.data());
  compile(f.mlp, Variant::Int8Static, opt).predict(in.dense.data(), in.cats.data(), 32, b.data());
  EXPECT_EQ(a, b);
  f.int8_calibration.pop_back();
  EXPECT_NE(error_of([&] { compile(f, Variant::Fp32Fused, {}, "m.model"); }).find("m.model int8 calibration: "),
            std::string::npos);
}

}  // namespace
}  // namespace ttlpred::engine
