#pragma once
// report.html of `ttlpred simulate --out DIR`: the hourly series of timeseries.csv drawn
// (utilization, queue length, wasted core-hours), under the metrics `simulate --json`
// prints.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/html_page.hpp"
#include "sim/time_series.hpp"

namespace ttlpred::app {

void add_utilization_series(report::HtmlPage& page, const std::vector<sim::HourSample>& hours);
void add_queue_series(report::HtmlPage& page, const std::vector<sim::HourSample>& hours);
void add_waste_series(report::HtmlPage& page, const std::vector<sim::HourSample>& hours);

// The whole page (`summary`: the JSON object of the run), written to `dir`/report.html
// atomically; returns the path.
std::string write_simulate_report(const nlohmann::json& summary, const std::vector<sim::HourSample>& hours,
                                  const std::string& dir);

}  // namespace ttlpred::app
