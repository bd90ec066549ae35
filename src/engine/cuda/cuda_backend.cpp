#include "engine/cuda/cuda_backend.hpp"

#include <mutex>
#include <optional>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/compile_model_file.hpp"

namespace ttlpred::cuda {

namespace {

class CudaBackend final : public engine::Backend {
 public:
  explicit CudaBackend(CudaPlan plan) : plan_(std::move(plan)) {}
  void predict(const float* dense, const std::uint32_t* cats, std::size_t batch, float* out) const override {
    const std::lock_guard<std::mutex> hold(mu_);
    plan_.predict(dense, cats, batch, out);
  }
  engine::Variant variant() const override { return plan_.variant(); }
  std::string target() const override { return "cuda"; }
  std::vector<std::string> kernel_names() const override { return {plan_.describe()}; }
  std::uint32_t dense_inputs() const override { return static_cast<std::uint32_t>(plan_.dense_inputs()); }
  std::uint32_t n_categorical() const override { return static_cast<std::uint32_t>(plan_.cat_inputs()); }
  std::uint32_t outputs() const override { return static_cast<std::uint32_t>(plan_.outputs()); }

 private:
  mutable std::mutex mu_;
  mutable CudaPlan plan_;
};

std::unique_ptr<const engine::Backend> compile(const ModelFile& file, engine::Variant variant,
                                               const engine::BackendOptions& options, const std::string& what) {
  CudaOptions co;
  co.device = options.device;
  const std::optional<quant::ActivationRanges> ranges = engine::model_activation_ranges(file, variant, what);
  if (engine::variant_needs_calibration(variant)) co.calibration = &*ranges;
  return std::make_unique<const CudaBackend>(compile_cuda(file.mlp, variant, co));
}

}  // namespace

const engine::BackendKind& cuda_backend() {
  static const engine::BackendKind kind{"cuda", cuda_variants, compile};
  return kind;
}

}  // namespace ttlpred::cuda
