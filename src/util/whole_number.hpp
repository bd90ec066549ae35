#pragma once
// A whole number written as decimal digits and nothing else: no sign, no space, no
// exponent, no trailing text, no overflow. std::stoull would take " 7", "-1" (as the largest
// value) and "7x" (as 7); a command-line count or width must be refused for each. Header-only
// so that the standalone CUDA tools, which link none of the project's libraries, share it.
#include <charconv>
#include <optional>
#include <string_view>

namespace ttlpred {

inline std::optional<unsigned long long> parse_whole_number(std::string_view text) {
  unsigned long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace ttlpred
