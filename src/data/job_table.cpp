#include "data/job_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>

#include "data/read_report.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

std::string column_message(Field f, const std::string& problem) {
  return "column '" + std::string(info(f).name) + "': " + problem;
}

}  // namespace

std::uint32_t Dictionary::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  const auto code = static_cast<std::uint32_t>(values_.size());
  values_.emplace_back(s);
  index_.emplace(values_.back(), code);
  return code;
}

std::uint32_t Dictionary::find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kMissingCode : it->second;
}

void JobTable::reserve(std::size_t n) {
  for (const auto& fi : kFields) {
    const auto k = index_of(fi.field);
    if (fi.kind == FieldKind::Number) num_[k].reserve(n);
    else codes_[k].reserve(n);
  }
}

void JobTable::append(const JobRecord& r) {
  for (std::size_t k : kNumberFieldIndices) num_[k].push_back(r.num[k]);
  for (std::size_t k : kCategoryFieldIndices) {
    const std::string_view v = r.cat[k];
    std::uint32_t code = kMissingCode;
    if (!v.empty()) {
      // Consecutive jobs mostly share their user, production, site ...: compare with the
      // previous row's value before hashing.
      const std::uint32_t last = last_code_[k];
      code = (last != kMissingCode && dicts_[k].value(last) == v) ? last : dicts_[k].intern(v);
      last_code_[k] = code;
    }
    codes_[k].push_back(code);
  }
  ++rows_;
}

void JobTable::append_columns(std::span<const NumberColumnIn> numbers, std::span<const CategoryColumnIn> categories) {
  std::optional<std::size_t> n;
  std::array<bool, kNumFields> given{};
  const auto claim = [&](Field f, FieldKind kind, std::size_t length) {
    if (info(f).kind != kind)
      throw Error(column_message(f, kind == FieldKind::Number ? "given as numbers, but the field is a category"
                                                               : "given as categories, but the field is a number"));
    if (given[index_of(f)]) throw Error(column_message(f, "given twice"));
    given[index_of(f)] = true;
    if (n && length != *n)
      throw Error(column_message(f, "has " + std::to_string(length) + " rows, the other columns " + std::to_string(*n)));
    n = length;
  };
  for (const NumberColumnIn& c : numbers) {
    claim(c.field, FieldKind::Number, c.values.size());
    for (std::size_t i = 0; i < c.values.size(); ++i)
      if (std::isinf(c.values[i])) {
        throw Error(column_message(c.field, "row " + std::to_string(i) + " is infinite (NaN means unknown; inf is refused)"));
      } else if (c.values[i] < 0) {
        // What the trace readers skip as a negative value: every number field is a count, an
        // amount, a speed or a time, and -4 cores would reach the model as a real job.
        char value[32];
        std::snprintf(value, sizeof value, "%g", c.values[i]);
        throw Error(column_message(c.field, "row " + std::to_string(i) + " is negative (" + value +
                                                "): the field is a count, amount or time (NaN means unknown)"));
      } else if (c.values[i] > kMaxStoredNumber) {
        throw Error(column_message(c.field, "row " + std::to_string(i) + " is above 3.4e38, the largest number the model stores"));
      }
  }
  for (const CategoryColumnIn& c : categories) {
    claim(c.field, FieldKind::Category, c.codes.size());
    const auto count = static_cast<std::int64_t>(c.values.size());
    for (std::size_t i = 0; i < c.codes.size(); ++i)
      if (c.codes[i] < -1 || c.codes[i] >= count)
        throw Error(column_message(c.field, "row " + std::to_string(i) + " has code " + std::to_string(c.codes[i]) +
                                                " outside -1.." + std::to_string(count - 1)));
  }
  if (!n) return;
  const std::size_t base = rows_, rows = *n;
  // Every column grows by `rows` unknowns first; the given ones are then overwritten.
  for (std::size_t k : kNumberFieldIndices) num_[k].resize(base + rows, kMissingNumber);
  for (std::size_t k : kCategoryFieldIndices) codes_[k].resize(base + rows, kMissingCode);
  for (const NumberColumnIn& c : numbers)
    std::copy(c.values.begin(), c.values.end(), num_[index_of(c.field)].begin() + static_cast<std::ptrdiff_t>(base));
  constexpr std::uint32_t kNotSeen = kMissingCode - 1;
  for (const CategoryColumnIn& c : categories) {
    const auto k = index_of(c.field);
    // A value is interned when its first row comes, so codes are numbered as append() numbers them.
    std::vector<std::uint32_t> code_of(c.values.size(), kNotSeen);
    std::uint32_t* out = codes_[k].data() + base;
    for (std::size_t i = 0; i < rows; ++i) {
      if (c.codes[i] < 0) continue;
      const auto v = static_cast<std::size_t>(c.codes[i]);
      if (code_of[v] == kNotSeen) code_of[v] = c.values[v].empty() ? kMissingCode : dicts_[k].intern(c.values[v]);
      out[i] = code_of[v];
    }
  }
  rows_ = base + rows;
}

void JobTable::record(std::size_t i, JobRecord& out) const {
  for (const auto& fi : kFields) {
    const auto k = index_of(fi.field);
    if (fi.kind == FieldKind::Number) out.num[k] = num_[k][i];
    else out.cat[k] = dicts_[k].value(codes_[k][i]);
  }
}

bool JobTable::has_values(Field f) const {
  const auto k = index_of(f);
  if (is_category(f)) return std::any_of(codes_[k].begin(), codes_[k].end(), [](auto c) { return c != kMissingCode; });
  return std::any_of(num_[k].begin(), num_[k].end(), [](double v) { return !std::isnan(v); });
}

JobTable JobTable::select(std::span<const std::size_t> order) const {
  JobTable t;
  t.rows_ = order.size();
  t.dicts_ = dicts_;
  for (const auto& fi : kFields) {
    const auto k = index_of(fi.field);
    if (fi.kind == FieldKind::Number) {
      t.num_[k].resize(order.size());
      for (std::size_t i = 0; i < order.size(); ++i) t.num_[k][i] = num_[k][order[i]];
    } else {
      t.codes_[k].resize(order.size());
      for (std::size_t i = 0; i < order.size(); ++i) t.codes_[k][i] = codes_[k][order[i]];
    }
  }
  return t;
}

std::vector<std::size_t> JobTable::submit_order() const {
  std::vector<std::size_t> order(rows_);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto& t = num_[index_of(Field::SubmitTime)];
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool na = std::isnan(t[a]), nb = std::isnan(t[b]);
    if (na || nb) return !na && nb;
    return t[a] < t[b];
  });
  return order;
}

}  // namespace ttlpred
