#include "data/job_table.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ttlpred {

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
