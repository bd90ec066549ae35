// Each GPU variant against an FP64 forward written here with plain loops, on random models
// of odd and tensor-core widths, batches 1..4096. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <cmath>
#include <vector>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/cuda/cuda_self_check.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU visible"

// y = act(W x + b) layer by layer in double; embeddings gathered with OOV -> row 0.
std::vector<double> forward64(const MlpModel& m, const EncodedBatch& b) {
  const std::size_t n_out = m.layers.back().out;
  std::vector<double> out(b.rows * n_out);
  for (std::size_t r = 0; r < b.rows; ++r) {
    std::vector<double> x;
    for (std::size_t i = 0; i < b.dense_width; ++i) x.push_back(b.dense[r * b.dense_width + i]);
    for (std::size_t j = 0; j < m.embeddings.size(); ++j) {
      const Embedding& e = m.embeddings[j];
      std::uint32_t idx = b.cats[r * b.cat_width + j];
      if (idx >= e.cardinality) idx = 0;
      for (std::uint32_t c = 0; c < e.dim; ++c) x.push_back(e.table[idx * e.dim + c]);
    }
    for (const DenseLayer& d : m.layers) {
      std::vector<double> y(d.out);
      for (std::uint32_t o = 0; o < d.out; ++o) {
        double s = d.bias[o];
        for (std::uint32_t i = 0; i < d.in; ++i) s += double{d.weight[o * d.in + i]} * x[i];
        if (d.act == Activation::Relu) s = std::max(s, 0.0);
        if (d.act == Activation::LeakyRelu && s < 0) s *= double{kLeakyReluSlope};
        y[o] = s;
      }
      x = std::move(y);
    }
    std::copy(x.begin(), x.end(), out.begin() + static_cast<std::ptrdiff_t>(r * n_out));
  }
  return out;
}

struct Shape {
  const char* name;
  RandomModelSpec spec;
};

std::vector<Shape> shapes() {
  std::vector<Shape> s;
  s.push_back({"tensor-core widths", {64, {{40, 8}, {40, 8}, {40, 16}}, {128, 128, 1}, Activation::Relu}});
  s.push_back({"odd widths", {13, {{7, 3}, {100, 5}}, {37, 19, 1}, Activation::Relu}});
  s.push_back({"leaky, 3 outputs", {33, {}, {50, 3}, Activation::LeakyRelu}});
  return s;
}

void check_variant(CudaVariant variant, bool int8_requant_kernel) {
  const std::vector<std::size_t> batches = {1, 2, 15, 16, 17, 255, 1024, 4096};
  std::uint64_t seed = 100;
  for (const Shape& shape : shapes()) {
    SCOPED_TRACE(shape.name);
    const MlpModel model = make_random_model(shape.spec, seed++);
    const EncodedBatch data = make_random_batch(model, 4096, seed++);
    const EncodedBatch calib = make_random_batch(model, 1024, seed++);
    const std::vector<double> ref = forward64(model, data);
    CudaOptions opt;
    opt.calibration = &calib;
    opt.max_batch = 2048;  // 4096 goes through in two chunks
    opt.int8_requant_kernel = int8_requant_kernel;
    CudaPlan plan = compile_cuda(model, variant, opt);
    const std::size_t n_out = plan.outputs();
    ASSERT_EQ(n_out, model.layers.back().out);
    for (std::size_t batch : batches) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      std::vector<float> out(batch * n_out);
      plan.predict(data.dense.data(), data.cats.empty() ? nullptr : data.cats.data(), batch, out.data());
      double ref_max = 0, err = 0;
      for (std::size_t i = 0; i < out.size(); ++i) {
        ref_max = std::max(ref_max, std::fabs(ref[i]));
        err = std::max(err, std::fabs(out[i] - ref[i]));
        ASSERT_TRUE(std::isfinite(out[i])) << "output " << i;
      }
      EXPECT_LE(err, variant_tolerance(variant) * std::max(1.0, ref_max)) << to_string(variant);
    }
    // The staged path and the captured graph give the same numbers as predict().
    const std::size_t b = 17;
    std::copy_n(data.dense.data(), b * data.dense_width, plan.staging_dense());
    if (data.cat_width) std::copy_n(data.cats.data(), b * data.cat_width, plan.staging_cats());
    plan.predict_staged(b);
    std::vector<float> direct(b * n_out);
    plan.predict(data.dense.data(), data.cats.empty() ? nullptr : data.cats.data(), b, direct.data());
    for (std::size_t i = 0; i < direct.size(); ++i) EXPECT_EQ(plan.staging_out()[i], direct[i]);
    EXPECT_GT(plan.device_time_us(b, 5), 0.0);
  }
}

TEST(CudaVariants, Fp32MatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant(CudaVariant::Fp32, false);
}
TEST(CudaVariants, Fp16MatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant(CudaVariant::Fp16, false);
}
TEST(CudaVariants, Int8StaticEpilogueMatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant(CudaVariant::Int8Static, false);
}
TEST(CudaVariants, Int8StaticRequantKernelMatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant(CudaVariant::Int8Static, true);
}
TEST(CudaVariants, FusedMatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant(CudaVariant::Fused, false);
}

TEST(CudaVariants, SelfCheckPasses) {
  SKIP_WITHOUT_GPU();
  std::ostringstream log;
  const auto results = run_self_check(log);
  for (const auto& r : results) EXPECT_TRUE(r.passed) << r.what << " " << r.error;
  EXPECT_GT(results.size(), 100u);
}

TEST(CudaDevice, CountNeverThrows) {
  EXPECT_GE(cuda_device_count(), 0);
  if (cuda_device_count() == 0) {
    EXPECT_THROW(compile_cuda(make_bench_model({8, 16, 1}, 1), CudaVariant::Fp32, {}), Error);
  } else {
    EXPECT_FALSE(cuda_device_description(0).empty());
  }
}

}  // namespace
}  // namespace ttlpred::cuda
