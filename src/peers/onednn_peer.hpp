#pragma once
// The benchmark's reference point: the same MLP run as a chain of oneDNN matmul primitives
// with fused bias + activation post-ops, in fp32 or int8 (u8 activations, s8 weights,
// per-column weight scales), as a framework built on oneDNN would run it.
#include <cstddef>
#include <memory>
#include <string>

#include "model/mlp.hpp"
#include "quant/activation_ranges.hpp"

namespace ttlpred::peers {

class OneDnnMlp {
 public:
  enum class Kind { Fp32, Int8 };
  // Builds primitives for a fixed batch. Int8 uses `calibration` for activation scales.
  // Embeddings are not part of the peer (the shape benchmarks use none): throws
  // ttlpred::Error for a model that has them.
  OneDnnMlp(const MlpModel& model, Kind kind, std::size_t batch, const quant::ActivationRanges* calibration,
            int threads);
  ~OneDnnMlp();
  OneDnnMlp(const OneDnnMlp&) = delete;
  OneDnnMlp& operator=(const OneDnnMlp&) = delete;

  // dense: batch x dense_inputs; out: batch x outputs.
  void run(const float* dense, float* out);
  static std::string name(Kind kind);  // "onednn_fp32", "onednn_int8"

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace ttlpred::peers
