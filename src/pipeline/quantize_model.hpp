#pragma once
// Static int8 quantization of a model file: activation ranges measured on calibration jobs
// are stored in the file, where the `int8-static` engine variants find them.
#include <cstdint>
#include <string>

#include "data/job_table.hpp"
#include "model/model_file.hpp"
#include "quant/calibration.hpp"

namespace ttlpred {

// Encodes up to `max_rows` of the first `first_rows` rows of `jobs` (evenly strided), with
// history features computed leak-free over `jobs` from an empty state (seeding it with the
// model's end-of-training state would count the training jobs twice when they are the
// calibration data), measures the ranges and stores them in `model`. Returns the ranges.
quant::CalibrationTable add_int8_calibration(ModelFile& model, const JobTable& jobs,
                                             const quant::CalibrationOptions& options, std::size_t max_rows = 65536,
                                             std::size_t first_rows = SIZE_MAX);

}  // namespace ttlpred
