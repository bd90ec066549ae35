#include "data/schema.hpp"

namespace ttlpred {

std::optional<Field> field_by_name(std::string_view name) {
  for (const auto& f : kFields)
    if (f.name == name) return f.field;
  return std::nullopt;
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
