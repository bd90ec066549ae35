#include "engine/backend.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace ttlpred::engine {

bool BackendKind::runs(Variant v) const {
  const std::vector<Variant> all = variants();
  return std::find(all.begin(), all.end(), v) != all.end();
}

std::unique_ptr<const Backend> compile_backend(const BackendKind& kind, const ModelFile& file, Variant variant,
                                               const BackendOptions& options, const std::string& what) {
  if (!kind.runs(variant)) {
    std::string runs;
    for (Variant v : kind.variants()) runs += (runs.empty() ? "" : ", ") + std::string(variant_name(v));
    throw Error(what + ": the " + std::string(kind.name) + " backend does not run variant '" +
                std::string(variant_name(variant)) + "' (it runs: " + runs + ")");
  }
  return kind.compile(file, variant, options, what);
}

}  // namespace ttlpred::engine
