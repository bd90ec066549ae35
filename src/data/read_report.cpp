#include "data/read_report.hpp"

#include <cstdio>
#include <numeric>

#include "util/error.hpp"

namespace ttlpred {

std::string_view skip_reason_name(SkipReason r) {
  switch (r) {
    case SkipReason::TooFewFields: return "too few fields";
    case SkipReason::ColumnCount: return "wrong column count";
    case SkipReason::NotANumber: return "not a number";
    case SkipReason::NotFinite: return "nan, inf or out of range";
    case SkipReason::Negative: return "negative value";
    case SkipReason::ControlBytes: return "control or binary bytes";
    case SkipReason::InvalidUtf8: return "invalid UTF-8";
    case SkipReason::LineTooLong: return "line too long";
    case SkipReason::BadQuoting: return "bad quoting";
    case SkipReason::MalformedRecord: return "malformed record";
    case SkipReason::kCount: break;
  }
  return "?";
}

std::size_t ReadReport::skipped_total() const {
  return std::accumulate(skipped.begin(), skipped.end(), std::size_t{0});
}

void ReadReport::skip(SkipReason why, std::size_t line, std::string_view field, std::string_view problem) {
  ++skipped[static_cast<std::size_t>(why)];
  if (examples.size() >= kMaxExamples) return;
  std::string msg;
  if (!field.empty()) {
    msg = "field ";
    msg += field;
    msg += ": ";
  }
  msg += problem;
  examples.push_back(InputError::format(path, line, msg));
}

std::string quote_for_message(std::string_view s, std::size_t max) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') {
      char tmp[8];
      std::snprintf(tmp, sizeof tmp, "\\x%02X", c);
      out += tmp;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > max) out += "...";
  out += '"';
  return out;
}

std::string format_report(const ReadReport& r) {
  std::string s;
  char tmp[256];
  std::snprintf(tmp, sizeof tmp, "%s (%s): %zu lines, %zu rows kept, %zu skipped, %zu comment/header/blank\n",
                r.path.c_str(), r.format.c_str(), r.lines, r.rows, r.skipped_total(), r.comment_lines);
  s += tmp;
  for (std::size_t i = 0; i < kNumSkipReasons; ++i) {
    if (r.skipped[i] == 0) continue;
    std::snprintf(tmp, sizeof tmp, "  skipped %8zu  %s\n", r.skipped[i],
                  std::string(skip_reason_name(static_cast<SkipReason>(i))).c_str());
    s += tmp;
  }
  if (!r.examples.empty()) {
    s += "  first skipped rows:\n";
    for (const auto& e : r.examples) s += "    " + e + "\n";
    if (r.skipped_total() > r.examples.size())
      s += "    ... and " + std::to_string(r.skipped_total() - r.examples.size()) + " more\n";
  }
  for (const auto& w : r.warnings) s += "  warning: " + w + "\n";
  for (const auto& n : r.notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace ttlpred
