#pragma once
// The history estimate a residual target is measured from. With a base, the network does
// not regress a job's run time but its difference from one of its own history estimates
// (a work rate times the job's work, a key's recent mean run time ...), in the target's
// standardized space: z = z(actual) - z(base), prediction = decode(net + z(base)).
//
// Why: a network handed that estimate as one input among a hundred does not reproduce it.
// On the synthetic ALICE trace at match time one scaled (production, job type) work rate
// beat the network on every job type that had one (HL_MERGE 0.093 h against 0.362 h,
// docs/ACCURACY.md "Where the network loses to its own history"): regressing the residual
// makes "the estimate, unchanged" the network's zero output instead of a value it must learn.
//
// The base is read from the encoded row, so every backend's output takes it the same way
// (no change to the network or its kernels): a dense history column, de-standardized with the
// encoder's own mean and scale. An unknown value is exactly 0 in the encoded row (the
// encoder's rule for a missing value), so each group (a value of one categorical column, the
// job type) holds an ordered list of columns: the base is the first one the row knows (a
// production's rate, else its package's ...), and a row that knows none has no base: the
// network's output is then its whole standardized target, as without a residual (the columns
// themselves stay inputs, so the network sees which case it is in).
#include <cstdint>
#include <string>
#include <vector>

#include "util/binary_io.hpp"

namespace ttlpred {

// How a base column's de-standardized value reads as hours.
enum class BaseScale : std::uint8_t {
  Hours = 0,       // the value is hours (a history "..._hours" statistic)
  Log1pSeconds = 1,  // the value is log1p(seconds) (the history's log statistics)
};

struct BaseColumn {
  std::uint32_t dense = 0;  // position in the encoded dense row
  double mean = 0.0;        // the encoder's standardization of that column
  double inv_std = 1.0;     // > 0
  BaseScale scale = BaseScale::Hours;
  std::string name;         // the feature's name (for reports)
  bool operator==(const BaseColumn&) const = default;
  // Whether the row holds a value here: the encoder writes exactly 0 for an unknown one.
  bool known(const float* dense_row) const { return dense_row[dense] != 0.0f; }
  // This column's value in one encoded row, in hours (>= 0).
  double hours(const float* dense) const;
};

struct ResidualBase {
  // Categorical column (position in the encoded row) whose value picks the base; -1: the
  // same base for every row (by_group has one entry).
  std::int32_t group_cat = -1;
  std::vector<BaseColumn> columns;
  // Per category index of group_cat (its cardinality entries) or one entry: indices into
  // `columns`, the first known one is the base; empty for no base.
  std::vector<std::vector<std::uint32_t>> by_group;

  bool empty() const { return columns.empty(); }
  // Which of its group's columns one encoded row takes as its base: the position in the
  // group's list of the first one it knows, -1 when it knows none (or the list is empty).
  int source(const float* dense, const std::uint32_t* cats) const;
  // Whether the row's group has a list and the row does not know its first column: the job
  // of a production with no outcome yet. The safe TTL calibrates such rows apart
  // (model/safe_ttl.hpp, kFallbackStratum): their errors are those of a first guess.
  bool falls_back(const float* dense, const std::uint32_t* cats) const;
  // The base of one encoded row in hours (>= 0), or NaN when the row has none.
  double base_hours(const float* dense, const std::uint32_t* cats) const;
  // Throws Error (naming `what`) unless every column and the group column fit the given
  // encoded widths and by_group matches the group column's cardinality.
  void check_fits(std::size_t dense_width, const std::vector<std::uint32_t>& cat_cardinality,
                  const std::string& what) const;
  // The columns' names per group, in order, for reports ({"h_production_rate_x_events_hours",
  // "h_type_package_rate_x_events_hours"}); by_group.size() lists.
  std::vector<std::vector<std::string>> names_by_group() const;

  void write(BinaryWriter& w) const;
  static ResidualBase read(BinaryReader& r);  // validates what it can without the encoder
  bool operator==(const ResidualBase&) const = default;
};

}  // namespace ttlpred
