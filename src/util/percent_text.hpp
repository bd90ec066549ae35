#pragma once
// A share written as a percentage, for reports and warnings: percent_text(0.1234, 2) is
// "12.34%". One formatting rule for every text that prints a rate.
#include <cstdio>
#include <string>

namespace ttlpred {

inline std::string percent_text(double share, int decimals) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f%%", decimals, 100 * share);
  return b;
}

}  // namespace ttlpred
