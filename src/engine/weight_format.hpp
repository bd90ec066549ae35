#pragma once
// The weight layouts the CPU kernels read (their byte layouts are in engine/kernels.hpp).
// A public name of its own because the variant traits (engine/variant.hpp) say which layout
// each variant packs on each instruction set, and kernel sets are registered by it.
#include <cstdint>
#include <string_view>

namespace ttlpred::engine {

enum class WeightFormat : std::uint8_t { F32, F16, BF16, QS8, F16Sp24, QS8Sp24, BF16Pairs, BF16Tiles, QS8Tiles };
inline constexpr int kNumWeightFormats = 9;

inline constexpr WeightFormat kAllWeightFormats[kNumWeightFormats] = {
    WeightFormat::F32,     WeightFormat::F16,       WeightFormat::BF16,      WeightFormat::QS8,     WeightFormat::F16Sp24,
    WeightFormat::QS8Sp24, WeightFormat::BF16Pairs, WeightFormat::BF16Tiles, WeightFormat::QS8Tiles};

std::string_view weight_format_name(WeightFormat f);  // "f32", "qs8-sp24", "bf16-pairs", ...

}  // namespace ttlpred::engine
