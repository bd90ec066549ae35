#pragma once
// What several commands share: reading a trace with its skip report on stderr, parsing
// lists and variant options.
#include <cstdint>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "engine/variant.hpp"
#include "predict/predictor.hpp"

namespace ttlpred::cli {

// Reads `path` (any supported format); skipped rows and warnings go to stderr, counted.
JobTable load_trace(const std::string& path, bool quiet = false);

// "1,8,64" -> {1, 8, 64}, each in 1..max; throws Error naming `option` and the bad item.
std::vector<std::size_t> parse_positive_list(const std::string& text, const char* option, std::size_t max);
// Layer widths, each in 1..65536.
std::vector<std::uint32_t> parse_widths(const std::string& text, const char* option);

PredictorOptions predictor_options(const std::string& variant, const std::string& isa, double alpha);

}  // namespace ttlpred::cli
