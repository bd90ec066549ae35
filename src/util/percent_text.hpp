#pragma once
// A share written as a percentage with a fixed number of decimals, for reports and warnings:
// percent_text(0.1234, 2) is "12.34%". (The HTML report's figure notes keep their own
// three-significant-digit form, cli::percent_text in report_figures.cpp.)
#include <cstdio>
#include <string>

namespace ttlpred {

inline std::string percent_text(double share, int decimals) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f%%", decimals, 100 * share);
  return b;
}

}  // namespace ttlpred
