#pragma once
// What the SWF and GWF readers share: both archives use the same first 16 fields, -1 for
// "unknown", and the same status codes.
#include <cstdio>
#include <string>
#include <string_view>

#include "data/field_parse.hpp"
#include "data/job_record.hpp"
#include "data/read_report.hpp"

namespace ttlpred::archive {

// SWF status codes (GWF uses the same): 1 completed, 0 failed, 5 cancelled; 2, 3, 4 mark
// the parts of a checkpointed job (partial, last part completed, last part failed).
inline std::string_view status_text(double code) {
  if (code == 1 || code == 3) return "DONE";
  if (code == 0 || code == 4) return "FAILED";
  if (code == 5) return "CANCELLED";
  if (code == 2) return "PARTIAL";
  return "OTHER";
}

// -1 is the archives' "unknown"; other negative values were rejected before.
inline double known_or_nan(double v) { return v == -1 ? kMissingNumber : v; }

// Counts a numeric field that failed to parse (`st`) or was negative; out of line because
// it is the rare path.
[[gnu::cold, gnu::noinline]] inline void report_bad_number(std::string_view text, parse::NumberStatus st, std::string_view name,
                                                           int number, std::string_view format, std::size_t line,
                                                           ReadReport& rep) {
  std::string field(name);
  field += " (";
  field += format;
  field += " field ";
  field += std::to_string(number);
  field += ")";
  if (st == parse::NumberStatus::NotANumber)
    rep.skip(SkipReason::NotANumber, line, field, "not a number: " + quote_for_message(text));
  else if (st == parse::NumberStatus::NotFinite)
    rep.skip(SkipReason::NotFinite, line, field, "not a finite number: " + quote_for_message(text));
  else
    rep.skip(SkipReason::Negative, line, field, "negative value " + quote_for_message(text) + " (only -1, unknown, may be negative)");
}

// Parses a numeric archive field into `out`; on failure counts the skip and returns false.
// `name` is the archive's own field name, `number` its 1-based position.
inline bool numeric_field(std::string_view text, std::string_view name, int number, std::string_view format,
                          std::size_t line, ReadReport& rep, double& out) {
  const auto st = parse::number(text, out);
  if (st == parse::NumberStatus::Ok && (out >= 0 || out == -1) && out <= kMaxStoredNumber) [[likely]]
    return true;
  if (st == parse::NumberStatus::Ok && out > kMaxStoredNumber) {
    rep.skip(SkipReason::NotFinite, line, std::string(name) + " (" + std::string(format) + " field " + std::to_string(number) + ")",
             "out of range: " + quote_for_message(text) + " (above 3.4e38, the largest number the model stores)");
    return false;
  }
  report_bad_number(text, st, name, number, format, line, rep);
  return false;
}

// Per-line checks shared by both readers, before the line is split; false (after counting
// the skip) when the line cannot be a row.
inline bool usable_line(std::string_view& line, std::size_t line_no, bool truncated, ReadReport& rep) {
  if (truncated) {
    rep.skip(SkipReason::LineTooLong, line_no, "", "line longer than " + std::to_string(line.size()) + " bytes");
    return false;
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

[[gnu::cold, gnu::noinline]] inline void report_control_byte(std::string_view line, std::size_t pos, std::size_t line_no,
                                                             ReadReport& rep) {
  char tmp[64];
  std::snprintf(tmp, sizeof tmp, "control or binary byte 0x%02X at column %zu",
                static_cast<unsigned>(static_cast<unsigned char>(line[pos])), pos + 1);
  rep.skip(SkipReason::ControlBytes, line_no, "", tmp);
}

// After parse::split_fields_checked: false (after counting the skip) when the line held a
// control byte (at control_at) or fewer than the `needed` fields of `format` ("SWF", "GWF").
inline bool fields_complete(std::string_view line, std::size_t n, std::size_t control_at, std::size_t needed,
                            std::string_view format, std::size_t line_no, ReadReport& rep) {
  if (control_at != std::string_view::npos) [[unlikely]] {
    report_control_byte(line, control_at, line_no, rep);
    return false;
  }
  if (n < needed) [[unlikely]] {
    rep.skip(SkipReason::TooFewFields, line_no, "",
             std::to_string(n) + " fields, " + std::string(format) + " has " + std::to_string(needed));
    return false;
  }
  return true;
}

}  // namespace ttlpred::archive
