#pragma once
// Golden files: a command's whole text output checked against a committed file under
// tests/golden/, not a substring of it. Numbers are compared to a relative 1e-4 (the
// outputs' own rounding, one unit in the last printed place of a rounded value), every
// other character exactly: a model's float results differ in the last bits between
// instruction sets and compilers' contraction of multiply-adds, its text and layout never.
//
// Refresh after an intended change of output (then review the diff like code):
//   TTLPRED_UPDATE_GOLDEN=1 ctest --preset release -R cli.
// which rewrites the files in the source tree instead of comparing.
#include <string>

namespace ttlpred::test {

// Path of tests/golden/<name> in the source tree.
std::string golden_path(const std::string& name);
// "" when `actual` matches tests/golden/<name> (or was written there under
// TTLPRED_UPDATE_GOLDEN=1); else the first difference, line and column, in words.
std::string golden_mismatch(const std::string& name, const std::string& actual);

}  // namespace ttlpred::test
