#include "model/residual_base.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.hpp"

namespace ttlpred {

namespace {
constexpr std::uint32_t kMaxBaseColumns = 4096;
constexpr std::uint64_t kMaxGroups = 1u << 24;

std::size_t group_of(const ResidualBase& b, const std::uint32_t* cats) {
  return b.group_cat < 0 ? 0 : cats[static_cast<std::size_t>(b.group_cat)];
}
}  // namespace

double BaseColumn::hours(const float* dense_row) const {
  const double raw = static_cast<double>(dense_row[dense]) / inv_std + mean;
  // A clamp, not an error: the value is a standardized feature the encoder produced, and an
  // extrapolating estimate must not overflow the inverse.
  if (scale == BaseScale::Log1pSeconds) return std::expm1(std::clamp(raw, 0.0, 30.0)) / 3600.0;
  return std::max(raw, 0.0);
}

int ResidualBase::source(const float* dense, const std::uint32_t* cats) const {
  if (columns.empty()) return -1;
  const std::size_t g = group_of(*this, cats);
  if (g >= by_group.size()) return -1;
  const auto& chain = by_group[g];
  for (std::size_t i = 0; i < chain.size(); ++i)
    if (columns[chain[i]].known(dense)) return static_cast<int>(i);
  return -1;
}

bool ResidualBase::falls_back(const float* dense, const std::uint32_t* cats) const {
  if (columns.empty()) return false;
  const std::size_t g = group_of(*this, cats);
  return g < by_group.size() && !by_group[g].empty() && source(dense, cats) != 0;
}

double ResidualBase::base_hours(const float* dense, const std::uint32_t* cats) const {
  const int k = source(dense, cats);
  if (k < 0) return std::numeric_limits<double>::quiet_NaN();
  return columns[by_group[group_of(*this, cats)][static_cast<std::size_t>(k)]].hours(dense);
}

void ResidualBase::check_fits(std::size_t dense_width, const std::vector<std::uint32_t>& cat_cardinality,
                              const std::string& what) const {
  if (columns.empty()) return;
  for (const auto& c : columns)
    if (c.dense >= dense_width)
      throw Error(what + ": residual base column '" + c.name + "' is dense column " + std::to_string(c.dense) +
                  ", past the encoder's " + std::to_string(dense_width));
  std::size_t want = 1;
  if (group_cat >= 0) {
    const auto g = static_cast<std::size_t>(group_cat);
    if (g >= cat_cardinality.size())
      throw Error(what + ": residual base groups by categorical column " + std::to_string(g) + ", past the encoder's " +
                  std::to_string(cat_cardinality.size()));
    want = cat_cardinality[g];
  }
  if (by_group.size() != want)
    throw Error(what + ": residual base has " + std::to_string(by_group.size()) + " groups, its column has " +
                std::to_string(want) + " values");
}

std::vector<std::vector<std::string>> ResidualBase::names_by_group() const {
  std::vector<std::vector<std::string>> out;
  for (const auto& chain : by_group) {
    out.emplace_back();
    for (const std::uint32_t k : chain) out.back().push_back(columns[k].name);
  }
  return out;
}

void ResidualBase::write(BinaryWriter& w) const {
  w.put<std::int32_t>(group_cat);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(columns.size()));
  for (const auto& c : columns) {
    w.put<std::uint32_t>(c.dense);
    w.put<double>(c.mean);
    w.put<double>(c.inv_std);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(c.scale));
    w.put_string(c.name);
  }
  w.put<std::uint32_t>(static_cast<std::uint32_t>(by_group.size()));
  for (const auto& chain : by_group) w.put_vector(chain);
}

ResidualBase ResidualBase::read(BinaryReader& r) {
  ResidualBase b;
  b.group_cat = r.get<std::int32_t>();
  if (b.group_cat < -1) r.fail("residual base group column " + std::to_string(b.group_cat));
  const auto n = r.get<std::uint32_t>();
  if (n > kMaxBaseColumns) r.fail("residual base claims " + std::to_string(n) + " columns");
  for (std::uint32_t i = 0; i < n; ++i) {
    BaseColumn c;
    c.dense = r.get<std::uint32_t>();
    c.mean = r.get<double>();
    c.inv_std = r.get<double>();
    const auto scale = r.get<std::uint8_t>();
    c.name = r.get_string(256);
    if (scale > static_cast<std::uint8_t>(BaseScale::Log1pSeconds))
      r.fail("residual base column '" + c.name + "': unknown scale " + std::to_string(scale));
    c.scale = static_cast<BaseScale>(scale);
    if (!std::isfinite(c.mean) || !(c.inv_std > 0) || !std::isfinite(c.inv_std))
      r.fail("residual base column '" + c.name + "': non-finite mean or non-positive scale");
    b.columns.push_back(std::move(c));
  }
  const auto groups = r.get<std::uint32_t>();
  if (groups > kMaxGroups) r.fail("residual base claims " + std::to_string(groups) + " groups");
  for (std::uint32_t g = 0; g < groups; ++g) {
    b.by_group.push_back(r.get_vector<std::uint32_t>(kMaxBaseColumns));
    for (const std::uint32_t k : b.by_group.back())
      if (k >= b.columns.size())
        r.fail("residual base names column " + std::to_string(k) + " of " + std::to_string(b.columns.size()));
  }
  if (!b.columns.empty() && b.by_group.empty()) r.fail("residual base has columns but no groups");
  return b;
}

}  // namespace ttlpred
