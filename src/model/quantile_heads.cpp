#include "model/quantile_heads.hpp"

#include <charconv>
#include <cstdio>

#include "util/error.hpp"

namespace ttlpred {

int QuantileHeads::index_of(double level) const {
  for (std::size_t j = 0; j < levels.size(); ++j)
    if (std::abs(static_cast<double>(levels[j]) - level) < 1e-6) return static_cast<int>(j);
  return -1;
}

void QuantileHeads::check(const std::string& what) const {
  if (levels.size() > kMaxQuantileHeads)
    throw Error(what + ": " + std::to_string(levels.size()) + " quantile levels, at most " +
                std::to_string(kMaxQuantileHeads));
  for (std::size_t j = 0; j < levels.size(); ++j) {
    if (!(levels[j] > 0.0f && levels[j] < 1.0f))
      throw Error(what + ": quantile level " + std::to_string(levels[j]) + " is not in (0, 1)");
    if (j > 0 && !(levels[j] > levels[j - 1]))
      throw Error(what + ": quantile levels must be ascending and distinct (" + std::to_string(levels[j - 1]) +
                  " then " + std::to_string(levels[j]) + ")");
  }
}

void QuantileHeads::write(BinaryWriter& w) const { w.put_vector(levels); }

QuantileHeads QuantileHeads::read(BinaryReader& r) {
  QuantileHeads h;
  h.levels = r.get_vector<float>(kMaxQuantileHeads);
  try {
    h.check("quantile heads");
  } catch (const Error& e) {
    r.fail(e.what());
  }
  return h;
}

QuantileHeads parse_quantile_levels(const std::string& text) {
  QuantileHeads h;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    float v = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size())
      throw Error("--quantiles: '" + item + "' is not a number (expected levels such as 0.5,0.9,0.99)");
    h.levels.push_back(v);
    start = end + 1;
  }
  h.check("--quantiles");
  return h;
}

std::string quantile_levels_text(const QuantileHeads& heads) {
  std::string s;
  for (float v : heads.levels) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    if (!s.empty()) s += ',';
    s += buf;
  }
  return s;
}

}  // namespace ttlpred
