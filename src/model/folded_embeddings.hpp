#pragma once
// Embeddings folded through the first layer: for categorical column j and category c, the
// row of layer-0 pre-activations that the embedding's `dim` inputs contribute,
//   folded[j][c * stride + n] = sum_d weight0[n][dense_inputs + offset_j + d] * table_j[c][d],
// summed in FP64 and stored as float. A backend that folds (the CPU's fused plans, the CUDA
// int8 path) then feeds layer 0 only the dense inputs and adds one folded row per category:
// one add per output instead of dim multiply-adds, and the embeddings stay in float even
// where the dense inputs are quantized. One definition, so both backends add the same values.
#include <cstdint>
#include <vector>

#include "model/mlp.hpp"

namespace ttlpred {

// One table per embedding, cardinality x stride floats; columns past layers[0].out are 0.
// `stride` must be >= layers[0].out.
std::vector<std::vector<float>> fold_embeddings(const MlpModel& model, std::uint32_t stride);

}  // namespace ttlpred
