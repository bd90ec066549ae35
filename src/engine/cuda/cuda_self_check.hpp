#pragma once
// Random models and batches, and a GoogleTest-free correctness check of every built variant
// against the FP64 reference the CPU engine is checked against (model/reference_forward.hpp;
// int8-static on activation ranges from quant::calibrate). bench/gpu-check.sh runs it through
// ttlpred_gpu_check on machines that have a GPU but not the Debian -dev packages.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "engine/cuda/cuda_plan.hpp"
#include "model/model_input.hpp"

namespace ttlpred::cuda {

struct RandomModelSpec {
  std::uint32_t dense_inputs = 8;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> embeddings;  // (cardinality, dim)
  std::vector<std::uint32_t> layer_outs = {16, 1};                  // last one is the output width
  Activation hidden_act = Activation::Relu;
};

// Weights uniform in +-sqrt(3 / in) (unit-variance preserving), biases in +-0.1, tables in +-1.
MlpModel make_random_model(const RandomModelSpec& spec, std::uint64_t seed);
// A model of the given first-layer width and layer widths ("96,256,256,256,1"): when the
// first width exceeds 32, its last 16 inputs are two 8-wide embeddings (cardinality 64).
MlpModel make_bench_model(const std::vector<std::uint32_t>& shape, std::uint64_t seed);
// Dense features uniform in [-2, 2]; category indices uniform over each table (an index
// past it is an error on every backend, tested apart).
EncodedBatch make_random_batch(const MlpModel& model, std::size_t rows, std::uint64_t seed);

// Error bound for `variant`: |gpu - ref| <= tolerance * max(1, max |ref|).
double variant_tolerance(engine::Variant variant);

// One way to run a variant on the GPU: the variant and the CudaOptions switches of its form,
// under the name the tools and bench/gpu-check.sh use ("fused": fp16 on the fused kernel).
struct CudaForm {
  std::string name;
  engine::Variant variant;
  bool int8_requant_kernel = false;
  bool fp16_fused_kernel = false;
};
// Every form of every variant the backend runs (cuda_variants()).
std::vector<CudaForm> cuda_forms();
// Throws ttlpred::Error listing the known names.
CudaForm cuda_form(const std::string& name);

struct CheckResult {
  std::string what;  // "fp16 odd-widths batch=33 rows=[0,33)"
  double max_abs_error = 0.0;
  double bound = 0.0;
  bool passed = false;
  std::string error;  // an exception's message, when one was thrown
};

// Runs all variants (int8-static in both its epilogue and requant-kernel forms) on a few
// random models (bench shape, odd widths with embeddings, LeakyReLU with 3 outputs, a single
// layer) at batches 1..4096, twice per batch with different rows (the graph replays fresh
// inputs), one case chunked by a small max_batch, and each plan with a second lane
// (another_lane) on a second thread at the same time. Writes one line per check to `log`.
// `forms` limits the run to some of "fp32", "fp16", "int8-static", "int8-static/requant",
// "fused" (empty: all); an unknown name throws ttlpred::Error.
std::vector<std::string> self_check_forms();
std::vector<CheckResult> run_self_check(std::ostream& log, int device = 0,
                                        const std::vector<std::string>& forms = {});

}  // namespace ttlpred::cuda
