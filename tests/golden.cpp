#include "golden.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ttlpred::test {
namespace {

bool starts_number(const std::string& s, std::size_t i) {
  const char c = s[i];
  if (c >= '0' && c <= '9') return true;
  return c == '-' && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9';
}

// Position (line:column, 1-based) of byte `i` of `s`.
std::string where(const std::string& s, std::size_t i) {
  std::size_t line = 1, col = 1;
  for (std::size_t k = 0; k < i && k < s.size(); ++k) {
    if (s[k] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

std::string excerpt(const std::string& s, std::size_t i) {
  const std::size_t from = s.rfind('\n', i == 0 ? 0 : i - 1);
  const std::size_t start = from == std::string::npos ? 0 : from + 1;
  const std::size_t end = s.find('\n', i);
  return s.substr(start, (end == std::string::npos ? s.size() : end) - start);
}

}  // namespace

std::string golden_path(const std::string& name) { return std::string(TTLPRED_GOLDEN_DIR) + "/" + name; }

std::string golden_mismatch(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  if (const char* u = std::getenv("TTLPRED_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << actual;
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": missing (write it with TTLPRED_UPDATE_GOLDEN=1)";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string expected = buf.str();
  std::size_t i = 0, j = 0;
  while (i < expected.size() && j < actual.size()) {
    if (starts_number(expected, i) && starts_number(actual, j) && (i == 0 || !std::isalpha(static_cast<unsigned char>(expected[i - 1])))) {
      char* e_end = nullptr;
      char* a_end = nullptr;
      const double e = std::strtod(expected.c_str() + i, &e_end);
      const double a = std::strtod(actual.c_str() + j, &a_end);
      if (!(std::abs(a - e) <= 1e-4 * std::max(std::abs(e), 1.0)))
        return path + ":" + where(expected, i) + ": expected " + expected.substr(i, static_cast<std::size_t>(e_end - expected.c_str()) - i) +
               ", got " + actual.substr(j, static_cast<std::size_t>(a_end - actual.c_str()) - j) + "\n  expected line: " +
               excerpt(expected, i) + "\n  actual line:   " + excerpt(actual, j);
      i = static_cast<std::size_t>(e_end - expected.c_str());
      j = static_cast<std::size_t>(a_end - actual.c_str());
      continue;
    }
    if (expected[i] != actual[j])
      return path + ":" + where(expected, i) + ": text differs\n  expected line: " + excerpt(expected, i) +
             "\n  actual line:   " + excerpt(actual, j);
    ++i;
    ++j;
  }
  if (i != expected.size() || j != actual.size())
    return path + ": lengths differ at " + where(expected, i) + " (expected " + std::to_string(expected.size()) +
           " bytes, got " + std::to_string(actual.size()) + ")";
  return "";
}

}  // namespace ttlpred::test
