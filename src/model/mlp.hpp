#pragma once
// The model as trained: embeddings for categorical inputs, then a stack of dense layers.
// The first layer's input is [dense features, embedding of cat 0, embedding of cat 1, ...].
// This is the contract between the trainer (which fills it), the model file (which stores
// it) and the inference engine (which compiles it into a packed, fused plan).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace ttlpred {

enum class Activation : std::uint8_t { None = 0, Relu = 1, LeakyRelu = 2 };

// The activation's name in reports ("none", "relu", "leaky_relu"); "?" for a value outside
// the enum.
constexpr const char* activation_name(Activation a) {
  constexpr const char* kNames[] = {"none", "relu", "leaky_relu"};  // by the enum's value
  const auto i = static_cast<std::size_t>(a);
  return i < std::size(kNames) ? kNames[i] : "?";
}
inline constexpr float kLeakyReluSlope = 0.01f;

// The activation of one value, in any precision: the definition every scalar path shares
// (the FP64 reference, the scalar kernels, calibration, and the CUDA kernels, which call it
// from device code: nvcc's --expt-relaxed-constexpr).
template <class T>
constexpr T activate(T v, Activation act) {
  switch (act) {
    case Activation::Relu: return v > T(0) ? v : T(0);
    case Activation::LeakyRelu: return v > T(0) ? v : v * static_cast<T>(kLeakyReluSlope);
    case Activation::None: break;
  }
  return v;
}

struct Embedding {
  std::uint32_t cardinality = 0;  // rows, OOV bucket (index 0) included
  std::uint32_t dim = 0;
  std::vector<float> table;       // cardinality x dim, row-major
};

struct DenseLayer {
  std::uint32_t in = 0, out = 0;
  std::vector<float> weight;  // out x in, row-major: y[o] = sum_i weight[o*in+i] * x[i] + bias[o]
  std::vector<float> bias;    // out
  Activation act = Activation::Relu;
};

struct MlpModel {
  std::uint32_t dense_inputs = 0;
  std::vector<Embedding> embeddings;  // one per categorical column, in EncodedBatch order
  std::vector<DenseLayer> layers;     // last layer has out == 1 and Activation::None

  std::uint32_t first_layer_inputs() const {
    std::uint32_t n = dense_inputs;
    for (const auto& e : embeddings) n += e.dim;
    return n;
  }
};

}  // namespace ttlpred
