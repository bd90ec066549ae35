#include "engine/compile_model_file.hpp"

#include "quant/activation_ranges_io.hpp"
#include "util/error.hpp"

namespace ttlpred::engine {

std::optional<quant::ActivationRanges> model_activation_ranges(const ModelFile& file, Variant variant,
                                                               const std::string& what) {
  if (!file.int8_calibration.empty())
    return quant::parse_activation_ranges(file.int8_calibration, what + " int8 calibration");
  if (variant_needs_calibration(variant))
    throw Error(what + ": variant '" + std::string(variant_name(variant)) +
                "' needs int8 calibration and the model file has none (quantize it with calibration data)");
  return std::nullopt;
}

Plan compile(const ModelFile& file, Variant variant, CompileOptions options, const std::string& what) {
  if (!options.calibration) options.calibration = model_activation_ranges(file, variant, what);
  return compile(file.mlp, variant, options);
}

}  // namespace ttlpred::engine
