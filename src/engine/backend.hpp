#pragma once
// The one interface a Predictor runs a network through, whatever the device: the CPU engine
// (engine/cpu_backend.hpp, compiled plans on this host's ISA) or the CUDA backend
// (engine/cuda/cuda_backend.hpp, where it is built). Every backend takes the same input
// contract (model/model_input.hpp: an out-of-range category is an error), is checked against
// the same FP64 reference (model/reference_forward.hpp), runs the variants of the one
// vocabulary (engine/variant.hpp) and says which of them it runs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/isa.hpp"
#include "engine/variant.hpp"
#include "model/model_file.hpp"

namespace ttlpred::engine {

class Backend {
 public:
  virtual ~Backend() = default;
  // Thread-safe. dense: batch x dense_inputs(), cats: batch x n_categorical() (may be null
  // when that is 0), out: batch x outputs(). Throws ttlpred::Error on an out-of-range
  // category before writing anything.
  virtual void predict(const float* dense, const std::uint32_t* cats, std::size_t batch, float* out) const = 0;
  virtual Variant variant() const = 0;
  // Where it runs, as the CLI and the service report it: the ISA name ("avx2") on the CPU,
  // "cuda" on a GPU.
  virtual std::string target() const = 0;
  // One line per layer or stage, naming the kernels (XNNPACK-style names on the CPU).
  virtual std::vector<std::string> kernel_names() const = 0;
  virtual std::uint32_t dense_inputs() const = 0;
  virtual std::uint32_t n_categorical() const = 0;
  virtual std::uint32_t outputs() const = 0;
};

struct BackendOptions {
  std::optional<Isa> isa;  // CPU: pin an instruction set (default: the best usable one)
  int device = 0;          // CUDA: the device index
};

// A kind of backend: its name, the variants it runs, and how a model file is compiled for it
// (`what` names the file in errors; the file's int8 calibration table serves the static int8
// variants).
struct BackendKind {
  std::string_view name;  // "cpu", "cuda"
  std::vector<Variant> (*variants)();
  std::unique_ptr<const Backend> (*compile)(const ModelFile& file, Variant variant, const BackendOptions& options,
                                            const std::string& what);
  bool runs(Variant v) const;
};

// Throws ttlpred::Error naming the backend and the variants it runs when `kind` does not
// run `variant`; else kind.compile(...).
std::unique_ptr<const Backend> compile_backend(const BackendKind& kind, const ModelFile& file, Variant variant,
                                               const BackendOptions& options, const std::string& what);

}  // namespace ttlpred::engine
