#include "engine/compile_model_file.hpp"

#include "quant/activation_ranges_io.hpp"
#include "util/error.hpp"

namespace ttlpred::engine {

Plan compile(const ModelFile& file, Variant variant, CompileOptions options, const std::string& what) {
  if (!options.calibration && !file.int8_calibration.empty())
    options.calibration = quant::parse_activation_ranges(file.int8_calibration, what + " int8 calibration");
  if (variant_needs_calibration(variant) && !options.calibration)
    throw Error(what + ": variant '" + std::string(variant_name(variant)) +
                "' needs int8 calibration and the model file has none (quantize it with calibration data)");
  return compile(file.mlp, variant, options);
}

}  // namespace ttlpred::engine
