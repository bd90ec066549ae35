#pragma once
// One job as plain values: what a reader fills before appending to a table, and what the
// serving path encodes. Category values are views into storage owned by someone else (the
// table's dictionaries, a parsed HTTP body), so building a record never allocates.
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "data/schema.hpp"

namespace ttlpred {

inline constexpr double kMissingNumber = std::numeric_limits<double>::quiet_NaN();

struct JobRecord {
  std::array<double, kNumFields> num;           // used for Number fields; NaN = unknown
  std::array<std::string_view, kNumFields> cat;  // used for Category fields; empty = unknown

  JobRecord() { clear(); }
  void clear() {
    num.fill(kMissingNumber);
    cat.fill(std::string_view{});
  }
  double& operator[](Field f) { return num[index_of(f)]; }
  double operator[](Field f) const { return num[index_of(f)]; }
  std::string_view& text(Field f) { return cat[index_of(f)]; }
  std::string_view text(Field f) const { return cat[index_of(f)]; }
  bool known(Field f) const {
    return is_category(f) ? !cat[index_of(f)].empty() : !std::isnan(num[index_of(f)]);
  }
};

}  // namespace ttlpred
