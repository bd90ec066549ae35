#pragma once
// Durations as operators write them on the command line: "90s", "30m", "6h", "7d", "2w" (a
// bare number is seconds). One parser, so that `retrain --window`, `serve --retrain-every`
// and `replay --retrain-every` read the same words the same way.
#include <string>

namespace ttlpred {

// Seconds of `text`; throws Error naming `option` for anything else (an unknown unit, a
// negative or non-finite number, trailing characters).
double parse_duration(const std::string& text, const char* option);

// The inverse for messages: 604800 -> "7d", 21600 -> "6h", 90 -> "90s".
std::string duration_text(double seconds);

}  // namespace ttlpred
