#pragma once
// The GPU benchmark behind ttlpred_gpu_bench (and `ttlpred bench --device cuda` once the CLI
// calls it): per variant and batch size, host-to-host latency of predict() (median, p99),
// the same through the pinned staging buffers, and device-only time of the kernels graph;
// then the tensor-core roofline fraction at the largest batch.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace ttlpred::cuda {

struct GpuBenchOptions {
  std::vector<std::uint32_t> shape = {96, 256, 256, 256, 1};
  std::vector<std::string> variants;  // empty: every built variant, plus "int8-static/requant"
  std::size_t min_batch = 1, max_batch = 65536;  // powers of two from min to max
  int device = 0;
  double seconds_per_point = 0.2;  // wall-clock budget of each host-to-host measurement
  // Dense peaks of the GPU (defaults: H200 SXM), for the roofline fraction.
  double peak_fp32_tflops = 67.0;
  double peak_fp16_tflops = 989.0;
  double peak_int8_tops = 1979.0;
};

struct GpuBenchRow {
  std::string variant;
  std::size_t batch = 0;
  double median_us = 0, p99_us = 0, per_sample_us = 0, device_us = 0, staged_median_us = 0;
};

// Parses "96,256,256,256,1"; throws ttlpred::Error naming the bad item.
std::vector<std::uint32_t> parse_shape(const std::string& text);

// Writes the table (and roofline lines) to `table`, one JSON object per row to `json`.
// Returns the rows; throws ttlpred::Error when no GPU is visible or a variant name is unknown.
// A variant that fails to compile or run is reported in the table and skipped.
std::vector<GpuBenchRow> run_gpu_bench(const GpuBenchOptions& options, std::ostream& table, std::ostream& json);

}  // namespace ttlpred::cuda
