#pragma once
// How an evaluation is shown: the JSON object scripts read (`eval --json`, the pipeline's
// report.json) and the text table people read.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/evaluate.hpp"

namespace ttlpred::app {

nlohmann::json number_or_null(double v);
// The evaluation protocol's keys: rows_scored, rmse_hours, mae_hours, r2, baseline_rmse_hours,
// oracle_rmse_hours, kill_rate, mean_safe_ttl_hours, mean_requested_ttl_hours, plus groups;
// then alpha and kill_rate_above_alpha (overall and per group). Keys are only ever added:
// scripts outside read them.
nlohmann::json evaluation_json(const Evaluation& e);
void print_evaluation(std::FILE* out, const Evaluation& e);
// "" or the warning, in words, that the kill rate is above alpha (for one-line reports).
std::string kill_rate_warning(const Evaluation& e);
// "12.345" or "-" for NaN.
std::string hours_text(double v);

}  // namespace ttlpred::app
