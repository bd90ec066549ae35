#pragma once
// report.html of `ttlpred backtest --out DIR`: the numbers of `backtest --json` drawn: the
// kill rate of every calibration method per window of submit time (at the headline alpha,
// against it), and per split, the kill rate of each method and the RMSE of each split's
// model next to the request's.
#include <string>

#include "pipeline/backtest.hpp"
#include "report/html_page.hpp"

namespace ttlpred::app {

void add_window_kill_rates(report::HtmlPage& page, const Backtest& b);
void add_split_kill_rates(report::HtmlPage& page, const Backtest& b);
void add_split_rmse(report::HtmlPage& page, const Backtest& b);

// The whole page, written to `dir`/report.html (atomically); returns the path. `data`: the
// trace as the user named it.
std::string write_backtest_report(const Backtest& b, const std::string& data, const std::string& dir);

}  // namespace ttlpred::app
