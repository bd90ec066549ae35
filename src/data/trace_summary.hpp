#pragma once
// What `ttlpred inspect` shows about a table: per-column summaries, the run-time and
// requested-TTL distributions, and how often jobs ran past their requested time. Kept apart
// from the CLI so that tests can check the numbers.
#include <cstddef>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/job_table.hpp"
#include "data/read_report.hpp"

namespace ttlpred {

struct ColumnSummary {
  Field field;
  std::size_t known = 0;
  // Number columns (over known values):
  double min = 0, p50 = 0, mean = 0, p99 = 0, max = 0;
  // Category columns:
  std::size_t distinct = 0;
  std::vector<std::pair<std::string, std::size_t>> top;  // most frequent first
};

struct HistogramBin {
  double lo, hi;  // [lo, hi)
  std::size_t count;
};

struct Distribution {
  std::size_t n = 0;                                   // known values
  std::vector<std::pair<double, double>> percentiles;  // (percent, value), nearest rank
  std::vector<HistogramBin> bins;                      // [0,1), then half-decade bins
};

struct TraceSummary {
  std::size_t rows = 0;
  std::vector<ColumnSummary> columns;  // schema order, only columns with a known value
  Distribution wall, ttl;
  std::size_t with_wall_and_ttl = 0;   // jobs whose run time and requested time are both known
  std::size_t past_ttl = 0;            // ... of which ran longer than requested
};

// Nearest-rank percentile of sorted values (p in [0, 100]); NaN for none.
double percentile_sorted(const std::vector<double>& sorted, double p);
// Distribution of the known, non-negative values of `values`.
Distribution distribution_of(std::span<const double> values);
TraceSummary summarize(const JobTable& table, std::size_t top_values = 5);

// Seconds as a short human duration: "45s", "3.2m", "8.8h", "3.7d".
std::string human_duration(double seconds);
std::string format_summary(const TraceSummary& s);
nlohmann::json summary_to_json(const TraceSummary& s, const ReadReport& report);

}  // namespace ttlpred
