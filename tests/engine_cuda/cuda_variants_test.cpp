// Each GPU variant against the shared FP64 reference, on random models
// of odd and tensor-core widths, batches 1..4096. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <sstream>
#include <thread>
#include <vector>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/cuda_plan.hpp"
#include "model/model_file.hpp"
#include "engine/cuda/cuda_self_check.hpp"
#include "model/reference_forward.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU visible"

// The FP64 reference every CPU variant is checked against (model/reference_forward.hpp).
std::vector<double> forward64(const MlpModel& m, const EncodedBatch& b) {
  std::vector<double> out(b.rows * m.layers.back().out);
  reference_forward(m, b.dense.data(), b.cats.empty() ? nullptr : b.cats.data(), b.rows, out.data());
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

void check_variant(const std::string& form_name) {
  const CudaForm form = cuda_form(form_name);
  const std::vector<std::size_t> batches = {1, 2, 15, 16, 17, 255, 1024, 4096};
  std::uint64_t seed = 100;
  for (const Shape& shape : shapes()) {
    SCOPED_TRACE(shape.name);
    const MlpModel model = make_random_model(shape.spec, seed++);
    const EncodedBatch data = make_random_batch(model, 4096, seed++);
    const quant::ActivationRanges calib = quant::measure_activation_ranges(model, make_random_batch(model, 1024, seed++));
    const std::vector<double> ref = forward64(model, data);
    CudaOptions opt;
    opt.calibration = &calib;
    opt.max_batch = 2048;  // 4096 goes through in two chunks
    opt.int8_requant_kernel = form.int8_requant_kernel;
    opt.fp16_fused_kernel = form.fp16_fused_kernel;
    CudaPlan plan = compile_cuda(model, form.variant, opt);
    EXPECT_EQ(plan.form(), form.name == "fused" ? "fp16/fused" : form.name);
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
      EXPECT_LE(err, variant_tolerance(form.variant) * std::max(1.0, ref_max)) << form.name;
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
  check_variant("fp32");
}
TEST(CudaVariants, Fp16MatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant("fp16");
}
TEST(CudaVariants, Int8StaticEpilogueMatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant("int8-static");
}
TEST(CudaVariants, Int8StaticRequantKernelMatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant("int8-static/requant");
}
TEST(CudaVariants, FusedMatchesFp64Reference) {
  SKIP_WITHOUT_GPU();
  check_variant("fused");
}

TEST(CudaVariants, AnOutOfRangeCategoryIsAnErrorAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const MlpModel model = make_random_model({4, {{5, 2}}, {16, 1}, Activation::Relu}, 3);
  CudaPlan plan = compile_cuda(model, engine::Variant::Fp32, {});
  const float dense[8] = {};
  const std::uint32_t cats[2] = {4, 5};  // row 1 is past the 5-row table
  float out[2];
  try {
    plan.predict(dense, cats, 2, out);
    FAIL() << "an index past the table was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, categorical column 0: index 5 >= cardinality 5"), std::string::npos)
        << e.what();
  }
}

// Two lanes of one network (another_lane: the same weights, a stream and buffers each), on
// two threads at once, each many passes: each answers what the plan answers alone.
TEST(CudaLanes, TwoThreadsOnTwoLanesAnswerAsOneAlone) {
  SKIP_WITHOUT_GPU();
  const MlpModel model = make_random_model(shapes()[0].spec, 41);
  const EncodedBatch data = make_random_batch(model, 512, 42);
  CudaPlan first = compile_cuda(model, engine::Variant::Fp32, {});
  std::vector<float> alone(512 * first.outputs());
  first.predict(data.dense.data(), data.cats.data(), 512, alone.data());
  CudaPlan second = first.another_lane();
  EXPECT_EQ(second.form(), first.form());
  std::atomic<int> differing{0};
  auto run = [&](CudaPlan& plan, std::size_t batch) {
    std::vector<float> out(batch * plan.outputs());
    for (int i = 0; i < 50; ++i) {
      plan.predict(data.dense.data(), data.cats.data(), batch, out.data());
      for (std::size_t k = 0; k < out.size(); ++k)
        if (std::fabs(out[k] - alone[k]) > 1e-5f * std::max(1.0f, std::fabs(alone[k]))) ++differing;
    }
  };
  std::thread t([&] { run(second, 512); });
  run(first, 256);  // another batch size at the same time: graphs of its own lane
  t.join();
  EXPECT_EQ(differing.load(), 0);
}

// The backend a Predictor runs: four threads calling one backend at once each get a lane and
// answers within the variant's tolerance of the FP64 reference, as one caller does.
TEST(CudaBackend, ThreadsCallingAtOnceGetWhatOneCallerGets) {
  SKIP_WITHOUT_GPU();
  ModelFile file;
  file.mlp = make_random_model(shapes()[1].spec, 43);
  const EncodedBatch data = make_random_batch(file.mlp, 300, 44);
  const std::vector<double> ref = forward64(file.mlp, data);
  const std::unique_ptr<const engine::Backend> backend =
      engine::compile_backend(cuda_backend(), file, engine::Variant::Fp16, {}, "test model");
  double ref_max = 0;
  for (double r : ref) ref_max = std::max(ref_max, std::fabs(r));
  const double bound = variant_tolerance(engine::Variant::Fp16) * std::max(1.0, ref_max);
  std::atomic<int> outside{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      std::vector<float> out(300 * backend->outputs());
      for (int i = 0; i < 25; ++i) {
        backend->predict(data.dense.data(), data.cats.data(), 300, out.data());
        for (std::size_t k = 0; k < out.size(); ++k)
          if (!(std::fabs(out[k] - ref[k]) <= bound)) ++outside;
      }
    });
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(outside.load(), 0);
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
    EXPECT_THROW(compile_cuda(make_bench_model({8, 16, 1}, 1), engine::Variant::Fp32, {}), Error);
  } else {
    EXPECT_FALSE(cuda_device_description(0).empty());
  }
}

}  // namespace
}  // namespace ttlpred::cuda
