// SWF parse throughput on one core (goal: >= 1 M rows/s), from memory and from the real
// KTH-SP2 trace on disk. Rows/s counts rows kept in the JobTable.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>
#include <string>

#include "data/trace_readers.hpp"

namespace {

// Rows shaped like KTH-SP2's: right-aligned integer columns, -1 for the unknowns.
const std::string& synthetic_swf() {
  static const std::string text = [] {
    std::mt19937 rng(7);
    std::string s = "; Version: 2.2\n; UnixStartTime: 843480031\n";
    char line[160];
    long submit = 0;
    for (int i = 1; i <= 200000; ++i) {
      submit += static_cast<long>(rng() % 600);
      const unsigned procs = 1 + rng() % 100;
      std::snprintf(line, sizeof line, "%6d %9ld %6u %7u %4u %6d %5d %4u %6u %5d %2u %4u %4u %3d %2d %2d %3d %3d\n", i, submit,
                    static_cast<unsigned>(rng() % 100000), static_cast<unsigned>(rng() % 200000), procs, -1, -1, procs,
                    static_cast<unsigned>(60 + rng() % 200000), -1, static_cast<unsigned>(rng() % 2), 1 + static_cast<unsigned>(rng() % 300),
                    1 + static_cast<unsigned>(rng() % 300), -1, -1, -1, -1, -1);
      s += line;
    }
    return s;
  }();
  return text;
}

void BM_SwfParseInMemory(benchmark::State& state) {
  const std::string& text = synthetic_swf();
  std::size_t rows = 0;
  for (auto _ : state) {
    ttlpred::LineSource src(text, "synthetic.swf");
    ttlpred::JobTable table;
    ttlpred::ReadReport report;
    ttlpred::read_swf(src, table, report);
    rows += table.rows();
    benchmark::DoNotOptimize(table.num(ttlpred::Field::WallTime).data());
  }
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_SwfParseInMemory)->Unit(benchmark::kMillisecond);

void BM_SwfReadKthFromDisk(benchmark::State& state) {
  const std::string path = std::string(TTLPRED_SHARED_DIR) + "/data/traces/KTH-SP2__log.swf";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("KTH-SP2__log.swf not present (shared/ absent)");
    for (auto _ : state) {
    }
    return;
  }
  std::size_t rows = 0;
  for (auto _ : state) {
    ttlpred::ReadReport report;
    const ttlpred::JobTable table = ttlpred::read_trace(path, report);
    rows += table.rows();
  }
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SwfReadKthFromDisk)->Unit(benchmark::kMillisecond);

}  // namespace
