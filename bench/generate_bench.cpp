// Synthetic trace generation speed (the goal: 1 M jobs in under 5 s including the CSV, so
// that a full-size experiment never waits on its data).
#include <benchmark/benchmark.h>

#include "synth/generator.hpp"
#include "synth/rng.hpp"

namespace {

void BM_GenerateJobs(benchmark::State& state) {
  ttlpred::synth::GeneratorConfig c;
  c.jobs = static_cast<std::uint64_t>(state.range(0));
  const ttlpred::synth::TraceGenerator gen(c);
  for (auto _ : state) {
    double sum = 0;
    gen.run([&](const ttlpred::JobRecord& r) { sum += r[ttlpred::Field::WallTime]; });
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GenerateJobs)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GenerateTable(benchmark::State& state) {
  ttlpred::synth::GeneratorConfig c;
  c.jobs = static_cast<std::uint64_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(ttlpred::synth::generate_table(c).rows());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GenerateTable)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_RngLogNormal(benchmark::State& state) {
  ttlpred::synth::Rng rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(rng.lognormal_mean1(0.3));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RngLogNormal);

}  // namespace
