#include "engine/cuda/cuda_backend.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/compile_model_file.hpp"
#include "engine/cuda/cuda_plan.hpp"

namespace ttlpred::cuda {

namespace {

// One network, a lane per concurrent caller: a call takes an idle lane (or has one made, on
// the same weights) and gives it back, so that callers run on streams of their own. The lock
// guards only the list of idle lanes, never a pass.
class CudaBackend final : public engine::Backend {
 public:
  explicit CudaBackend(CudaPlan first) : first_(std::move(first)), description_(first_.describe()) {
    idle_.push_back(&first_);
  }

  void predict(const float* dense, const std::uint32_t* cats, std::size_t batch, float* out) const override {
    CudaPlan* lane = take();
    try {
      lane->predict(dense, cats, batch, out);
    } catch (...) {
      give_back(lane);
      throw;
    }
    give_back(lane);
  }
  engine::Variant variant() const override { return first_.variant(); }
  std::string target() const override { return "cuda"; }
  std::vector<std::string> kernel_names() const override { return {description_}; }
  std::uint32_t dense_inputs() const override { return static_cast<std::uint32_t>(first_.dense_inputs()); }
  std::uint32_t n_categorical() const override { return static_cast<std::uint32_t>(first_.cat_inputs()); }
  std::uint32_t outputs() const override { return static_cast<std::uint32_t>(first_.outputs()); }

 private:
  CudaPlan* take() const {
    {
      const std::lock_guard<std::mutex> hold(mu_);
      if (!idle_.empty()) {
        CudaPlan* lane = idle_.back();
        idle_.pop_back();
        return lane;
      }
    }
    auto made = std::make_unique<CudaPlan>(first_.another_lane());  // outside the lock: allocates on the device
    const std::lock_guard<std::mutex> hold(mu_);
    more_.push_back(std::move(made));
    return more_.back().get();
  }
  void give_back(CudaPlan* lane) const {
    const std::lock_guard<std::mutex> hold(mu_);
    idle_.push_back(lane);
  }

  mutable CudaPlan first_;  // never moved: the others are made from it while it may be in use
  const std::string description_;  // read once: a lane's describe() counts graphs its predict() adds
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<CudaPlan>> more_;  // lanes made for concurrent callers
  mutable std::vector<CudaPlan*> idle_;
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
