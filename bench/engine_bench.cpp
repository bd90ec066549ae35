// Micro-benchmarks of compiled plans on the paper's shape (96-256-256-256-1), one thread:
// the quick, repeatable companion of `ttlpred bench` (which adds oneDNN peers and p99).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <random>
#include <vector>

#include "engine/plan.hpp"
#include "quant/activation_ranges.hpp"

namespace {

using ttlpred::MlpModel;
namespace engine = ttlpred::engine;

MlpModel paper_model() {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  MlpModel m;
  m.dense_inputs = 96;
  const std::uint32_t widths[] = {96, 256, 256, 256, 1};
  for (int i = 1; i < 5; ++i) {
    ttlpred::DenseLayer l;
    l.in = widths[i - 1];
    l.out = widths[i];
    const float a = std::sqrt(6.0f / static_cast<float>(l.in));
    for (std::size_t k = 0; k < std::size_t{l.in} * l.out; ++k) l.weight.push_back(a * u(rng));
    l.bias.assign(l.out, 0.01f);
    l.act = i == 4 ? ttlpred::Activation::None : ttlpred::Activation::Relu;
    m.layers.push_back(l);
  }
  return m;
}

void BM_PlanPredict(benchmark::State& state) {
  const auto variant = engine::kAllVariants[state.range(0)];
  const auto batch = static_cast<std::size_t>(state.range(1));
  static const MlpModel model = paper_model();
  // 64 input batches rotate so the inputs do not stay in L1.
  std::vector<float> inputs(64 * batch * 96);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (float& v : inputs) v = nd(rng);
  engine::CompileOptions opt;
  opt.calibration = ttlpred::quant::measure_activation_ranges(model, inputs.data(), nullptr, std::min<std::size_t>(64 * batch, 1024));
  const engine::Plan plan = engine::compile(model, variant, opt);
  std::vector<float> out(batch);
  std::size_t i = 0;
  for (auto _ : state) {
    plan.predict(inputs.data() + (i++ % 64) * batch * 96, nullptr, batch, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.SetLabel(std::string(engine::variant_name(variant)) + "/" + std::string(engine::isa_name(plan.isa())));
}
BENCHMARK(BM_PlanPredict)->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7}, {1, 64}});

}  // namespace
