// Throughput of the feature pipeline: the history walk over a table, batch encoding, and the
// serving path (history features + encode_one for one record).
#include <benchmark/benchmark.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "features/encoder.hpp"

namespace ttlpred {
namespace {

// An ALICE-like table: users, productions, master jobs, type + package, sizes, requests.
JobTable bench_table(std::size_t rows) {
  std::mt19937_64 rng(42);
  auto uni = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  std::vector<std::string> users, productions, packages, sites, types = {"MC", "RAW_RECO", "HYPERLOOP", "USER", "MERGE"};
  auto named = [](std::string p, std::size_t i) { return p.append(std::to_string(i)); };
  for (std::size_t i = 0; i < 300; ++i) users.push_back(named("user", i));
  for (std::size_t i = 0; i < 500; ++i) productions.push_back(named("LHC24x", i));
  for (std::size_t i = 0; i < 40; ++i) packages.push_back(named("O2PDPSuite::v", i));
  for (std::size_t i = 0; i < 60; ++i) sites.push_back(named("ALICE::Site", i));
  JobTable t;
  t.reserve(rows);
  JobRecord r;
  for (std::size_t i = 0; i < rows; ++i) {
    r.clear();
    r[Field::JobId] = static_cast<double>(i);
    r[Field::SubmitTime] = 1.7e9 + std::floor(static_cast<double>(i) * 0.5 + uni(0, 600));
    r[Field::MasterJobId] = static_cast<double>(i / 50);
    r.text(Field::User) = users[rng() % users.size()];
    r.text(Field::ProductionTag) = productions[(i / 2000 + rng() % 3) % productions.size()];
    r.text(Field::JobType) = types[rng() % types.size()];
    r.text(Field::Package) = packages[(i / 25000) % packages.size()];
    r.text(Field::Site) = sites[rng() % sites.size()];
    r[Field::CpuCores] = rng() % 2 ? 8 : 1;
    r[Field::InputBytes] = std::floor(std::exp(uni(10, 25)));
    r[Field::Events] = std::floor(uni(50, 500));
    r[Field::RequestedTtl] = rng() % 2 ? 72000 : 21600;
    r[Field::WaitTime] = std::floor(uni(0, 3600));
    r[Field::HostSpeed] = uni(0.6, 1.6);
    r[Field::WallTime] = std::floor(std::exp(uni(5, 10.5)));
    t.append(r);
  }
  return t;
}

constexpr std::size_t kRows = 200000;

const JobTable& table() {
  static const JobTable t = bench_table(kRows);
  return t;
}

void BM_HistoryWalk(benchmark::State& state) {
  const auto& t = table();
  const auto cfg = HistoryConfig::for_table(t);
  for (auto _ : state) benchmark::DoNotOptimize(compute_history(t, cfg).values.data());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * t.rows()));
}
BENCHMARK(BM_HistoryWalk)->Unit(benchmark::kMillisecond);

struct Fitted {
  HistoryConfig cfg;
  HistoryMatrix history;
  std::vector<std::size_t> rows;
  FeatureEncoder encoder;
};
const Fitted& fitted() {
  static const Fitted f = [] {
    Fitted x;
    x.cfg = HistoryConfig::for_table(table());
    x.history = compute_history(table(), x.cfg);
    x.rows.resize(table().rows());
    std::iota(x.rows.begin(), x.rows.end(), std::size_t{0});
    x.encoder = FeatureEncoder::fit(table(), x.rows, &x.history, &x.cfg);
    return x;
  }();
  return f;
}

void BM_EncodeBatch(benchmark::State& state) {
  const auto& f = fitted();
  for (auto _ : state) benchmark::DoNotOptimize(f.encoder.encode_batch(table(), f.rows, &f.history).dense.data());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * f.rows.size()));
  state.counters["dense_width"] = static_cast<double>(f.encoder.dense_width());
}
BENCHMARK(BM_EncodeBatch)->Unit(benchmark::kMillisecond);

// The service's per-job work: history features from the live state, then encode_one.
void BM_EncodeOneWithHistory(benchmark::State& state) {
  const auto& f = fitted();
  HistoryState live(f.cfg);
  compute_history(table(), live);
  std::vector<JobRecord> records(1024);
  for (std::size_t i = 0; i < records.size(); ++i) table().record(i * 97 % table().rows(), records[i]);
  std::vector<float> hist(live.width()), dense(f.encoder.dense_width());
  std::vector<std::uint32_t> cats(f.encoder.cat_width());
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& r = records[i++ & 1023];
    live.features(r, hist.data());
    f.encoder.encode_one(r, hist.data(), dense.data(), cats.data());
    benchmark::DoNotOptimize(dense.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_EncodeOneWithHistory);

}  // namespace
}  // namespace ttlpred
