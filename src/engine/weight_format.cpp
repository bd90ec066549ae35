#include "engine/weight_format.hpp"

namespace ttlpred::engine {

std::string_view weight_format_name(WeightFormat f) {
  switch (f) {
    case WeightFormat::F32: return "f32";
    case WeightFormat::F16: return "f16";
    case WeightFormat::BF16: return "bf16";
    case WeightFormat::QS8: return "qs8";
    case WeightFormat::F16Sp24: return "f16-sp24";
    case WeightFormat::QS8Sp24: return "qs8-sp24";
    case WeightFormat::BF16Pairs: return "bf16-pairs";
    case WeightFormat::BF16Tiles: return "bf16-tiles";
    case WeightFormat::QS8Tiles: return "qs8-tiles";
  }
  return "?";
}

}  // namespace ttlpred::engine
