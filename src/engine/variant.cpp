#include "engine/variant.hpp"

#include "util/error.hpp"

namespace ttlpred::engine {

namespace {

using F = WeightFormat;

// The table. The enum's order: variant_traits indexes it by the enum's value.
constexpr VariantTraits kTraits[] = {
    {Variant::Fp32, "fp32", "baseline: layer by layer, separate bias and activation passes", false, false, false,
     false, false, Compression::None, F::F32, {}, 0},
    {Variant::Fp32Fused, "fp32-fused", "packed fp32 weights, fused epilogues, folded embeddings", true, false, false,
     false, false, Compression::None, F::F32, {}, 0},
    {Variant::Fp16, "fp16", "IEEE half weights, fp32 arithmetic", true, false, false, false, false, Compression::None,
     F::F16, {}, 0},
    {Variant::Bf16, "bf16", "bfloat16 weights (bf16 arithmetic on AVX512-BF16 and AMX)", true, false, false, false,
     false, Compression::None, F::BF16, {{Isa::Avx512Bf16, F::BF16Pairs}, {Isa::Avx512Amx, F::BF16Tiles}}, 2},
    {Variant::Int8Dynamic, "int8-dynamic", "s8 weights, u8 activations scaled per row and call", true, true, true,
     false, false, Compression::None, F::QS8, {{Isa::Avx512Amx, F::QS8Tiles}, {}}, 1},
    {Variant::Int8Static, "int8-static", "s8 weights, u8 activations on calibrated ranges (needs calibration)", true,
     true, false, false, true, Compression::QatInt8, F::QS8, {{Isa::Avx512Amx, F::QS8Tiles}, {}}, 1},
    {Variant::Fp16Sparse24, "fp16-2:4", "2:4 structured-sparse half weights", true, false, false, true, false,
     Compression::Sparse24, F::F16Sp24, {}, 0},
    {Variant::Int8Sparse24, "int8-2:4", "2:4 structured-sparse s8 weights, calibrated u8 activations", true, true,
     false, true, true, Compression::QatInt8Sparse24, F::QS8Sp24, {}, 0},
};

constexpr bool table_matches_enum() {
  for (std::size_t i = 0; i < std::size(kTraits); ++i)
    if (static_cast<std::size_t>(kTraits[i].variant) != i || kAllVariants[i] != kTraits[i].variant) return false;
  return std::size(kTraits) == std::size(kAllVariants);
}
static_assert(table_matches_enum(), "kTraits must list every Variant once, in the enum's order");

}  // namespace

std::span<const VariantTraits> all_variant_traits() { return kTraits; }

const VariantTraits& variant_traits(Variant v) { return kTraits[static_cast<std::size_t>(v)]; }

std::string_view variant_name(Variant v) { return variant_traits(v).name; }

std::string variant_names_list() {
  std::string known;
  for (const VariantTraits& t : kTraits) {
    if (!known.empty()) known += ", ";
    known += t.name;
  }
  return known;
}

std::string variant_help_lines() {
  std::string lines;
  for (const VariantTraits& t : kTraits) {
    std::string name(t.name);
    name.resize(14, ' ');
    lines += "  " + name + std::string(t.summary) + "\n";
  }
  return lines;
}

Variant variant_from_name(std::string_view name) {
  for (const VariantTraits& t : kTraits)
    if (t.name == name) return t.variant;
  throw Error("unknown variant '" + std::string(name) + "' (known: " + variant_names_list() + ", all)");
}

std::vector<Variant> variants_from_list(std::string_view list) {
  if (list == "all") return {std::begin(kAllVariants), std::end(kAllVariants)};
  std::vector<Variant> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(start, comma - start);
    if (item.empty()) throw Error("empty variant name in list '" + std::string(list) + "'");
    out.push_back(variant_from_name(item));
    start = comma + 1;
  }
  return out;
}

bool variant_needs_calibration(Variant v) { return variant_traits(v).needs_calibration; }

WeightFormat variant_weight_format(Variant v, Isa isa) {
  const VariantTraits& t = variant_traits(v);
  for (int i = 0; i < t.n_isa_formats; ++i)
    if (t.isa_formats[i].isa == isa) return t.isa_formats[i].format;
  return t.format;
}

Variant variant_serving(Compression c) {
  for (const VariantTraits& t : kTraits)
    if (t.serves == c && c != Compression::None) return t.variant;
  return Variant::Fp32Fused;
}

}  // namespace ttlpred::engine
