#pragma once
// The CPU engine behind the backend interface: a compiled Plan (engine/plan.hpp) on this
// host's best ISA or a pinned one. It runs every variant.
#include "engine/backend.hpp"
#include "engine/plan.hpp"

namespace ttlpred::engine {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(Plan plan) : plan_(std::move(plan)) {}
  void predict(const float* dense, const std::uint32_t* cats, std::size_t batch, float* out) const override {
    plan_.predict(dense, cats, batch, out);
  }
  Variant variant() const override { return plan_.variant(); }
  std::string target() const override { return std::string(isa_name(plan_.isa())); }
  std::vector<std::string> kernel_names() const override { return plan_.kernel_names(); }
  std::uint32_t dense_inputs() const override { return plan_.dense_inputs(); }
  std::uint32_t n_categorical() const override { return plan_.n_categorical(); }
  std::uint32_t outputs() const override { return plan_.outputs(); }
  const Plan& plan() const { return plan_; }

 private:
  Plan plan_;
};

const BackendKind& cpu_backend();

}  // namespace ttlpred::engine
