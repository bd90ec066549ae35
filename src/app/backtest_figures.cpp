#include "app/backtest_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "app/backtest_report.hpp"
#include "app/report_figures.hpp"
#include "report/bar_chart.hpp"
#include "report/line_chart.hpp"

namespace ttlpred::app {
namespace {

using report::Axis;

std::string split_label(const SplitBacktest& s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f-%.2f", s.split, s.end);
  return buf;
}

}  // namespace

void add_window_kill_rates(report::HtmlPage& page, const Backtest& b) {
  const auto& o = b.options;
  report::LineChart c;
  char days[32];
  std::snprintf(days, sizeof days, "%g", o.window_days);
  c.title = "Kill rate per " + std::string(days) + "-day window";
  c.x = Axis{"window start, since the first scored job", "days", false, 0};
  c.y = Axis{"kill rate", "%", false, 0, Axis::kAuto, true};
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (OnlineMethod m : o.methods) {
    report::Series s{std::string(online_method_name(m)), {}};
    for (const WindowScore& w : merged_windows(b, m)) {
      if (w.rows < o.min_window_rows || std::isnan(w.kill_rate)) continue;
      const double day = (w.start_s - b.window_origin_s) / 86400.0;
      s.points.push_back({day, w.kill_rate});
      first = std::min(first, day);
      last = std::max(last, day);
    }
    c.series.push_back(std::move(s));
  }
  report::Series target{"target alpha " + percent_text(o.alpha), {}, true, false};
  if (first <= last) target.points = {{first, o.alpha}, {last, o.alpha}};
  c.series.push_back(std::move(target));
  c.notes = {"alpha " + percent_text(o.alpha) + ", windows of", ">= " + std::to_string(o.min_window_rows) + " scored jobs",
             "lines overlap where", "methods agree"};
  page.add_chart(report::draw_line_chart(c),
                 "Share of the jobs submitted in each window that the safe TTL of each online calibration method kills, "
                 "at the headline alpha; each window is scored by the newest model trained before it began. Windows "
                 "with fewer than " + std::to_string(o.min_window_rows) + " scored jobs are left out.");
}

void add_split_kill_rates(report::HtmlPage& page, const Backtest& b) {
  const auto& o = b.options;
  report::BarChart c;
  c.title = "Kill rate per split";
  c.x = Axis{"scored range (fractions of the eligible jobs)", ""};
  c.y = Axis{"kill rate", "%", false, 0, Axis::kAuto, true};
  for (const SplitBacktest& s : b.splits) c.categories.push_back(split_label(s));
  for (OnlineMethod m : o.methods) {
    report::BarSeries series{std::string(online_method_name(m)), {}};
    for (const SplitBacktest& s : b.splits) {
      const MethodScore* ms = s.find(m, o.alpha);
      series.values.push_back(ms ? ms->kill_rate : NAN);
    }
    c.series.push_back(std::move(series));
  }
  c.notes = {"target alpha " + percent_text(o.alpha), "flagged above " + percent_text(kKillFlagFactor * o.alpha)};
  page.add_chart(report::draw_bar_chart(c),
                 "Kill rate of each calibration method over the jobs each split's model scored (from the split to the "
                 "next one), at alpha " + percent_text(o.alpha) + ".");
}

void add_split_rmse(report::HtmlPage& page, const Backtest& b) {
  report::BarChart c;
  c.title = "Run-time error per split";
  c.x = Axis{"scored range (fractions of the eligible jobs)", ""};
  c.y = Axis{"RMSE", "h"};
  report::BarSeries model{"ttlpred prediction", {}}, base{"static TTL (request)", {}};
  for (const SplitBacktest& s : b.splits) {
    c.categories.push_back(split_label(s));
    model.values.push_back(s.rmse_hours);
    base.values.push_back(s.baseline_rmse_hours);
  }
  c.series = {model, base};
  page.add_chart(report::draw_bar_chart(c),
                 "Root-mean-square error of each split's model on the jobs it scored, next to the error of the "
                 "requested (static) TTL as the prediction (no bar: the trace has no requests).");
}

std::string write_backtest_report(const Backtest& b, const std::string& data, const std::string& dir) {
  const auto& o = b.options;
  report::HtmlPage page("ttlpred backtest: " + data.substr(data.rfind('/') + 1));
  std::string splits, methods;
  for (const SplitBacktest& s : b.splits) splits += (splits.empty() ? "" : ", ") + split_label(s);
  for (OnlineMethod m : o.methods) methods += (methods.empty() ? "" : ", ") + std::string(online_method_name(m));
  std::size_t scored = 0;
  for (const SplitBacktest& s : b.splits) scored += s.scored_rows;
  page.add_facts({{"trace", data},
                  {"splits", splits + " (a model trained from scratch at each)"},
                  {"scored jobs", std::to_string(scored)},
                  {"alpha", percent_text(o.alpha)},
                  {"calibration methods", methods}});
  page.add_heading("Kill rate over time");
  add_window_kill_rates(page, b);
  page.add_heading("Per split");
  add_split_kill_rates(page, b);
  add_split_rmse(page, b);
  return write_report_html(page, dir);
}

}  // namespace ttlpred::app
