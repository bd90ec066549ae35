#pragma once
// Host-side preparation of a model for the GPU: padding to tensor-core friendly widths and
// the fp16 / int8 weight formats, all by the rules the CPU engine packs with (model/ and
// quant/: check_mlp, quant::float_to_half, quant::quantize_weight_rows, the affine u8
// activation grid of quant::quant_params, the embeddings folded through layer 0). No CUDA
// headers: tested without a GPU, which is how the two backends are checked to run one grid.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/mlp.hpp"
#include "quant/activation_ranges.hpp"

namespace ttlpred::cuda {

// Every activation width is padded to a multiple of this, with zero weights and zero bias in
// the padding, so padded channels stay exactly 0 through ReLU / LeakyReLU / identity. 16
// keeps fp16 rows 32-byte aligned (WMMA, cuBLASLt tensor-core kernels) and int8 rows a
// multiple of 4 bytes (cuBLASLt IMMA). A zero width pads to one whole group.
inline constexpr std::uint32_t kWidthAlign = 16;
inline constexpr std::uint32_t pad_width(std::uint32_t n) {
  return n == 0 ? kWidthAlign : (n + kWidthAlign - 1) / kWidthAlign * kWidthAlign;
}

// Largest u8 activation code on this backend: the GPU stores a code q as the s8 value
// q - zero_point (see Int8Grid), which fits s8 for every zero point only when q <= 127. It is
// the 127-level grid quantization-aware training trains on.
inline constexpr float kCudaActQmax = 127.0f;

// How one layer's input is quantized: the affine u8 grid the CPU engine and QAT use
// (real = scale * (q - zero_point), q in [0, qmax], quant::quant_params over the model file's
// range, qmax = quant::plan_act_qmax(table, kCudaActQmax)), held as s8 = q - zero_point so
// that x = scale * s8 and the int8 GEMM needs no zero-point term. s8 = clamp(nearbyint(x *
// inv_scale), lo, hi) with lo = -zero_point, hi = qmax - zero_point: the CPU kernels' rounding.
struct Int8Grid {
  float scale = 1.0f, inv_scale = 1.0f;
  float zero_point = 0.0f, qmax = kCudaActQmax;
  float lo = 0.0f, hi = kCudaActQmax;
};
// One grid per layer input; throws ttlpred::Error when the table does not have one range per layer.
std::vector<Int8Grid> int8_grids(const quant::ActivationRanges& table, std::size_t layers);
std::int8_t quantize_activation(float x, const Int8Grid& g);

struct PackedLayer {
  std::uint32_t in = 0, out = 0;          // the model's widths
  std::uint32_t in_pad = 0, out_pad = 0;  // padded widths
  Activation act = Activation::Relu;
  std::vector<float> weight_f32;          // out_pad x in_pad, row-major, zero padded
  std::vector<float> bias_f32;            // out_pad
  std::vector<std::uint16_t> weight_f16;  // same layout, IEEE half bits (quant::float_to_half)
  std::vector<std::uint16_t> bias_f16;
  // int8: the columns the int8 GEMM reads: all of them, but only the dense ones in layer 0,
  // whose embedding columns are folded in float (PackedEmbeddings::folded), as on the CPU.
  std::uint32_t q_in = 0, q_in_pad = 0;
  std::vector<std::int8_t> weight_i8;     // out_pad x q_in_pad: quant::quantize_weight_rows
  std::vector<float> weight_scale;        // out_pad, per output channel (1 in the padding)
  std::vector<float> weight_dequant;      // out x in_pad: weight_scale[o] * weight_i8, for the
                                          // last layer, which runs in float on int8 inputs
};

// Embedding tables concatenated (fp32), and for each first-layer input column past the dense
// ones, which table and which component of the row it reads; and the tables folded through
// layer 0 (model/folded_embeddings.hpp, rows of layers[0]'s out_pad) for the int8 path.
struct PackedEmbeddings {
  std::vector<float> tables;                 // all tables, one after another
  std::vector<std::uint32_t> table_offset;   // per embedding: start in `tables`
  std::vector<std::uint32_t> dim;            // per embedding
  std::vector<std::uint32_t> cardinality;    // per embedding
  std::vector<std::uint32_t> column_table;   // per first-layer column >= dense_inputs
  std::vector<std::uint32_t> column_component;
  std::vector<float> folded;                 // all folded tables, cardinality x out_pad each
  std::vector<std::uint64_t> folded_offset;  // per embedding: start in `folded`
};

// Both check the model with check_mlp (model/mlp_check.hpp) first.
std::vector<PackedLayer> pack_layers(const MlpModel& model);
PackedEmbeddings pack_embeddings(const MlpModel& model);

}  // namespace ttlpred::cuda
