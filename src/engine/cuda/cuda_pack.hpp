#pragma once
// Host-side preparation of a model for the GPU: validation, padding to tensor-core friendly
// widths, fp16 / int8 weight formats, int8 calibration, and an FP64 host forward pass (the
// calibration pass and the self-check's reference). No CUDA headers: tested without a GPU.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "features/encoded_batch.hpp"
#include "model/mlp.hpp"

namespace ttlpred::cuda {

// Every activation width is padded to a multiple of this, with zero weights and zero bias in
// the padding, so padded channels stay exactly 0 through ReLU / LeakyReLU / identity. 16
// keeps fp16 rows 32-byte aligned (WMMA, cuBLASLt tensor-core kernels) and int8 rows a
// multiple of 4 bytes (cuBLASLt IMMA).
inline constexpr std::uint32_t kWidthAlign = 16;
inline constexpr std::uint32_t pad_width(std::uint32_t n) {
  return (n + kWidthAlign - 1) / kWidthAlign * kWidthAlign;
}

struct PackedLayer {
  std::uint32_t in = 0, out = 0;          // the model's widths
  std::uint32_t in_pad = 0, out_pad = 0;  // padded widths
  Activation act = Activation::Relu;
  std::vector<float> weight_f32;          // out_pad x in_pad, row-major, zero padded
  std::vector<float> bias_f32;            // out_pad
  std::vector<std::uint16_t> weight_f16;  // same layout, IEEE half bits
  std::vector<std::uint16_t> bias_f16;
  std::vector<std::int8_t> weight_i8;     // round(w / weight_scale[o]), in [-127, 127]
  std::vector<float> weight_scale;        // out_pad, per output channel: max|w[o,:]| / 127
};

// Embedding tables concatenated (fp32), and for each first-layer input column past the dense
// ones, which table and which component of the row it reads.
struct PackedEmbeddings {
  std::vector<float> tables;                 // all tables, one after another
  std::vector<std::uint32_t> table_offset;   // per embedding: start in `tables`
  std::vector<std::uint32_t> dim;            // per embedding
  std::vector<std::uint32_t> cardinality;    // per embedding
  std::vector<std::uint32_t> column_table;   // per first-layer column >= dense_inputs
  std::vector<std::uint32_t> column_component;
};

// Throws ttlpred::Error naming the layer / embedding and field when the model is not a
// chain of consistent layers (in/out, weight and bias sizes, table sizes, finite values).
void validate_model(const MlpModel& model);
std::vector<PackedLayer> pack_layers(const MlpModel& model);
PackedEmbeddings pack_embeddings(const MlpModel& model);

// The first layer's input row: dense features then each embedding's row (an index past the
// cardinality reads the OOV row 0).
void gather_first_layer_input(const MlpModel& model, const float* dense,
                              const std::uint32_t* cats, double* row_out);

// FP64 forward over `rows` rows: returns rows x last-layer-width outputs. When
// `layer_input_range` is given, it receives per layer the min and max of that layer's input
// over all rows (size 2 * layers: min0, max0, min1, max1, ...).
std::vector<double> reference_forward(const MlpModel& model, const float* dense,
                                      const std::uint32_t* cats, std::size_t rows,
                                      std::vector<double>* layer_input_range = nullptr);

// Static symmetric int8 activation scales, one per layer input: max(|min|, |max|) / 127 over
// the calibration rows (1 where that range is 0). Throws when the batch does not match.
std::vector<float> calibrate_activation_scales(const MlpModel& model, const EncodedBatch& calibration);

std::int8_t quantize_int8(float x, float scale);
std::uint16_t float_to_half_bits(float x);
float half_bits_to_float(std::uint16_t h);

}  // namespace ttlpred::cuda
