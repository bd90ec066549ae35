#pragma once
// The numeric variants a model can be compiled to. Each is a different trade of accuracy,
// memory and speed; all are selectable by name in every command that runs a model.
#include <string>
#include <string_view>
#include <vector>

namespace ttlpred::engine {

enum class Variant {
  Fp32,         // plain baseline: layer by layer, separate bias and activation passes
  Fp32Fused,    // compiled plan: packed weights, fused epilogues, folded embeddings
  Fp16,         // 16-bit IEEE half weights, fp32 arithmetic
  Bf16,         // bfloat16 weights, fp32 arithmetic
  Int8Dynamic,  // s8 per-channel weights, u8 activations with per-row scales found per call
  Int8Static,   // s8 weights, u8 activations with calibrated scales, requantization fused
  Fp16Sparse24, // 2:4 structured-sparse half weights (values + 2-bit indices)
  Int8Sparse24, // 2:4 structured-sparse s8 weights, static activation scales
};

inline constexpr Variant kAllVariants[] = {
    Variant::Fp32,       Variant::Fp32Fused,   Variant::Fp16,         Variant::Bf16,
    Variant::Int8Dynamic, Variant::Int8Static, Variant::Fp16Sparse24, Variant::Int8Sparse24};

std::string_view variant_name(Variant v);
// Throws ttlpred::Error listing the known names when `name` is not one of them.
Variant variant_from_name(std::string_view name);
// "all" or a comma-separated list of names; throws ttlpred::Error on an unknown name.
std::vector<Variant> variants_from_list(std::string_view list);

// Whether the variant needs calibrated activation ranges (CompileOptions::calibration).
bool variant_needs_calibration(Variant v);

}  // namespace ttlpred::engine
