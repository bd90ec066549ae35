#pragma once
// Small, allocation-free parsing helpers shared by the trace readers. Inline because they
// run once per field of every row (the SWF reader's throughput target is >= 1 M rows/s).
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace ttlpred::parse {

enum class NumberStatus : std::uint8_t { Ok, NotANumber, NotFinite };

// Parses the whole of `s` as a decimal number (optional sign, digits, fraction, exponent).
// Plain integers take a fast path; anything else goes through std::from_chars. "nan",
// "inf" and values beyond double's range are NotFinite rather than numbers.
inline NumberStatus number(std::string_view s, double& out) {
  const char* p = s.data();
  const char* end = p + s.size();
  if (p != end && *p == '+') ++p;  // from_chars refuses a leading '+'
  if (p == end) return NumberStatus::NotANumber;
  {
    const char* q = p;
    const bool neg = *q == '-';
    if (neg) ++q;
    if (q != end && end - q <= 18) {
      std::int64_t v = 0;
      const char* r = q;
      while (r != end && static_cast<unsigned>(*r - '0') < 10u) v = v * 10 + (*r++ - '0');
      if (r == end) {
        out = static_cast<double>(neg ? -v : v);
        return NumberStatus::Ok;
      }
    }
  }
  double v = 0;
  const auto res = std::from_chars(p, end, v, std::chars_format::general);
  if (res.ec == std::errc::result_out_of_range) return NumberStatus::NotFinite;
  if (res.ec != std::errc{} || res.ptr != end) return NumberStatus::NotANumber;
  if (!std::isfinite(v)) return NumberStatus::NotFinite;
  out = v;
  return NumberStatus::Ok;
}

// Position of the first byte that has no business in a text trace line: ASCII controls
// other than tab, and DEL. npos when there is none.
inline std::size_t find_control_byte(std::string_view s) {
  // A branch-free pass first (it vectorizes): almost every line is clean.
  bool any = false;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    any |= (c < 0x20) & (c != '\t');
    any |= c == 0x7F;
  }
  if (!any) return std::string_view::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7F) return i;
  }
  return std::string_view::npos;
}

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return false;
    if (n - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits `line` at runs of spaces/tabs into at most `max` fields; returns the number of
// fields the line has (which may exceed `max`; only the first `max` are stored).
inline std::size_t split_blanks(std::string_view line, std::string_view* fields, std::size_t max) {
  std::size_t n = 0;
  const char* p = line.data();
  const char* end = p + line.size();
  for (;;) {
    while (p != end && is_blank(*p)) ++p;
    if (p == end) return n;
    const char* start = p;
    while (p != end && !is_blank(*p)) ++p;
    if (n < max) fields[n] = std::string_view(start, static_cast<std::size_t>(p - start));
    ++n;
  }
}

// Byte classes for the archive tokenizer: 0 field byte, 1 separator, 2 control byte.
inline constexpr auto kByteClass = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 2;
  t[0x7F] = 2;
  t[static_cast<unsigned char>(' ')] = 1;
  t[static_cast<unsigned char>('\t')] = 1;
  return t;
}();

// One pass over an SWF/GWF data line: splits at runs of spaces/tabs like split_blanks, and
// sets `control_at` to the position of the first control byte (npos when none), so the
// line is scanned once rather than twice.
inline std::size_t split_fields_checked(std::string_view line, std::string_view* fields, std::size_t max,
                                        std::size_t& control_at) {
  control_at = std::string_view::npos;
  std::size_t n = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(line.data());
  const auto* const begin = p;
  const auto* const end = p + line.size();
  for (;;) {
    while (p != end && kByteClass[*p] == 1) ++p;
    if (p == end) return n;
    const auto* start = p;
    std::uint8_t cls = 0;
    while (p != end && (cls = kByteClass[*p]) != 1) {
      if (cls == 2) [[unlikely]] {
        control_at = static_cast<std::size_t>(p - begin);
        return n;
      }
      ++p;
    }
    if (n < max) fields[n] = std::string_view(reinterpret_cast<const char*>(start), static_cast<std::size_t>(p - start));
    ++n;
  }
}

// The common archive line in one pass: fields that are all plain integers ("-1", "14400")
// separated by spaces/tabs. Stores up to `max` views and values; false as soon as any field
// is something else (then the general path, which reports problems, takes over).
inline bool split_integer_fields(std::string_view line, std::string_view* fields, double* values, std::size_t max,
                                 std::size_t& n) {
  n = 0;
  const char* p = line.data();
  const char* const end = p + line.size();
  for (;;) {
    while (p != end && (*p == ' ' || *p == '\t')) ++p;
    if (p == end) return true;
    const char* start = p;
    const bool neg = *p == '-';
    if (neg) ++p;
    const char* digits = p;
    std::int64_t v = 0;
    // At most 18 digits are accumulated (10^18 - 1 fits in 63 bits): a longer run would
    // overflow the signed accumulator; it is left to the general path, which parses it as a
    // double.
    while (p != end && static_cast<unsigned>(*p - '0') < 10u) {
      if (p - digits < 18) v = v * 10 + (*p - '0');
      ++p;
    }
    if (p == digits || p - digits > 18 || (p != end && *p != ' ' && *p != '\t')) return false;
    if (n < max) {
      fields[n] = std::string_view(start, static_cast<std::size_t>(p - start));
      values[n] = static_cast<double>(neg ? -v : v);
    }
    ++n;
  }
}

// `line` with leading blanks removed; true when it is empty or starts with `comment`.
inline bool is_comment_or_blank(std::string_view line, char comment) {
  std::size_t i = 0;
  while (i < line.size() && is_blank(line[i])) ++i;
  return i == line.size() || line[i] == comment;
}

}  // namespace ttlpred::parse
