#pragma once
// The one structural check of a network (model/mlp.hpp) that every consumer runs: the model
// file on save and load, and each inference backend (CPU plans, the CUDA backend) before it
// packs weights. One definition, so that a network one of them accepts, all accept.
#include "model/mlp.hpp"

namespace ttlpred {

// Throws ttlpred::Error naming the field ("model: layers[1].in is 7, expected 8 (previous
// layer's out)") when the layers do not chain from dense_inputs + embedding dims, a size
// disagrees with its vector, a table has no OOV row, an activation is unknown or a value is
// not finite. Any output width is accepted (the model file asks for one output itself).
void check_mlp(const MlpModel& model);

}  // namespace ttlpred
