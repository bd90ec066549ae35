#pragma once
// How a backtest is shown: the JSON object scripts read (`backtest --json`) and the text
// tables people read. Kill rates above 1.5 x alpha are flagged in both (a "!" and a line in
// words in the text, `kill_rate_above_1_5_alpha` in JSON): the promise is alpha, and a
// window of a few thousand jobs scatters around it, so 1.5 x alpha is where a miss is real.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/backtest.hpp"

namespace ttlpred::cli {

inline constexpr double kKillFlagFactor = 1.5;

nlohmann::json backtest_json(const Backtest& b, const std::string& data);
void print_backtest(std::FILE* out, const Backtest& b, const std::string& data, bool windows);

}  // namespace ttlpred::cli
