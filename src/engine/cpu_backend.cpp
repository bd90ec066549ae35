#include "engine/cpu_backend.hpp"

#include "engine/compile_model_file.hpp"

namespace ttlpred::engine {

namespace {

std::vector<Variant> every_variant() { return {std::begin(kAllVariants), std::end(kAllVariants)}; }

std::unique_ptr<const Backend> compile_cpu(const ModelFile& file, Variant variant, const BackendOptions& options,
                                           const std::string& what) {
  CompileOptions co;
  co.isa = options.isa;
  return std::make_unique<const CpuBackend>(compile(file, variant, co, what));
}

}  // namespace

const BackendKind& cpu_backend() {
  static const BackendKind kind{"cpu", every_variant, compile_cpu};
  return kind;
}

}  // namespace ttlpred::engine
