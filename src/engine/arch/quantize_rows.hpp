#pragma once
// The frame of the row quantizers, one definition for every instruction set: a row's range
// always holds 0 (so that 0 stays exact), its scale spreads the range over [0, qmax], its
// zero point is rounded and clamped to the grid, and every row is padded with its zero
// point up to cols_padded. The instruction set brings the two loops over a row's values.
// Internal linkage and no std:: inline function (only builtins), so that no function
// compiled with one file's instruction-set flags is merged into another's.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ttlpred::engine::detail {
namespace {

inline float clamp_to(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// KernelSet's two quantizers (QuantizeDynamicFn, QuantizeStaticFn) over the instruction
// set's `range(x, cols, lo, hi)`, which widens [lo, hi] over a row, and its
// `row(x, cols, q, inv_scale, zp, qmax)`, which quantizes one.
template <auto range, auto row>
void quantize_rows_dynamic(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                           std::size_t q_stride, std::size_t cols_padded, float qmax, float* row_scale, float* row_zp) {
  for (std::size_t m = 0; m < rows; ++m) {
    const float* xr = x + m * x_stride;
    float lo = 0.0f, hi = 0.0f;
    range(xr, cols, lo, hi);
    const float scale = hi > lo ? (hi - lo) / qmax : 1.0f;
    const float zp = clamp_to(__builtin_nearbyintf(-lo / scale), 0.0f, qmax);
    std::uint8_t* qr = q + m * q_stride;
    row(xr, cols, qr, 1.0f / scale, zp, qmax);
    std::memset(qr + cols, static_cast<int>(zp), cols_padded - cols);
    row_scale[m] = scale;
    row_zp[m] = zp;
  }
}

template <auto row>
void quantize_rows_static(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                          std::size_t q_stride, std::size_t cols_padded, float inv_scale, float zp, float qmax) {
  for (std::size_t m = 0; m < rows; ++m) {
    std::uint8_t* qr = q + m * q_stride;
    row(x + m * x_stride, cols, qr, inv_scale, zp, qmax);
    std::memset(qr + cols, static_cast<int>(zp), cols_padded - cols);
  }
}

}  // namespace
}  // namespace ttlpred::engine::detail
