#pragma once
// The two commands' work on files: `ttlpred export` writes OUT.onnx and its sidecar
// OUT.json (next to it, same stem); `ttlpred import` reads an ONNX MLP and a sidecar into a
// ttlpred model file. Both write atomically.
#include <string>

#include "model/model_file.hpp"

namespace ttlpred::interop {

// The sidecar path of an ONNX path: "m.onnx" -> "m.json", anything else + ".json".
std::string sidecar_path_for(const std::string& onnx_path);

// Writes the fp32 network of `m` to `onnx_path` and the sidecar to `sidecar_path`; with
// `int8`, the int8-static variant as a QDQ graph (needs the model's int8 calibration, from
// `ttlpred quantize` or `train --qat int8`; Error otherwise). A model with quantile heads is
// refused (Error): the sidecar does not describe them yet.
void export_onnx(const ModelFile& m, const std::string& onnx_path, const std::string& sidecar_path, bool int8 = false);

// A model file from an ONNX MLP and a sidecar. Throws Error naming the file (and node or
// key) when the graph is not a supported MLP or does not fit the sidecar's encoder.
ModelFile import_onnx(const std::string& onnx_path, const std::string& sidecar_path);

}  // namespace ttlpred::interop
