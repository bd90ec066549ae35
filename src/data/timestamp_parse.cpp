#include "data/timestamp_parse.hpp"

#include <cstdint>

namespace ttlpred::parse {

namespace {

// Reads exactly `digits` decimal digits at `pos`.
bool fixed_digits(std::string_view s, std::size_t& pos, int digits, int& out) {
  if (pos + static_cast<std::size_t>(digits) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < digits; ++i) {
    const char c = s[pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += static_cast<std::size_t>(digits);
  out = v;
  return true;
}

// Reads one or more decimal digits (at most 9, so no overflow).
bool some_digits(std::string_view s, std::size_t& pos, std::int64_t& out) {
  const std::size_t start = pos;
  std::int64_t v = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 9) v = v * 10 + (s[pos++] - '0');
  if (pos == start || (pos < s.size() && s[pos] >= '0' && s[pos] <= '9')) return false;
  out = v;
  return true;
}

// Digits after a decimal point, as a fraction in [0, 1).
bool fraction(std::string_view s, std::size_t& pos, double& out) {
  const std::size_t start = pos;
  double scale = 0.1, v = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    v += (s[pos++] - '0') * scale;
    scale /= 10;
  }
  out = v;
  return pos > start;
}

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153u * static_cast<unsigned>(m + (m > 2 ? -3 : 9)) + 2u) / 5u + static_cast<unsigned>(d) - 1u;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

bool iso8601_seconds(std::string_view s, double& out) {
  std::size_t pos = 0;
  int y = 0, mo = 0, d = 0;
  if (!fixed_digits(s, pos, 4, y) || pos >= s.size() || s[pos++] != '-' || !fixed_digits(s, pos, 2, mo) ||
      pos >= s.size() || s[pos++] != '-' || !fixed_digits(s, pos, 2, d))
    return false;
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)) return false;
  double seconds = static_cast<double>(days_from_civil(y, mo, d)) * 86400.0;
  if (pos == s.size()) {
    out = seconds;
    return true;
  }
  if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return false;
  ++pos;
  int h = 0, mi = 0, sec = 0;
  double frac = 0;
  if (!fixed_digits(s, pos, 2, h) || pos >= s.size() || s[pos++] != ':' || !fixed_digits(s, pos, 2, mi)) return false;
  if (pos < s.size() && s[pos] == ':') {
    ++pos;
    if (!fixed_digits(s, pos, 2, sec)) return false;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      if (!fraction(s, pos, frac)) return false;
    }
  }
  if (h > 23 || mi > 59 || sec > 60) return false;
  seconds += h * 3600.0 + mi * 60.0 + sec + frac;
  if (pos < s.size()) {
    const char z = s[pos++];
    if (z == 'Z' || z == 'z') {
      if (pos != s.size()) return false;
    } else if (z == '+' || z == '-') {
      int oh = 0, om = 0;
      if (!fixed_digits(s, pos, 2, oh)) return false;
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (pos < s.size() && !fixed_digits(s, pos, 2, om)) return false;
      if (pos != s.size() || oh > 23 || om > 59) return false;
      const double offset = oh * 3600.0 + om * 60.0;
      seconds += z == '+' ? -offset : offset;  // local time minus its offset is UTC
    } else {
      return false;
    }
  }
  if (seconds < 0) return false;
  out = seconds;
  return true;
}

bool slurm_duration_seconds(std::string_view s, double& out) {
  if (s.empty()) return false;
  std::size_t pos = 0;
  std::int64_t days = 0;
  bool has_days = false;
  if (const auto dash = s.find('-'); dash != std::string_view::npos) {
    std::size_t p = 0;
    if (!some_digits(s.substr(0, dash), p, days) || p != dash) return false;
    has_days = true;
    pos = dash + 1;
  }
  // Up to three ':'-separated parts; the last may carry a fraction.
  std::int64_t parts[3] = {0, 0, 0};
  int n = 0;
  double frac = 0;
  for (;;) {
    if (n == 3 || !some_digits(s, pos, parts[n])) return false;
    ++n;
    if (pos == s.size()) break;
    if (s[pos] == '.') {
      ++pos;
      if (!fraction(s, pos, frac) || pos != s.size()) return false;
      break;
    }
    if (s[pos++] != ':') return false;
  }
  double h = 0, m = 0, sec = 0;
  if (has_days) {  // D-H, D-H:M, D-H:M:S
    h = static_cast<double>(parts[0]);
    if (n >= 2) m = static_cast<double>(parts[1]);
    if (n == 3) sec = static_cast<double>(parts[2]);
  } else if (n == 1) {  // M
    m = static_cast<double>(parts[0]);
  } else if (n == 2) {  // M:S
    m = static_cast<double>(parts[0]);
    sec = static_cast<double>(parts[1]);
  } else {  // H:M:S
    h = static_cast<double>(parts[0]);
    m = static_cast<double>(parts[1]);
    sec = static_cast<double>(parts[2]);
  }
  if (frac != 0 && (has_days ? n != 3 : n == 1)) return false;  // a fraction belongs to seconds
  out = static_cast<double>(days) * 86400.0 + h * 3600.0 + m * 60.0 + sec + frac;
  return true;
}

}  // namespace ttlpred::parse
