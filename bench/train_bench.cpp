// Training throughput of the default MLP (hidden 256-256-256, ~93 inputs after embeddings)
// on random data: rows per second of one epoch, and what that means for 1 M jobs. The
// goal: the default model trains on 1 M synthetic jobs in a few minutes on 2 cores.
#include <benchmark/benchmark.h>

#include <random>

#include "train/mlp_trainer.hpp"

namespace {

ttlpred::EncodedBatch random_batch(std::size_t rows, std::vector<float>& wall) {
  ttlpred::EncodedBatch x;
  x.rows = rows;
  x.dense_width = 56;
  x.cat_width = 3;
  x.cat_cardinality = {8, 50, 1000};  // embedding widths 6, 15, 16 -> 93 first-layer inputs
  std::mt19937_64 rng(1);
  std::normal_distribution<float> n01;
  x.dense.resize(rows * x.dense_width);
  for (auto& v : x.dense) v = n01(rng);
  x.cats.resize(rows * x.cat_width);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < x.cat_width; ++j) x.cats[r * 3 + j] = static_cast<std::uint32_t>(rng() % x.cat_cardinality[j]);
  wall.resize(rows);
  for (std::size_t r = 0; r < rows; ++r) wall[r] = 3600.f * std::exp(x.dense[r * x.dense_width] + 0.3f * n01(rng));
  return x;
}

// Args: rows, batch size, shards, threads (0 = all cores).
void BM_TrainEpoch(benchmark::State& state) {
  std::vector<float> wall;
  const auto x = random_batch(static_cast<std::size_t>(state.range(0)), wall);
  ttlpred::TrainConfig c;  // the default model
  c.max_epochs = 1;
  c.validation_fraction = 0.0;
  c.batch_size = static_cast<std::uint32_t>(state.range(1));
  c.shards = static_cast<std::uint32_t>(state.range(2));
  c.threads = static_cast<int>(state.range(3));
  double rows_per_s = 0;
  for (auto _ : state) {
    const auto r = ttlpred::train_mlp(x, wall, c);
    rows_per_s = r.history.back().samples_per_s;
    benchmark::DoNotOptimize(r.model.layers.back().bias[0]);
  }
  state.counters["rows_per_s"] = rows_per_s;
  state.counters["min_per_1M_epoch"] = 1e6 / rows_per_s / 60.0;
}
BENCHMARK(BM_TrainEpoch)
    ->Args({50000, 512, 4, 0})
    ->Args({50000, 1024, 4, 0})
    ->Args({50000, 1024, 8, 0})
    ->Args({50000, 512, 4, 1})
    ->Args({50000, 512, 4, 2})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_PredictReference(benchmark::State& state) {
  std::vector<float> wall;
  const auto x = random_batch(static_cast<std::size_t>(state.range(0)), wall);
  ttlpred::TrainConfig c;
  c.max_epochs = 1;
  c.validation_fraction = 0.0;
  const auto r = ttlpred::train_mlp(x, wall, c);
  std::vector<float> out(x.rows);
  for (auto _ : state) {
    ttlpred::predict_mlp(r.model, r.target, x, out);
    benchmark::DoNotOptimize(out[0]);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(x.rows));
}
BENCHMARK(BM_PredictReference)->Arg(50000)->Unit(benchmark::kMillisecond);

}  // namespace
