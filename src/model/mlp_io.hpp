#pragma once
// Serialization and structural checks of MlpModel (model/mlp.hpp). Every loaded model goes
// through validate_mlp, so the engine and the reference predictor can trust the shapes.
#include <string>

#include "model/mlp.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {

// Throws Error (prefixed with `what`) when check_mlp (model/mlp_check.hpp) refuses the
// network or the last layer is not a single linear output.
void validate_mlp(const MlpModel& m, const std::string& what);

void write_mlp(BinaryWriter& w, const MlpModel& m);
// Reads and validates; errors name `r`'s source.
MlpModel read_mlp(BinaryReader& r);

// Total trainable values (embedding tables, weights, biases).
std::size_t mlp_parameter_count(const MlpModel& m);

}  // namespace ttlpred
