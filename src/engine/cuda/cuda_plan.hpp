#pragma once
// The CUDA backend's public face. Plain C++: callers (CLI, tests, serve) include
// this without the CUDA headers; everything CUDA lives behind CudaPlan's pimpl.
//
// A plan is a network (the packed weights on the device, read-only, shared with every plan
// made from it by another_lane()) and a lane of its own: one stream, device and pinned host
// buffers and, per batch size seen, a CUDA graph holding the whole forward pass: H2D copies,
// the kernels / cuBLASLt matmuls, and the D2H copy. predict() replays that graph.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cuda/cuda_options.hpp"
#include "engine/variant.hpp"
#include "model/mlp.hpp"
#include "quant/activation_ranges.hpp"

namespace ttlpred::cuda {

// The variants of the one vocabulary (engine/variant.hpp) this backend runs:
//   fp32         cuBLASLt, fp32 in/out, fp32 compute (no TF32), bias+ReLU epilogue
//   fp16         cuBLASLt, fp16 activations and weights, fp32 accumulate, tensor cores; or
//                (CudaOptions::fp16_fused_kernel) one hand-written kernel for the whole MLP,
//                fp16 WMMA, fp32 accumulate
//   int8-static  cuBLASLt int8 x int8 -> int32 tensor cores on the model file's affine u8
//                activation grid (quant/, the grid the CPU engine and QAT use) and the CPU's
//                per-channel s8 weights; embeddings folded through layer 0 in float
// fp16-2:4 would need cuSPARSELt, which is not built.
std::vector<engine::Variant> cuda_variants();
bool cuda_runs(engine::Variant v);

// Number of visible CUDA devices; 0 when there is no driver, no GPU, or any CUDA error.
// Never throws, so that tests and tools can skip cleanly.
int cuda_device_count() noexcept;
// "" when GPU `device` can be used; else why not, in CUDA's words ("no GPU: cudaGetDeviceCount:
// cudaErrorNoDevice (no CUDA-capable device is detected)", or how many are visible): what
// compile_cuda's refusal says, so that a host without a GPU or driver learns which.
std::string cuda_device_problem(int device);
// "NVIDIA H200 (sm_90, 132 SMs, 141 GB)" for device `device`, or the CUDA error text.
std::string cuda_device_description(int device);

class CudaPlan {
 public:
  CudaPlan();
  ~CudaPlan();
  CudaPlan(CudaPlan&&) noexcept;
  CudaPlan& operator=(CudaPlan&&) noexcept;
  CudaPlan(const CudaPlan&) = delete;
  CudaPlan& operator=(const CudaPlan&) = delete;

  // Whole forward pass, host memory to host memory: `host_dense` is batch x dense_inputs,
  // `host_cats` batch x embeddings.size() (may be null when there are no embeddings),
  // `host_out` batch x last layer width. Throws ttlpred::Error on a category index at or past
  // its table's cardinality, before any copy (model/model_input.hpp: the rule of every
  // backend). Not thread-safe (one stream, one set of staging buffers): one plan per thread,
  // each from another_lane(), as the CudaBackend (engine/cuda/cuda_backend.hpp) keeps them.
  void predict(const float* host_dense, const std::uint32_t* host_cats, std::size_t batch,
               float* host_out);

  // The same, for callers that write straight into the plan's pinned staging buffers
  // (saves one host memcpy each way): fill staging_dense()/staging_cats() for `batch` <=
  // max_batch() rows, call predict_staged(batch), read staging_out(). The staged category
  // indices are checked as predict() checks them.
  float* staging_dense();
  std::uint32_t* staging_cats();
  const float* staging_out() const;
  void predict_staged(std::size_t batch);

  // Device-only time of one forward pass (no copies): the kernels graph for `batch` is
  // replayed `iterations` times between two CUDA events; returns microseconds per pass.
  // The inputs are whatever the device buffers hold (zeros at first).
  double device_time_us(std::size_t batch, int iterations);

  engine::Variant variant() const;
  // The variant and the form it runs in: "fp32", "fp16", "fp16/fused", "int8-static",
  // "int8-static/requant".
  std::string form() const;
  std::size_t max_batch() const;
  std::size_t dense_inputs() const;
  std::size_t cat_inputs() const;
  std::size_t outputs() const;
  // One line on how the plan runs (per-layer paths, padding, cuBLASLt algorithms found).
  std::string describe() const;

  // A plan on the same network (no second copy of the weights) with a lane of its own: its
  // stream, buffers and graphs, for another calling thread. Reads only what no predict()
  // writes, so a thread may call it while another predicts with this plan.
  CudaPlan another_lane() const;

  struct Impl;

 private:
  explicit CudaPlan(std::unique_ptr<Impl> impl);
  friend CudaPlan compile_cuda(const MlpModel&, engine::Variant, const CudaOptions&);
  std::unique_ptr<Impl> impl_;
};

// Packs `model` for `variant` on `options.device`. Throws ttlpred::Error on a bad model
// (check_mlp), a variant this backend does not run, missing or mismatched activation ranges
// (int8-static), an int8-static model without a hidden layer, or any CUDA/cuBLASLt failure
// (the message names the call that failed).
CudaPlan compile_cuda(const MlpModel& model, engine::Variant variant, const CudaOptions& options = {});

}  // namespace ttlpred::cuda
