#pragma once
// Compiling straight from a model file: its network, and for the static int8 variants the
// activation ranges it carries (ModelFile::int8_calibration) unless the options bring their own.
// Every backend reads a file's ranges through model_activation_ranges, so the CPU engine and
// the CUDA backend refuse a file the same way, in the same words.
#include <optional>
#include <string>

#include "engine/plan.hpp"
#include "model/model_file.hpp"
#include "quant/activation_ranges.hpp"

namespace ttlpred::engine {

// The activation ranges `file` carries (nullopt when none). Throws ttlpred::Error naming `what`
// when `variant` needs them and the file has none, or when the file's are truncated or corrupt.
std::optional<quant::ActivationRanges> model_activation_ranges(const ModelFile& file, Variant variant,
                                                               const std::string& what);

// `what` names the file in errors (e.g. its path). Throws ttlpred::Error when a static int8
// variant is asked for and neither the options nor the file have calibration.
Plan compile(const ModelFile& file, Variant variant, CompileOptions options, const std::string& what);

}  // namespace ttlpred::engine
