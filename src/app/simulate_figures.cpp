#include "app/simulate_figures.hpp"

#include <cstdio>
#include <utility>

#include "app/report_figures.hpp"
#include "report/line_chart.hpp"

namespace ttlpred::app {
namespace {

using report::Axis;

// One hourly series as a line without markers (a long trace has thousands of hours).
void add_hourly(report::HtmlPage& page, const std::string& title, const std::string& name, const Axis& y,
                const std::vector<sim::HourSample>& hours, double sim::HourSample::*value, const std::string& caption) {
  report::LineChart c;
  c.title = title;
  c.x = Axis{"time since the first simulated submit", "h", false, 0};
  c.y = y;
  report::Series s{name, {}, false, hours.size() <= 48};
  for (std::size_t h = 0; h < hours.size(); ++h) s.points.push_back({static_cast<double>(h), hours[h].*value});
  c.series = {std::move(s)};
  c.notes = {"one point per hour"};
  page.add_chart(report::draw_line_chart(c), caption);
}

}  // namespace

void add_utilization_series(report::HtmlPage& page, const std::vector<sim::HourSample>& hours) {
  add_hourly(page, "Utilization per hour", "busy cores / cores", Axis{"utilization", "%", false, 0, Axis::kAuto, true},
             hours, &sim::HourSample::utilization,
             "Time-weighted mean share of the cores present that ran a job, per hour of simulated time.");
}

void add_queue_series(report::HtmlPage& page, const std::vector<sim::HourSample>& hours) {
  add_hourly(page, "Queue length per hour", "waiting jobs", Axis{"queue length", "jobs", false, 0}, hours,
             &sim::HourSample::queue_length, "Time-weighted mean number of jobs waiting to start, per hour.");
}

void add_waste_series(report::HtmlPage& page, const std::vector<sim::HourSample>& hours) {
  add_hourly(page, "Wasted core-hours per hour", "wasted core-hours", Axis{"waste", "core-h", false, 0}, hours,
             &sim::HourSample::wasted_core_hours,
             "Core-hours lost in each hour (docs/SIMULATION.md): cores held by killed jobs, and on the broker, pilot "
             "slots that exit early while jobs wait.");
}

std::string write_simulate_report(const nlohmann::json& summary, const std::vector<sim::HourSample>& hours,
                                  const std::string& dir) {
  const std::string trace = summary.value("trace", std::string{});
  report::HtmlPage page("ttlpred simulate: " + summary.value("scheduler", std::string{}) + ", TTL " +
                        summary.value("policy", std::string{}) + " on " + trace.substr(trace.rfind('/') + 1));
  std::vector<std::pair<std::string, std::string>> facts;
  for (const auto& [key, value] : summary.items()) {
    char number[40];  // six digits read as well as seventeen, in a table of facts
    if (value.is_number_float()) std::snprintf(number, sizeof number, "%.6g", value.get<double>());
    facts.emplace_back(key, value.is_string() ? value.get<std::string>() : value.is_number_float() ? number : value.dump());
  }
  page.add_facts(facts);
  page.add_heading("Over time");
  add_utilization_series(page, hours);
  add_queue_series(page, hours);
  add_waste_series(page, hours);
  return write_report_html(page, dir);
}

}  // namespace ttlpred::app
