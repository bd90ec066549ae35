#include "data/schema.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace ttlpred {

std::optional<Field> field_by_name(std::string_view name) {
  for (const auto& f : kFields)
    if (f.name == name) return f.field;
  return std::nullopt;
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<Field> nearest_field(std::string_view name) {
  if (name.size() > 64) return std::nullopt;  // no schema name is near a long one; bounds the cost
  const std::string n = lower(name);
  std::optional<Field> best;
  std::size_t best_distance = 3;
  for (const auto& f : kFields) {
    const std::string candidate(f.name);
    const std::string& shorter = n.size() < candidate.size() ? n : candidate;
    const std::string& longer = n.size() < candidate.size() ? candidate : n;
    const bool prefix = shorter.size() >= 4 && longer.compare(0, shorter.size(), shorter) == 0;
    const std::size_t d = prefix ? 1 : edit_distance(n, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = f.field;
    }
  }
  return best;
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::Submit: return "submit";
    case Phase::Match: return "match";
    case Phase::Outcome: return "outcome";
  }
  return "?";
}

}  // namespace ttlpred
