// The AVX2 kernel set, and the AVX2 row quantizers (min/max scan, scale, round, pack).
#include "engine/arch/avx2/common_avx2.hpp"
#include "engine/arch/avx2/kernels_avx2.hpp"
#include "engine/arch/quantize_rows.hpp"

namespace ttlpred::engine::detail {
namespace {

// Quantizes cols values of one row; the tail past the last multiple of 8 goes through a
// zero-padded temporary so that the vector code never reads past the row.
void quantize_row(const float* x, std::size_t cols, std::uint8_t* q, float inv_scale, float zp, float qmax) {
  const __m256 inv = _mm256_set1_ps(inv_scale), z = _mm256_set1_ps(zp);
  const __m256i top = _mm256_set1_epi32(static_cast<int>(qmax));
  auto convert8 = [&](__m256 v, std::uint8_t* dst, std::size_t count) {
    __m256i i = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(v, inv)), _mm256_cvtps_epi32(z));
    i = _mm256_min_epi32(_mm256_max_epi32(i, _mm256_setzero_si256()), top);
    const __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    alignas(16) std::uint8_t tmp[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), _mm_packus_epi16(w16, w16));
    std::memcpy(dst, tmp, count);
  };
  std::size_t k = 0;
  for (; k + 8 <= cols; k += 8) convert8(_mm256_loadu_ps(x + k), q + k, 8);
  if (k < cols) {
    alignas(32) float tail[8] = {};
    std::memcpy(tail, x + k, (cols - k) * sizeof(float));
    convert8(_mm256_load_ps(tail), q + k, cols - k);
  }
}

// Widens [lo, hi] over the row's cols values: 8 lanes at a time, then the tail.
void range_of_row(const float* xr, std::size_t cols, float& lo, float& hi) {
  __m256 vlo = _mm256_setzero_ps(), vhi = _mm256_setzero_ps();
  std::size_t k = 0;
  for (; k + 8 <= cols; k += 8) {
    const __m256 v = _mm256_loadu_ps(xr + k);
    vlo = _mm256_min_ps(vlo, v);
    vhi = _mm256_max_ps(vhi, v);
  }
  alignas(32) float lo8[8], hi8[8];
  _mm256_store_ps(lo8, vlo);
  _mm256_store_ps(hi8, vhi);
  for (int i = 0; i < 8; ++i) {
    lo = lo8[i] < lo ? lo8[i] : lo;
    hi = hi8[i] > hi ? hi8[i] : hi;
  }
  for (; k < cols; ++k) {
    lo = xr[k] < lo ? xr[k] : lo;
    hi = xr[k] > hi ? xr[k] : hi;
  }
}

}  // namespace

void quantize_dynamic_avx2(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                           std::size_t q_stride, std::size_t cols_padded, float qmax, float* row_scale, float* row_zp) {
  quantize_rows_dynamic<range_of_row, quantize_row>(x, rows, cols, x_stride, q, q_stride, cols_padded, qmax, row_scale,
                                                    row_zp);
}

void quantize_static_avx2(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride, std::uint8_t* q,
                          std::size_t q_stride, std::size_t cols_padded, float inv_scale, float zp, float qmax) {
  quantize_rows_static<quantize_row>(x, rows, cols, x_stride, q, q_stride, cols_padded, inv_scale, zp, qmax);
}

const KernelSet& avx2_kernels() {
  static const KernelSet set = make_kernel_set(nullptr, {TTLPRED_BASE_GEMMS(4x16, avx2_fma, avx2_f16c, avx2)},
                                               quantize_dynamic_avx2, quantize_static_avx2, 127.0f);
  return set;
}

}  // namespace ttlpred::engine::detail
