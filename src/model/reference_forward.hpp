#pragma once
// The ground truth every backend and variant is checked against: a plain FP64 forward pass
// of an MlpModel, written for clarity, not speed. A per-layer observer sees every layer's
// input row on the way, which is how int8 calibration (quant/activation_ranges.cpp) measures the
// activation ranges: the ranges come from the same arithmetic the tests trust.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "model/mlp.hpp"

namespace ttlpred {

// Called once per row and layer with that layer's input: for layer 0 the dense features
// followed by each embedding's row, for layer i > 0 the previous layer's activations.
using LayerInputObserver = std::function<void(std::size_t layer, std::span<const double> input)>;

// out[r * last_out + o] for r < batch. `dense` is batch x dense_inputs, `cats` is
// batch x embeddings.size() (may be null when the model has no embeddings). Throws
// ttlpred::Error for an index past its table's cardinality (model/model_input.hpp).
void reference_forward(const MlpModel& model, const float* dense, const std::uint32_t* cats, std::size_t batch,
                       double* out, const LayerInputObserver& observe = nullptr);

}  // namespace ttlpred
