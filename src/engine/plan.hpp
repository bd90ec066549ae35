#pragma once
// A model compiled for inference: weights packed once for one numeric variant and one
// instruction set, each layer's bias, activation and (re)quantization fused into its GEMM,
// embeddings folded through the first layer. A Plan is immutable: copies share the packed
// weights and any number of threads may call predict() at once (scratch is per thread and
// reused, so steady-state calls allocate nothing).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/isa.hpp"
#include "engine/variant.hpp"
#include "model/model_input.hpp"
#include "model/mlp.hpp"
#include "quant/activation_ranges.hpp"

namespace ttlpred::engine {

struct CompileOptions {
  std::optional<Isa> isa;  // pin an instruction set; default: the best usable one
  // Run `isa`'s kernels on a portable model of its instructions (isa_emulated()): checks
  // the AVX-512 and AMX kernels on hosts without them. Many times slower; never a default.
  bool emulated = false;
  // Activation ranges for int8-static and int8-2:4 (quant::calibrate, or a model file's).
  std::optional<quant::ActivationRanges> calibration;
};

class Plan {
 public:
  Plan() = default;  // empty: predict() throws

  // dense: batch x dense_inputs() row-major; cats: batch x n_categorical() (may be null when
  // n_categorical() == 0); out: batch x outputs(). Throws ttlpred::Error on an out-of-range
  // category index (naming the row and column), before writing anything.
  void predict(const float* dense, const std::uint32_t* cats, std::size_t batch, float* out) const;
  void predict(const EncodedBatch& batch, float* out) const;  // checks the batch's widths
  std::vector<float> predict(const EncodedBatch& batch) const;

  bool empty() const { return impl_ == nullptr; }
  Variant variant() const;
  Isa isa() const;
  std::uint32_t dense_inputs() const;
  std::uint32_t n_categorical() const;
  std::uint32_t outputs() const;
  std::size_t packed_bytes() const;        // weights + folded embedding tables
  std::vector<std::string> kernel_names() const;  // one per layer, XNNPACK style

  struct Impl;

 private:
  friend Plan compile(const MlpModel& model, Variant variant, const CompileOptions& options);
  std::shared_ptr<const Impl> impl_;
};

// Throws ttlpred::Error for an inconsistent model (naming the field), a pinned ISA this host
// or build cannot run, or a static int8 variant without (matching) calibration.
Plan compile(const MlpModel& model, Variant variant, const CompileOptions& options = {});

}  // namespace ttlpred::engine
