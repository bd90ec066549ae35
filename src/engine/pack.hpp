#pragma once
// Packing one layer's weights into the layouts of kernels.hpp, with the per-column data the
// fused epilogues need. Done once, at compile().
#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/aligned_buffer.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {

// The first `in` columns of an out x ld row-major matrix.
struct WeightView {
  const float* w = nullptr;
  std::size_t ld = 0;
  std::uint32_t out = 0, in = 0;
  float at(std::uint32_t o, std::uint32_t k) const { return w[std::size_t{o} * ld + k]; }
};

// Owns the memory a PackedLayer points into.
struct LayerStore {
  PackedLayer packed;
  AlignedBuffer weights, aux;
  std::vector<float> bias, col_scale, wsum;  // cols_padded() each (col_scale/wsum: int8 only)
  // int8-static: how this layer's input is quantized (real = scale * (q - zp)).
  float in_scale = 1.0f, in_zp = 0.0f;
  void bind();  // points `packed` at the buffers; call after the last change
  std::size_t bytes() const;
};

// Packs `view` in `format`. Sparse formats keep the 2 largest |w| of every group of 4 inputs.
// Int8 formats quantize each output column symmetrically to [-127, 127] (col_scale = its
// scale, wsum = sum of its s8 weights).
LayerStore pack_layer(const WeightView& view, const float* bias, Activation act, WeightFormat format);

}  // namespace ttlpred::engine::detail
