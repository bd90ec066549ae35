#pragma once
// The JSON sidecar that travels with an exported ONNX graph: everything around the network
// that a serving stack needs to turn a job into the graph's inputs and its output into a run
// time and a safe TTL (docs/interop.md documents every key), plus the sealed ttlpred sections
// (base64) from which `ttlpred import` rebuilds a model file exactly.
#include <string>

#include <nlohmann/json.hpp>

#include "model/model_file.hpp"

namespace ttlpred::interop {

inline constexpr const char* kSidecarFormat = "ttlpred-onnx-sidecar";
// The newest sidecar version written and read: 2 adds target.residual (written only for a
// model with a residual base), 3 the quantile heads and the per-job safe TTL
// (target.quantiles, safe_ttl.quantile; written only for a model with heads). Each model is
// written at the lowest version that describes it, so a reader of an older version refuses
// exactly the models it would decode wrong.
inline constexpr int kSidecarVersion = 3;

// The sidecar of `m` whose graph is stored as `onnx_file` (a file name, for people).
nlohmann::json sidecar_json(const ModelFile& m, const std::string& onnx_file);

// Fills everything but the network (encoder, history, target, safe TTL, provenance,
// metadata) from a sidecar; throws Error naming `what` and the key at fault.
void apply_sidecar(const nlohmann::json& sidecar, ModelFile& m, const std::string& what);

}  // namespace ttlpred::interop
