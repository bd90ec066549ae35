#pragma once
// The charts of report.html drawn from an evaluation, shared by `ttlpred report` and
// `ttlpred pipeline`, and what every report page shares (writing it, percentages);
// `backtest` and `simulate` add their own time-series charts (backtest_figures.hpp,
// simulate_figures.hpp). Each function adds one figure with its
// caption to the page; the numbers come from the same evaluation the text reports print.
#include <string>
#include <vector>

#include "features/history.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "report/html_page.hpp"

namespace ttlpred::app {

// The kill rate and mean TTL of a TTL rule at several settings (alphas, or request factors).
struct KillRatePoint {
  double setting = 0;  // alpha, or the factor on the request
  double kill_rate = 0;
  double mean_ttl_hours = 0;
};
struct KillRateCurves {
  std::vector<KillRatePoint> model;         // the safe TTL at each alpha
  std::vector<KillRatePoint> static_rule;   // one TTL for all: the (1 - alpha) quantile of training run times
  std::vector<KillRatePoint> request_rule;  // factor x the job's request (empty without requests)
  double alpha = 0;                         // the alpha the report was made at
};

// A share as the figures' captions and notes write it: 0.01 -> "1%".
std::string percent_text(double v);

// The alphas the calibration curve is drawn at.
const std::vector<double>& report_alphas();

// Scores `model` at every report alpha (other options as `base`), and the simple rules on the
// same scored jobs. `history`: split_history() of `split` under the model's configuration.
KillRateCurves kill_rate_curves(const ModelFile& model, const std::string& what, const PredictorOptions& base,
                                const ChronologicalSplit& split, const HistoryMatrix& history);

struct VariantLatency {
  std::string variant, isa;
  double one_job_us = 0;     // median latency of a one-job call
  double batch256_us = 0;    // median latency of a 256-job call
};

// One row of latency for each variant the model can run (a variant it cannot, such as
// int8-static without a calibration, is left out): the serving path from a job record to
// its safe TTL, single-threaded, `seconds` per measurement.
std::vector<VariantLatency> measure_variant_latency(const ModelFile& model, const std::string& what,
                                                    const PredictorOptions& base, const JobTable& jobs,
                                                    const std::vector<engine::Variant>& variants, double seconds);

void add_prediction_density(report::HtmlPage& page, const ChronologicalSplit& split, const Evaluation& e);
void add_error_by_group(report::HtmlPage& page, const Evaluation& e);
void add_kill_rate_by_group(report::HtmlPage& page, const Evaluation& e);
void add_kill_rate_vs_alpha(report::HtmlPage& page, const KillRateCurves& curves);
void add_kill_rate_vs_tightness(report::HtmlPage& page, const KillRateCurves& curves);
void add_latency_by_variant(report::HtmlPage& page, const std::vector<VariantLatency>& rows);

// Writes `page` to `dir`/report.html (atomically); returns the path.
std::string write_report_html(const report::HtmlPage& page, const std::string& dir);

}  // namespace ttlpred::app
