#pragma once
// What a simulation reports: one JSON object of metrics (`--json`, and the tables), the
// per-job schedule and the hourly time series as CSV files (`--out DIR`), written atomically.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/batch_scheduler.hpp"
#include "sim/jalien_broker.hpp"

namespace ttlpred::sim {

nlohmann::json metrics_json(const BatchMetrics& m);
nlohmann::json metrics_json(const GridMetrics& m);

// DIR/schedule.csv (one line per job) and DIR/timeseries.csv (one line per hour).
void write_batch_outputs(const std::string& dir, const std::vector<BatchJob>& jobs, const BatchResult& r);
void write_grid_outputs(const std::string& dir, const std::vector<GridJob>& jobs, const GridResult& r);

}  // namespace ttlpred::sim
