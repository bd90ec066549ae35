#pragma once
// The network of a ttlpred model as an ONNX graph, and back. The graph's contract (the
// sidecar and docs/interop.md describe it to callers):
//   inputs   dense       float [batch, D]  the encoder's standardized dense features
//            categories  int64 [batch, C]  the encoder's category indices (0 = unknown);
//                                          absent when the model has no category column
//   output   t           float [batch, 1]  the standardized, transformed run time
//                                          (the sidecar's "target" decodes it to seconds)
//   nodes    per category i: Gather(categories, i, axis 1) -> Gather(embedding_i, ., axis 0);
//            Concat(dense, embeddings..., axis 1); then per layer Gemm(transB=1) and Relu or
//            LeakyRelu(alpha 0.01). Opset 13, float32 weights.
#include <string>

#include <onnx/onnx_pb.h>

#include "model/mlp.hpp"

namespace ttlpred::interop {

inline constexpr const char* kDenseInput = "dense";
inline constexpr const char* kCategoriesInput = "categories";
inline constexpr const char* kOutput = "t";
inline constexpr int kOpset = 13;

// The graph of `mlp`; `doc` goes into the model's doc_string. Checked with onnx's checker.
onnx::ModelProto mlp_to_onnx(const MlpModel& mlp, const std::string& doc);

// The int8-static variant as QDQ: each layer's input goes through Clip, QuantizeLinear and
// DequantizeLinear (u8, per tensor, the calibrated range and code limit `act_qmax` of
// quant::ActivationRanges), its weight is int8 per output channel with DequantizeLinear
// (axis 0), exactly the rounding rules of quant/fake_quant.hpp; biases stay float. Runtimes
// that fuse QDQ (ONNX Runtime, TensorRT) run it in int8.
struct Int8Layers {
  std::vector<float> act_lo, act_hi;  // one range per layer input
  float act_qmax = 255.0f;
};
onnx::ModelProto mlp_to_onnx_int8(const MlpModel& mlp, const Int8Layers& q, const std::string& doc);

// An MLP of the supported shape back from an ONNX graph: Gemm, or MatMul followed by Add,
// with Relu / LeakyRelu(alpha 0.01) between layers; Gather/Concat embeddings as above;
// Identity, Dropout (inference: identity) and Flatten of a 2-D tensor pass through.
// Weights may be initializers or Constant nodes, float32 or float64. Anything else throws
// Error naming `what`, the node (name and op) and why.
MlpModel mlp_from_onnx(const onnx::ModelProto& model, const std::string& what);

}  // namespace ttlpred::interop
