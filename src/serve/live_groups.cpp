#include "serve/live_groups.hpp"

#include "predict/predictor.hpp"

namespace ttlpred::serve {

std::string live_group_column(const Predictor& predictor) {
  return predictor.group_cat_index() < 0 ? std::string() : predictor.model().safe_ttl.group_column;
}

std::string live_group_name(const Predictor& predictor, std::uint32_t group) {
  const int column = predictor.group_cat_index();
  const std::uint32_t bucket = live_group_bucket(group);
  if (column < 0 || bucket == kNoGroup) return {};
  const auto& vocabulary = predictor.encoder().category_columns()[static_cast<std::size_t>(column)].vocabulary;
  if (bucket == 0 || bucket > vocabulary.size()) return kOtherGroup;
  return vocabulary[bucket - 1];
}

}  // namespace ttlpred::serve
