#pragma once
// What a reader did with each line of its input: rows kept, comment/header lines, and rows
// skipped, counted by reason with the first few examples ("file:line: field NAME: problem").
// Readers never stop at a bad row; this report is how the user learns about them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ttlpred {

enum class SkipReason : std::uint8_t {
  TooFewFields,       // SWF/GWF line with fewer fields than the format has
  ColumnCount,        // CSV row whose field count differs from the header's
  NotANumber,         // letters or junk in a numeric field
  NotFinite,          // nan, inf, or out of double range
  Negative,           // negative where only >= 0 (or the -1 "unknown" marker) means something
  ControlBytes,       // control or binary bytes (a NUL, an escape, ...)
  InvalidUtf8,        // text field that is not UTF-8
  LineTooLong,        // over LineSource::kMaxLine
  BadQuoting,         // CSV: text after a closing quote, or a quote never closed
  MalformedRecord,    // journal: a line that is no JSON object, or a field of the wrong type
  kCount
};
inline constexpr std::size_t kNumSkipReasons = static_cast<std::size_t>(SkipReason::kCount);
// Numbers above this (float's largest) are skipped as NotFinite: features and training
// targets are floats, where such a value is inf (a wall_s of 1e300 used to stop training
// with a row index instead of the file and line).
inline constexpr double kMaxStoredNumber = 3.4028234663852886e38;
std::string_view skip_reason_name(SkipReason r);

struct ReadReport {
  static constexpr std::size_t kMaxExamples = 20;

  std::string path;
  std::string format;                 // "csv", "swf", "gwf"
  std::size_t lines = 0;              // physical lines read
  std::size_t rows = 0;               // rows kept in the table
  std::size_t comment_lines = 0;      // comments, header and blank lines
  std::size_t continuation_lines = 0; // extra lines of CSV records with quoted newlines
  std::array<std::size_t, kNumSkipReasons> skipped{};
  std::vector<std::string> examples;  // first kMaxExamples skipped rows, "file:line: ..."
  std::vector<std::string> warnings;  // problems with the file as a whole (unknown columns, ...)
  std::vector<std::string> notes;     // how the input was interpreted (time offsets, ...)

  std::size_t skipped_total() const;
  std::size_t skipped_count(SkipReason r) const { return skipped[static_cast<std::size_t>(r)]; }
  // Every line is a kept row, a skipped row, a comment, or part of a multi-line record.
  bool all_lines_accounted() const {
    return lines == rows + skipped_total() + comment_lines + continuation_lines;
  }
  // A reader's start: the format it reads, and `source` as the path unless the caller named one.
  void begin(std::string_view reader_format, std::string_view source) {
    format = reader_format;
    if (path.empty()) path = source;
  }
  // Counts one skipped row; `field` may be empty when the row as a whole is at fault.
  void skip(SkipReason why, std::size_t line, std::string_view field, std::string_view problem);
};

// Human-readable report: counts, skipped rows by reason, examples, warnings.
std::string format_report(const ReadReport& r);

// `s` quoted for a message, with control and non-ASCII bytes as \xNN, cut after `max` bytes.
std::string quote_for_message(std::string_view s, std::size_t max = 40);

}  // namespace ttlpred
