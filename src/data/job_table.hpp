#pragma once
// The in-memory job table: one column per schema field, numbers as double (NaN = unknown),
// categories as 32-bit codes into a per-column dictionary. Columnar so that feature
// encoding and statistics run over contiguous arrays.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/job_record.hpp"
#include "data/schema.hpp"

namespace ttlpred {

inline constexpr std::uint32_t kMissingCode = 0xFFFFFFFFu;

namespace detail {
template <FieldKind K>
constexpr auto field_indices() {
  constexpr std::size_t n = [] {
    std::size_t c = 0;
    for (const auto& f : kFields) c += f.kind == K;
    return c;
  }();
  std::array<std::size_t, n> out{};
  std::size_t j = 0;
  for (const auto& f : kFields)
    if (f.kind == K) out[j++] = index_of(f.field);
  return out;
}
}  // namespace detail
inline constexpr auto kNumberFieldIndices = detail::field_indices<FieldKind::Number>();
inline constexpr auto kCategoryFieldIndices = detail::field_indices<FieldKind::Category>();

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// Interns strings of one categorical column; code i names values()[i].
class Dictionary {
 public:
  std::uint32_t intern(std::string_view s);
  // kMissingCode when absent; never inserts.
  std::uint32_t find(std::string_view s) const;
  std::string_view value(std::uint32_t code) const {
    return code == kMissingCode ? std::string_view{} : std::string_view(values_[code]);
  }
  std::size_t size() const { return values_.size(); }
  const std::vector<std::string>& values() const { return values_; }

 private:
  std::vector<std::string> values_;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> index_;
};

// Whole columns for JobTable::append_columns (views: the caller keeps the data alive).
struct NumberColumnIn {
  Field field;
  std::span<const double> values;  // NaN = unknown; an infinity is refused
};
struct CategoryColumnIn {
  Field field;
  std::span<const std::int64_t> codes;        // per row, an index into `values`; -1 = unknown
  std::span<const std::string_view> values;   // "" = unknown, as an empty CSV cell
};

class JobTable {
 public:
  std::size_t rows() const { return rows_; }
  void reserve(std::size_t n);

  // Appends one row; unknown values stay missing.
  void append(const JobRecord& r);
  // Appends whole columns at once, for callers that hold data by column (a DataFrame): the
  // same table append() builds from the same values row by row, bit for bit (each
  // dictionary still grows in order of first appearance), but each distinct category value
  // is hashed once instead of once per row. Fields not given stay unknown. Every column is
  // checked before the table changes; a bad one throws Error naming the column (the field)
  // and the row: an infinite number, a code outside `values`, a column whose length differs
  // from the first one's, a field given twice or as the other kind.
  void append_columns(std::span<const NumberColumnIn> numbers, std::span<const CategoryColumnIn> categories);
  // Fills `out` with row i (category views point into this table's dictionaries).
  void record(std::size_t i, JobRecord& out) const;

  std::span<const double> num(Field f) const { return num_[index_of(f)]; }
  std::span<double> num_mut(Field f) { return num_[index_of(f)]; }
  std::span<const std::uint32_t> codes(Field f) const { return codes_[index_of(f)]; }
  const Dictionary& dict(Field f) const { return dicts_[index_of(f)]; }
  std::string_view text(Field f, std::size_t row) const { return dict(f).value(codes(f)[row]); }

  // True when at least one row has a known value in this column.
  bool has_values(Field f) const;
  // A new table holding rows `order[0..]` of this one, in that order (dictionaries kept).
  JobTable select(std::span<const std::size_t> order) const;
  // Row indices sorted stably by submit time (unknown submit times last).
  std::vector<std::size_t> submit_order() const;

 private:
  std::size_t rows_ = 0;
  std::array<std::vector<double>, kNumFields> num_;  // empty for Category fields
  std::array<std::vector<std::uint32_t>, kNumFields> codes_;  // empty for Number fields
  std::array<Dictionary, kNumFields> dicts_;
  std::array<std::uint32_t, kNumFields> last_code_ = make_missing_codes();  // append()'s one-entry cache

  static constexpr std::array<std::uint32_t, kNumFields> make_missing_codes() {
    std::array<std::uint32_t, kNumFields> a{};
    a.fill(kMissingCode);
    return a;
  }
};

}  // namespace ttlpred
