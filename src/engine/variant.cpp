#include "engine/variant.hpp"

#include "util/error.hpp"

namespace ttlpred::engine {

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::Fp32: return "fp32";
    case Variant::Fp32Fused: return "fp32-fused";
    case Variant::Fp16: return "fp16";
    case Variant::Bf16: return "bf16";
    case Variant::Int8Dynamic: return "int8-dynamic";
    case Variant::Int8Static: return "int8-static";
    case Variant::Fp16Sparse24: return "fp16-2:4";
    case Variant::Int8Sparse24: return "int8-2:4";
  }
  return "?";
}

Variant variant_from_name(std::string_view name) {
  for (Variant v : kAllVariants)
    if (variant_name(v) == name) return v;
  std::string known;
  for (Variant v : kAllVariants) {
    if (!known.empty()) known += ", ";
    known += variant_name(v);
  }
  throw Error("unknown variant '" + std::string(name) + "' (known: " + known + ", all)");
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

bool variant_needs_calibration(Variant v) {
  // int8-2:4 shares the static requantization of int8-static: its point is the fastest path.
  return v == Variant::Int8Static || v == Variant::Int8Sparse24;
}

}  // namespace ttlpred::engine
