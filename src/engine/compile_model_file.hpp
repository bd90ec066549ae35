#pragma once
// Compiling straight from a model file: its network, and for the static int8 variants the
// activation ranges it carries (ModelFile::int8_calibration) unless the options bring their own.
#include "engine/plan.hpp"
#include "model/model_file.hpp"

namespace ttlpred::engine {

// `what` names the file in errors (e.g. its path). Throws ttlpred::Error when a static int8
// variant is asked for and neither the options nor the file have calibration.
Plan compile(const ModelFile& file, Variant variant, CompileOptions options, const std::string& what);

}  // namespace ttlpred::engine
