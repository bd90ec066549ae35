// Calibration ranges: exact for min/max, outliers clipped by percentile and MSE search.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "quant/activation_ranges.hpp"
#include "util/error.hpp"

namespace ttlpred::quant {
namespace {

// dense -> identity-like hidden layer (ReLU) -> 1 output: layer 1's input range is known.
MlpModel two_layer_model() {
  MlpModel m;
  m.dense_inputs = 2;
  DenseLayer a;
  a.in = 2;
  a.out = 2;
  a.weight = {1, 0, 0, 2};
  a.bias = {0, 0};
  a.act = Activation::Relu;
  DenseLayer b;
  b.in = 2;
  b.out = 1;
  b.weight = {1, 1};
  b.bias = {0};
  b.act = Activation::None;
  m.layers = {a, b};
  return m;
}

TEST(Calibrate, MinMaxIsTheExactObservedRange) {
  const MlpModel m = two_layer_model();
  const std::vector<float> dense = {0.5f, -1.0f, -2.0f, 3.0f, 1.5f, 0.25f};
  const ActivationRanges t = measure_activation_ranges(m, dense.data(), nullptr, 3);
  ASSERT_EQ(t.layer_inputs.size(), 2u);
  EXPECT_EQ(t.layer_inputs[0].lo, -2.0f);
  EXPECT_EQ(t.layer_inputs[0].hi, 3.0f);
  EXPECT_EQ(t.layer_inputs[1].lo, 0.0f);  // after ReLU; the range always holds 0
  EXPECT_EQ(t.layer_inputs[1].hi, 6.0f);  // 2 * 3
}

TEST(Calibrate, PercentileAndMseClipARareOutlier) {
  const MlpModel m = two_layer_model();
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> dense;
  for (int i = 0; i < 20000; ++i) dense.push_back(n(rng));
  dense[123] = 1000.0f;
  ActivationRangeOptions o;
  const float full = measure_activation_ranges(m, dense.data(), nullptr, 10000, o).layer_inputs[0].hi;
  EXPECT_EQ(full, 1000.0f);
  o.method = RangeMethod::Percentile;
  const ActivationRange p = measure_activation_ranges(m, dense.data(), nullptr, 10000, o).layer_inputs[0];
  EXPECT_GT(p.hi, 2.5f);
  EXPECT_LT(p.hi, 5.0f);
  EXPECT_LT(p.lo, -2.5f);
  o.method = RangeMethod::Mse;
  const ActivationRange e = measure_activation_ranges(m, dense.data(), nullptr, 10000, o).layer_inputs[0];
  // The squared error weighs the outlier: clipping it at c costs (1000 - c)^2 over the 10000
  // values, while the full range only costs a rounding step of about 4 (1000 / 255) on each.
  // So MSE clips it by a few steps, not down to the bulk (percentile's ~3.7): measured 990.5,
  // the bulk's low end kept at about -4.2.
  EXPECT_GT(e.hi, 980.0f);
  EXPECT_LT(e.hi, 999.0f);
  EXPECT_LT(e.lo, -3.5f);
  EXPECT_GT(e.lo, -5.0f);
  EXPECT_EQ(measure_activation_ranges(m, dense.data(), nullptr, 10000, o).method, RangeMethod::Mse);
}

TEST(QuantParams, ZeroIsExactAndDegenerateRangesAreSafe) {
  const QuantParams q = quant_params({-1.0f, 3.0f}, 255.0f);
  EXPECT_FLOAT_EQ(q.scale, 4.0f / 255.0f);
  EXPECT_EQ(q.zero_point, 64.0f);  // round(1 / (4/255)) = round(63.75)
  const QuantParams z = quant_params({0.0f, 0.0f}, 127.0f);
  EXPECT_EQ(z.scale, 1.0f);
  EXPECT_EQ(z.zero_point, 0.0f);
  EXPECT_EQ(quant_params({0.5f, 2.0f}, 255.0f).zero_point, 0.0f);  // range widened to hold 0
}

TEST(Calibrate, NamesAndErrors) {
  for (auto mth : {RangeMethod::MinMax, RangeMethod::Percentile, RangeMethod::Mse})
    EXPECT_EQ(range_method_from_name(range_method_name(mth)), mth);
  EXPECT_THROW(range_method_from_name("kl"), Error);
  const MlpModel m = two_layer_model();
  EXPECT_THROW(measure_activation_ranges(m, nullptr, nullptr, 0), Error);
  MlpModel e = m;
  e.embeddings.push_back(Embedding{2, 1, {0.0f, 1.0f}});
  e.layers[0].in = 3;
  e.layers[0].weight = {1, 0, 0, 0, 2, 0};
  const float dense[2] = {1, 2};
  const std::uint32_t cats[1] = {5};
  try {
    measure_activation_ranges(e, dense, cats, 1);
    FAIL() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("row 0, categorical column 0: index 5 >= cardinality 2"), std::string::npos);
  }
  EncodedBatch b;
  b.dense_width = 3;
  EXPECT_THROW(measure_activation_ranges(m, b), Error);
}

}  // namespace
}  // namespace ttlpred::quant

#include "quant/activation_ranges_io.hpp"

namespace ttlpred::quant {
namespace {

TEST(CalibrationIo, RoundTripsAndRefusesBadBytes) {
  ActivationRanges t;
  t.method = RangeMethod::Percentile;
  t.layer_inputs = {{-1.5f, 2.0f}, {0.0f, 7.25f}};
  const auto bytes = activation_ranges_bytes(t);
  const ActivationRanges back = parse_activation_ranges(bytes, "m.model int8 calibration");
  EXPECT_EQ(back.method, RangeMethod::Percentile);
  ASSERT_EQ(back.layer_inputs.size(), 2u);
  EXPECT_EQ(back.layer_inputs[1].hi, 7.25f);
  auto cut = bytes;
  cut.pop_back();
  try {
    parse_activation_ranges(cut, "m.model int8 calibration");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.model int8 calibration: truncated"), std::string::npos) << e.what();
  }
  auto bad = bytes;
  bad[0] = 9;  // a newer format version
  EXPECT_THROW(parse_activation_ranges(bad, "x"), Error);
}

TEST(CalibrationIo, CarriesTheQatActivationGridAndReadsVersion1) {
  ActivationRanges t;
  t.layer_inputs = {{-1.0f, 1.0f}};
  t.act_qmax = 127.0f;
  auto bytes = activation_ranges_bytes(t);
  EXPECT_EQ(parse_activation_ranges(bytes, "x").act_qmax, 127.0f);
  // Version 1 (before QAT): the same bytes without the trailing grid, which then defaults to
  // the kernels' own.
  auto v1 = bytes;
  v1.resize(v1.size() - sizeof(float));
  v1[0] = 1;
  EXPECT_EQ(parse_activation_ranges(v1, "x").act_qmax, 0.0f);
  t.act_qmax = 300.0f;
  try {
    parse_activation_ranges(activation_ranges_bytes(t), "m.model int8 calibration");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("activation levels"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ttlpred::quant
