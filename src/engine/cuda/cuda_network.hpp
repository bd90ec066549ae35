#pragma once
// The networks the CUDA backend runs: one interface, one class per implementation (the
// shape of tiny-cuda-nn's Network):
//   LtFloatNetwork    fp32 and fp16: one cuBLASLt matmul per hidden layer, bias and ReLU in
//                     its epilogue (lt_float_network.cpp)
//   LtInt8Network     int8-static: cuBLASLt int8 matmuls, int8-out epilogue or int32 out and
//                     our requantization (lt_int8_network.cpp)
//   FusedFp16Network  fp16: the whole MLP in one kernel, fp16 WMMA (fused_fp16_network.cpp)
// A network holds what every caller shares and nothing writes once it is built: the packed
// weights on the device. What a pass writes (inputs, activations, output, the cuBLASLt
// handle and workspace, per-batch descriptors) belongs to a Lane, which owns one stream, and
// the stream is passed on every call: threads with a lane each run at once on one network.
// Internal to the backend (CUDA headers); callers see cuda_plan.hpp.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/cuda/cuda_pack.hpp"
#include "engine/cuda/cuda_options.hpp"
#include "engine/cuda/device_memory.hpp"
#include "engine/cuda/kernels.hpp"
#include "engine/variant.hpp"

namespace ttlpred::cuda::detail {

inline constexpr std::size_t kLtWorkspaceBytes = 32u << 20;

// What a lane must hold for a network, per row of its largest batch.
struct NetworkShape {
  std::size_t dense_inputs = 0, n_cat = 0, n_out = 0;
  std::vector<std::uint32_t> cardinality;  // per embedding, for the host-side index check
  std::size_t act_bytes_per_row = 0;       // each of the two ping-pong activation buffers
  std::size_t acc_bytes_per_row = 0;       // int32 accumulators (int8 requantization)
};

// One stream's resources for up to `max_batch` rows of one network. One thread at a time.
class Lane {
 public:
  Lane(const NetworkShape& shape, int device, std::size_t max_batch);
  ~Lane();
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;        // a handle per lane: no two threads share one
  DeviceBuffer workspace;               // kLtWorkspaceBytes, cuBLASLt's
  DeviceBuffer d_dense, d_cats, d_out;  // the pass's inputs and output on the device
  PinnedBuffer h_dense, h_cats, h_out;  // their host staging (the graphs copy only these)
  DeviceBuffer act[2];
  DeviceBuffer acc_i32;
};

// A network's state for one batch size on one lane (cuBLASLt descriptors and algorithms).
struct BatchSetup {
  virtual ~BatchSetup() = default;
};

class CudaNetwork {
 public:
  virtual ~CudaNetwork() = default;
  const NetworkShape& shape() const { return shape_; }
  virtual engine::Variant variant() const = 0;
  // "fp32", "fp16", "fp16/fused", "int8-static", "int8-static/requant".
  virtual std::string form() const = 0;
  // How it runs (per-layer paths, padding, widths), for CudaPlan::describe.
  virtual std::string describe() const = 0;
  // What `enqueue` needs for `batch` rows on `lane`; made once per batch size and lane.
  virtual std::unique_ptr<BatchSetup> setup(const Lane& lane, std::size_t batch) const = 0;
  // The forward pass of `batch` rows on `stream`, device to device: lane.d_dense and d_cats
  // in, lane.d_out out (the host copies are the plan's). Only enqueues; nothing waits.
  virtual void enqueue(const Lane& lane, const BatchSetup& setup, std::size_t batch, cudaStream_t stream) const = 0;
  // True where part of the pass is a library's black box whose numbers compile_cuda checks
  // against the FP64 reference once (cuBLASLt's int8-out epilogue).
  virtual bool wants_self_test() const { return false; }

 protected:
  NetworkShape shape_;
};

// A model checked and packed for the GPU (compile_cuda does both before touching the
// device): what every builder starts from.
struct PackedModel {
  const MlpModel* model = nullptr;
  std::vector<PackedLayer> layers;
  PackedEmbeddings emb;
  std::vector<Int8Grid> grids;  // int8-static only: one per layer input
};

// The builders, one per implementation; the current device is options.device.
std::unique_ptr<CudaNetwork> make_lt_float_network(const PackedModel& m, engine::Variant variant);
std::unique_ptr<CudaNetwork> make_lt_int8_network(const PackedModel& m, const CudaOptions& options);
// Throws ttlpred::Error when the model has too many hidden layers for the kernel or is too
// wide for the device's shared memory.
std::unique_ptr<CudaNetwork> make_fused_fp16_network(const PackedModel& m, const CudaOptions& options);

// ---- Parts the implementations share ----

// The network's shape but for its scratch: widths, outputs, the embeddings' cardinalities.
NetworkShape io_shape(const MlpModel& model, const PackedEmbeddings& emb);

// The embedding tables on the device (and, for int8, folded through layer 0).
struct DeviceEmbeddings {
  DeviceEmbeddings(const PackedEmbeddings& emb, bool with_folded);
  DeviceBuffer tables, offset, dim, card, col_table, col_comp, folded, folded_offset;
  // The first layer's `in` input columns (padded to `in_pad`), lane inputs left null.
  GatherArgs gather(const NetworkShape& shape, std::uint32_t in, std::uint32_t in_pad) const;
};
// `g` reading the lane's device inputs.
GatherArgs on_lane(GatherArgs g, const Lane& lane);

// The last layer in fp32 for the warp-dot kernel (int8: its s8 weights' values in float).
struct DeviceFinalLayer {
  DeviceFinalLayer(const PackedLayer& last, bool int8);
  DeviceBuffer w, b;
  std::uint32_t in_pad = 0, out = 0;
  Activation act = Activation::None;
};

// The widest padded activation of `layers`, the first input (float or int8 columns) included.
std::uint32_t widest_activation(const std::vector<PackedLayer>& layers);

}  // namespace ttlpred::cuda::detail
