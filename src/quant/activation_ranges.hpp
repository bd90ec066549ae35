#pragma once
// Activation ranges for static int8 (what `ttlpred quantize` calibrates): run the float model
// over representative inputs and record, for every layer, the range of the values that layer
// quantizes on its input (layer 0: the dense features; embeddings stay in float, folded at
// compile time; layer i>0: the previous layer's activations). The table is what a model file
// carries next to the weights so that an int8-static plan can be compiled without the
// calibration data. Named apart from the project's two other calibrations: the safe TTL's
// holdout margins (model/safe_ttl.hpp, SafeTtlCalibration) and the online level a service
// moves with outcomes (model/online_calibration.hpp, OnlineCalibrator).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/model_input.hpp"
#include "model/mlp.hpp"

namespace ttlpred::quant {

enum class RangeMethod : std::uint8_t {
  MinMax = 0,      // the full observed range: nothing clips, outliers cost resolution
  Percentile = 1,  // clip to the given percentiles (both tails)
  Mse = 2,         // the clipping range that minimizes the quantization error on the samples
};

std::string_view range_method_name(RangeMethod m);  // "minmax", "percentile", "mse"
RangeMethod range_method_from_name(std::string_view name);  // throws ttlpred::Error

struct ActivationRange {
  float lo = 0.0f, hi = 0.0f;  // always lo <= 0 <= hi, so that zero is exactly representable
};

struct ActivationRanges {
  RangeMethod method = RangeMethod::MinMax;
  std::vector<ActivationRange> layer_inputs;  // one per model layer
  // Largest u8 activation code: 0 = the most the kernels take (255, or 127 on AVX2);
  // quantization-aware training sets the grid it trained on, and plans then use exactly it.
  float act_qmax = 0.0f;
};

struct ActivationRangeOptions {
  RangeMethod method = RangeMethod::MinMax;
  double percentile = 99.99;            // Percentile: upper percentile; the lower is 100 - it
  float levels = 255.0f;                // Mse: quantization levels the error is measured at
  std::size_t max_samples = 1u << 16;   // per layer, for Percentile and Mse (evenly strided)
};

// Affine u8 parameters for a range: real = scale * (q - zero_point), q in [0, qmax].
struct QuantParams {
  float scale = 1.0f;
  float zero_point = 0.0f;  // an integer value
};
QuantParams quant_params(ActivationRange range, float qmax);

// `dense` is rows x dense_inputs, `cats` rows x embeddings (null if none). Throws
// ttlpred::Error when rows is 0 or a category index is out of range.
ActivationRanges measure_activation_ranges(const MlpModel& model, const float* dense, const std::uint32_t* cats, std::size_t rows,
                           const ActivationRangeOptions& options = {});
ActivationRanges measure_activation_ranges(const MlpModel& model, const EncodedBatch& batch, const ActivationRangeOptions& options = {});

}  // namespace ttlpred::quant
