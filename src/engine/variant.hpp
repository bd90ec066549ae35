#pragma once
// The numeric variants a model can be compiled to, on any backend. Each is a different trade
// of accuracy, memory and speed; all are selectable by name in every command that runs a
// model. The traits table (variant_traits) is the one place that says what a variant is:
// plans, the CUDA backend, fitting, the predictor and every --help text read it, so a
// variant added there is known everywhere.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/isa.hpp"
#include "engine/weight_format.hpp"

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

// A compression a model can be fine-tuned for (train/compression.hpp): the variant that
// serves it is the one whose traits name it.
enum class Compression { None, QatInt8, Sparse24, QatInt8Sparse24 };

struct VariantTraits {
  Variant variant;
  std::string_view name;     // the command-line and JSON name
  std::string_view summary;  // one line, for --help
  bool fused;                // packed, fused epilogues, folded embeddings (all but the baseline)
  bool int8;                 // s8 weights and u8 activations
  bool dynamic;              // int8 activation ranges found per call, not calibrated
  bool sparse;               // runs the 2:4-pruned model (quant::prune_2_4)
  bool needs_calibration;    // needs activation ranges (CompileOptions::calibration)
  Compression serves;        // the fine-tuning this variant is the serving target of, if any
  WeightFormat format;       // weights on every ISA but those below
  // ISAs with a layout of their own (AVX512-BF16 pairs, AMX tiles), at most two.
  struct IsaFormat {
    Isa isa;
    WeightFormat format;
  };
  IsaFormat isa_formats[2];
  int n_isa_formats;
};

// Every variant, in the order of the enum (and of `--variants all`).
std::span<const VariantTraits> all_variant_traits();
const VariantTraits& variant_traits(Variant v);

inline constexpr Variant kAllVariants[] = {
    Variant::Fp32,       Variant::Fp32Fused,   Variant::Fp16,         Variant::Bf16,
    Variant::Int8Dynamic, Variant::Int8Static, Variant::Fp16Sparse24, Variant::Int8Sparse24};

std::string_view variant_name(Variant v);
// Throws ttlpred::Error listing the known names when `name` is not one of them.
Variant variant_from_name(std::string_view name);
// "all" or a comma-separated list of names; throws ttlpred::Error on an unknown name.
std::vector<Variant> variants_from_list(std::string_view list);
// "fp32, fp32-fused, fp16, ..." for help texts and messages.
std::string variant_names_list();
// One "  name  summary" line per variant, for the --help of commands that take variants.
std::string variant_help_lines();

// Whether the variant needs calibrated activation ranges (CompileOptions::calibration).
bool variant_needs_calibration(Variant v);
// The layout the variant packs its weights in on `isa`.
WeightFormat variant_weight_format(Variant v, Isa isa);
// The variant a model fine-tuned for `c` is served with (fp32-fused for none).
Variant variant_serving(Compression c);

}  // namespace ttlpred::engine
