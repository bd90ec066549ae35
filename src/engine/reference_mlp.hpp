#pragma once
// The ground truth every compiled variant is checked against: a plain FP64 forward pass of
// an MlpModel, written for clarity, not speed. Also the 2:4 pruning the sparse variants
// apply, so tests can compare them with the reference of the pruned model.
#include <cstddef>
#include <cstdint>

#include "model/mlp.hpp"

namespace ttlpred::engine {

// out[r * last_out + o] for r < batch. `dense` is batch x dense_inputs, `cats` is
// batch x embeddings.size() (may be null when the model has no embeddings).
void reference_forward(const MlpModel& model, const float* dense, const std::uint32_t* cats,
                       std::size_t batch, double* out);

// Keeps, in every group of 4 consecutive inputs of every output row of every layer, the 2
// weights of largest magnitude (ties: the lower index) and zeroes the rest. A trailing
// partial group counts its missing inputs as zeros. Embeddings and biases are untouched.
MlpModel prune_2_4(const MlpModel& model);

// Throws ttlpred::Error naming the field when the model is not self-consistent.
void validate_model(const MlpModel& model);

}  // namespace ttlpred::engine
