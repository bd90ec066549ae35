#pragma once
// How a backtest is shown: the JSON object scripts read (`backtest --json`) and the text
// tables people read. Kill rates above 1.5 x alpha are flagged in both (a "!" and a line in
// words in the text, `kill_rate_above_1_5_alpha` in JSON): the promise is alpha, and a
// window of a few thousand jobs scatters around it, so 1.5 x alpha is where a miss is real.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/backtest.hpp"

namespace ttlpred::app {

inline constexpr double kKillFlagFactor = 1.5;

nlohmann::json backtest_json(const Backtest& b, const std::string& data);
void print_backtest(std::FILE* out, const Backtest& b, const std::string& data, bool windows);

// `backtest --per-job FILE` (atomically): one CSV line per scored job of every split, kept by
// BacktestOptions::keep_jobs: split, submit_s, wait_s, wall_s, requested_s (0: none),
// user_q99_s (empty: fewer than 5 finished jobs), pred_s, ttl_<method> at the headline alpha
// for every method, static_ttl_<level> for every kept level, upper_s (the per-job rule's head
// quantile in seconds; empty for a mean-only model) and cold (1: a cold start, 0 otherwise).
// Throws Error when the jobs were not kept.
void write_backtest_jobs(const Backtest& b, const std::string& path);

}  // namespace ttlpred::app
