// Scalar reference kernels: plain C++ over the same packed layouts the SIMD kernels use, so
// every ISA shares one packing and the scalar path doubles as their executable spec.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/half.hpp"
#include "engine/arch/quantize_rows.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {

namespace {

std::uint8_t quantize_one(float v, float inv_scale, float zp, float qmax) {
  const float q = std::nearbyint(v * inv_scale) + zp;
  return static_cast<std::uint8_t>(std::clamp(q, 0.0f, qmax));
}

// Applies the fused epilogue to one row's accumulators of one panel and stores the columns
// the caller may write. `acc` holds real-valued dot products (int8 ones already converted).
void finish_panel(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t p, const float* acc,
                  bool int8) {
  const std::uint32_t n0 = p * kPanel;
  const std::uint32_t ncols = std::min(kPanel, c.y_cols > n0 ? c.y_cols - n0 : 0u);
  for (std::uint32_t i = 0; i < ncols; ++i) {
    const std::uint32_t n = n0 + i;
    float v = acc[i];
    if (!c.raw) {
      if (int8) {
        if (c.row_scale) v = (v - c.row_zp[m] * L.wsum[n]) * c.row_scale[m];
        v = v * L.col_scale[n] + L.bias[n];
      } else {
        v += L.bias[n];
      }
      for (std::uint32_t j = 0; j < c.n_folded; ++j)
        v += c.folded[j][std::size_t{c.cats[m * c.cat_stride + j]} * L.cols_padded() + n];
      v = activate(v, L.act);
    }
    if (c.out_u8)
      static_cast<std::uint8_t*>(c.y)[m * c.y_stride + n] = quantize_one(v, c.out_inv_scale, c.out_zp, c.out_qmax);
    else
      static_cast<float*>(c.y)[m * c.y_stride + n] = v;
  }
}

template <typename Load>
void gemm_float(const PackedLayer& L, const LayerCall& c, const void* weights, Load load) {
  for (std::size_t m = 0; m < c.rows; ++m) {
    const float* x = static_cast<const float*>(c.x) + m * c.x_stride;
    for (std::uint32_t p = 0; p < L.panels; ++p) {
      float acc[kPanel] = {};
      const std::size_t base = std::size_t{p} * L.in * kPanel;
      for (std::uint32_t k = 0; k < L.in; ++k)
        for (std::uint32_t i = 0; i < kPanel; ++i) acc[i] += load(weights, base + std::size_t{k} * kPanel + i) * x[k];
      finish_panel(L, c, m, p, acc, false);
    }
  }
}

void f32_gemm_1x16__scalar(const PackedLayer& L, const LayerCall& c) {
  gemm_float(L, c, L.weights, [](const void* w, std::size_t i) { return static_cast<const float*>(w)[i]; });
}
void f16_gemm_1x16__scalar(const PackedLayer& L, const LayerCall& c) {
  gemm_float(L, c, L.weights,
             [](const void* w, std::size_t i) { return quant::half_to_float(static_cast<const std::uint16_t*>(w)[i]); });
}
void bf16_gemm_1x16__scalar(const PackedLayer& L, const LayerCall& c) {
  gemm_float(L, c, L.weights,
             [](const void* w, std::size_t i) {
               return quant::bf16_to_float(static_cast<const std::uint16_t*>(w)[i - i % kPanel + bf16_slot(i % kPanel)]);
             });
}

// The epilogue of a panel of int32 sums: dequantized by finish_panel.
void finish_int_panel(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t p,
                      const std::int32_t (&acc)[kPanel]) {
  float accf[kPanel];
  for (std::uint32_t i = 0; i < kPanel; ++i) accf[i] = static_cast<float>(acc[i]);
  finish_panel(L, c, m, p, accf, true);
}

// The frame of the int8 kernels: for every row's u8 inputs x and every panel p,
// `dot(x, p, acc)` sums into the panel's int32 accumulators, then the int epilogue.
template <class Dot>
void int8_panels(const PackedLayer& L, const LayerCall& c, Dot dot) {
  for (std::size_t m = 0; m < c.rows; ++m) {
    const auto* x = static_cast<const std::uint8_t*>(c.x) + m * c.x_stride;
    for (std::uint32_t p = 0; p < L.panels; ++p) {
      std::int32_t acc[kPanel] = {};
      dot(x, p, acc);
      finish_int_panel(L, c, m, p, acc);
    }
  }
}

void qu8s8_gemm_1x16c4__scalar(const PackedLayer& L, const LayerCall& c) {
  const auto* w = static_cast<const std::int8_t*>(L.weights);
  const std::uint32_t groups = L.in_padded / 4;
  int8_panels(L, c, [&](const std::uint8_t* x, std::uint32_t p, std::int32_t (&acc)[kPanel]) {
    const std::int8_t* wp = w + std::size_t{p} * groups * kPanel * 4;
    for (std::uint32_t g = 0; g < groups; ++g)
      for (std::uint32_t i = 0; i < kPanel; ++i)
        for (std::uint32_t t = 0; t < 4; ++t) acc[i] += std::int32_t{x[4 * g + t]} * wp[(std::size_t{g} * kPanel + i) * 4 + t];
  });
}

void f16_sp24_gemm_1x16__scalar(const PackedLayer& L, const LayerCall& c) {
  const auto* vals = static_cast<const std::uint16_t*>(L.weights);
  const auto* idx = static_cast<const std::uint64_t*>(L.aux);
  const std::uint32_t groups = L.in_padded / 4;
  for (std::size_t m = 0; m < c.rows; ++m) {
    const float* x = static_cast<const float*>(c.x) + m * c.x_stride;
    for (std::uint32_t p = 0; p < L.panels; ++p) {
      float acc[kPanel] = {};
      for (std::uint32_t g = 0; g < groups; ++g) {
        const std::uint16_t* v = vals + (std::size_t{p} * groups + g) * 2 * kPanel;
        const std::uint64_t bits = idx[std::size_t{p} * groups + g];
        for (std::uint32_t i = 0; i < kPanel; ++i) {
          const unsigned i0 = (bits >> (4 * i)) & 3u, i1 = (bits >> (4 * i + 2)) & 3u;
          acc[i] += quant::half_to_float(v[i]) * x[4 * g + i0] + quant::half_to_float(v[kPanel + i]) * x[4 * g + i1];
        }
      }
      finish_panel(L, c, m, p, acc, false);
    }
  }
}

void qu8s8_sp24_gemm_1x16c8__scalar(const PackedLayer& L, const LayerCall& c) {
  const auto* vals = static_cast<const std::int8_t*>(L.weights);
  const auto* codes = static_cast<const std::uint8_t*>(L.aux);
  const std::uint32_t groups = L.in_padded / 8;
  int8_panels(L, c, [&](const std::uint8_t* x, std::uint32_t p, std::int32_t (&acc)[kPanel]) {
    for (std::uint32_t g = 0; g < groups; ++g) {
      const std::int8_t* v = vals + (std::size_t{p} * groups + g) * kPanel * 4;
      const std::uint8_t* code = codes + (std::size_t{p} * groups + g) * kPanel;
      for (std::uint32_t i = 0; i < kPanel; ++i)
        for (std::uint32_t s = 0; s < 4; ++s) {
          const unsigned k = 8 * g + ((code[i] >> (2 * s)) & 3u) + (s >= 2 ? 4u : 0u);
          acc[i] += std::int32_t{x[k]} * v[i * 4 + s];
        }
    }
  });
}

// Widens [lo, hi] over the row's values.
void range_of_row(const float* xr, std::size_t cols, float& lo, float& hi) {
  for (std::size_t k = 0; k < cols; ++k) {
    lo = std::min(lo, xr[k]);
    hi = std::max(hi, xr[k]);
  }
}

void quantize_row(const float* xr, std::size_t cols, std::uint8_t* qr, float inv_scale, float zp, float qmax) {
  for (std::size_t k = 0; k < cols; ++k) qr[k] = quantize_one(xr[k], inv_scale, zp, qmax);
}

}  // namespace

const KernelSet& scalar_kernels() {
  static const KernelSet set = make_kernel_set(nullptr, {TTLPRED_BASE_GEMMS(1x16, scalar, scalar, scalar)},
                                               quantize_rows_dynamic<range_of_row, quantize_row>,
                                               quantize_rows_static<quantize_row>, 255.0f);
  return set;
}

}  // namespace ttlpred::engine::detail
