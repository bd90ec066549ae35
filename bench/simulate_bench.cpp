// Simulation speed on one core (docs/SIMULATION.md, "Speed"). Goals: the 1 M-job default
// synthetic trace under the jalien broker in under 60 s; KTH-SP2 under EASY++ in under 5 s.
// Only the simulation is timed; the trace is generated or read once, before.
#include <benchmark/benchmark.h>

#include <string>

#include "data/trace_readers.hpp"
#include "sim/batch_scheduler.hpp"
#include "sim/jalien_broker.hpp"
#include "sim/policy_table.hpp"
#include "sim/sim_input.hpp"
#include "synth/generator.hpp"

namespace {

using namespace ttlpred;

void BM_JalienStaticDefaultTrace(benchmark::State& state) {
  static const sim::SimTrace trace = sim::prepare_trace(synth::generate_table(synth::GeneratorConfig{}), 0, nullptr);
  const auto jobs = sim::grid_jobs(trace, sim::GridTtl::Static);
  const sim::GridConfig cfg = sim::grid_config(trace, sim::GridTtl::Static, sim::GridOptions{});
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate_jalien(jobs, cfg).metrics.completed);
  state.counters["jobs"] = static_cast<double>(jobs.size());
}
BENCHMARK(BM_JalienStaticDefaultTrace)->Unit(benchmark::kSecond)->Iterations(1);

void BM_KthEasyPlusPlusRequest(benchmark::State& state) {
  const std::string path = std::string(TTLPRED_SHARED_DIR) + "/data/traces/KTH-SP2__log.swf";
  ReadReport report;
  JobTable table;
  try {
    table = read_trace(path, report);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const sim::SimTrace trace = sim::prepare_trace(std::move(table), 0, nullptr);
  const auto jobs = sim::batch_jobs(trace);
  const sim::BatchConfig cfg{sim::BatchPolicy::EasyPlusPlus, sim::Estimator::Request, 100, nullptr, {}};
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate_batch(jobs, cfg).metrics.avg_bounded_slowdown);
  state.counters["jobs"] = static_cast<double>(jobs.size());
}
BENCHMARK(BM_KthEasyPlusPlusRequest)->Unit(benchmark::kMillisecond);

}  // namespace
