// The oneDNN peers compute the same function as the model (the benchmark compares like with like).
#include <gtest/gtest.h>

#include <cmath>

#include "peers/onednn_peer.hpp"
#include "model/reference_forward.hpp"
#include "quant/sparse24.hpp"
#include "../engine/test_models.hpp"
#include "util/error.hpp"

namespace ttlpred::engine {
namespace {

using peers::OneDnnMlp;

double rel_rms(const std::vector<float>& got, const std::vector<double>& want) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    e += (got[i] - want[i]) * (got[i] - want[i]);
    r += want[i] * want[i];
  }
  return std::sqrt(e / r);
}

TEST(OneDnnPeer, Fp32AndInt8ChainsMatchTheReference) {
  const MlpModel m = test::random_model(20, {}, {48, 32}, 1, 21);
  const test::Inputs in = test::random_inputs(m, 16, 22);
  std::vector<double> want(16);
  reference_forward(m, in.dense.data(), nullptr, 16, want.data());
  const quant::ActivationRanges calib = quant::measure_activation_ranges(m, in.dense.data(), nullptr, 16);
  std::vector<float> got(16);
  OneDnnMlp fp32(m, OneDnnMlp::Kind::Fp32, 16, nullptr, 1);
  fp32.run(in.dense.data(), got.data());
  EXPECT_LT(rel_rms(got, want), 1e-5);
  OneDnnMlp int8(m, OneDnnMlp::Kind::Int8, 16, &calib, 1);
  int8.run(in.dense.data(), got.data());
  EXPECT_LT(rel_rms(got, want), 0.08);
  EXPECT_EQ(OneDnnMlp::name(OneDnnMlp::Kind::Int8), "onednn_int8");
}

TEST(OneDnnPeer, RefusesEmbeddings) {
  const MlpModel m = test::random_model(2, {{3, 2}}, {8}, 1, 23);
  EXPECT_THROW(OneDnnMlp(m, OneDnnMlp::Kind::Fp32, 1, nullptr, 1), Error);
}

}  // namespace
}  // namespace ttlpred::engine
