#include "learn/duration.hpp"

#include <cmath>
#include <cstdio>

#include "util/error.hpp"

namespace ttlpred {
namespace {

struct Unit {
  char suffix;
  double seconds;
};
constexpr Unit kUnits[] = {{'w', 604800}, {'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};

}  // namespace

double parse_duration(const std::string& text, const char* option) {
  auto bad = [&] {
    return Error(std::string(option) + ": '" + text + "' is not a duration (a number with s, m, h, d or w, e.g. 6h, 7d)");
  };
  if (text.empty()) throw bad();
  double scale = 1;
  std::string number = text;
  for (const Unit& u : kUnits)
    if (text.back() == u.suffix) {
      scale = u.seconds;
      number.pop_back();
      break;
    }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (used != number.size() || !std::isfinite(v) || v < 0) throw bad();
  return v * scale;
}

std::string duration_text(double seconds) {
  char buf[48];
  for (const Unit& u : kUnits)
    if (seconds >= u.seconds && std::fmod(seconds, u.seconds) == 0) {
      std::snprintf(buf, sizeof buf, "%.0f%c", seconds / u.seconds, u.suffix);
      return buf;
    }
  std::snprintf(buf, sizeof buf, "%gs", seconds);
  return buf;
}

}  // namespace ttlpred
