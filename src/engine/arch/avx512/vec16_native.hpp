#pragma once
// The 16-lane vector operations the AVX-512 tiles are written in (tiles_avx512.hpp), each one
// AVX-512 instruction (F, BW, VL; VNNI for dot_vnni). vec16_emulated.hpp defines the same
// operations lane by lane in plain C++, so the very same tiles also run, slowly, on hosts
// without AVX-512 and are checked there against the FP64 reference. Every operation here
// must mean exactly what its twin there computes.
// Included only by files compiled with the AVX-512 flags; internal linkage throughout.
#include <immintrin.h>

#include <cstdint>

namespace ttlpred::engine::detail {
namespace {

struct Vec16Native {
  using F = __m512;   // 16 floats
  using I = __m512i;  // 16 int32, or 64 bytes

  static F zero() { return _mm512_setzero_ps(); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static F load_f16(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  // 16 bf16 in bf16_slot order (column i at 2i for i < 8, column 8+i at 2i+1) -> columns 0..15.
  static F load_bf16_slots(const std::uint16_t* p) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i lo = _mm256_slli_epi32(v, 16);
    const __m256i hi = _mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u)));
    return _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
  }
  static F broadcast(float v) { return _mm512_set1_ps(v); }
  // p[0..3] repeated in each 128-bit lane.
  static F broadcast4(const float* p) { return _mm512_broadcast_f32x4(_mm_loadu_ps(p)); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }   // a*b + c, one rounding
  static F fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a*b, one rounding
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  // out[i] = a[4*(i/4) + (idx[i] & 3)]
  static F permute_in_lanes(F a, I idx) { return _mm512_permutevar_ps(a, idx); }
  static F to_float(I a) { return _mm512_cvtepi32_ps(a); }

  // The first n (1..16) lanes.
  static void store(float* p, F v, unsigned n) {
    if (n >= 16) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
  }
  // clamp(round_even(v * inv_scale + zp), 0, qmax) as bytes, the first n (1..16) lanes.
  static void store_u8(std::uint8_t* p, F v, float inv_scale, float zp, float qmax, unsigned n) {
    __m512i q = _mm512_cvtps_epi32(_mm512_fmadd_ps(v, _mm512_set1_ps(inv_scale), _mm512_set1_ps(zp)));
    q = _mm512_min_epi32(_mm512_max_epi32(q, _mm512_setzero_si512()), _mm512_set1_epi32(static_cast<int>(qmax)));
    const __m128i b = _mm512_cvtepi32_epi8(q);
    if (n >= 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(p), b);
    else _mm_mask_storeu_epi8(p, static_cast<__mmask16>((1u << n) - 1), b);
  }

  static I izero() { return _mm512_setzero_si512(); }
  static I load_i(const void* p) { return _mm512_loadu_si512(p); }
  static I broadcast32(std::int32_t v) { return _mm512_set1_epi32(v); }
  static I broadcast64(std::int64_t v) { return _mm512_set1_epi64(v); }
  // Lanes 0..7 = lo, lanes 8..15 = hi.
  static I halves32(std::uint32_t lo, std::uint32_t hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32(static_cast<int>(lo))),
                              _mm256_set1_epi32(static_cast<int>(hi)), 1);
  }
  static I lanes(const std::int32_t* p) { return _mm512_loadu_si512(p); }
  // The first n (1..16) int32 lanes.
  static void store_i(void* p, I v, unsigned n) {
    if (n >= 16) _mm512_storeu_si512(p, v);
    else _mm512_mask_storeu_epi32(p, static_cast<__mmask16>((1u << n) - 1), v);
  }
  static I widen_u8(const std::uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static I or_i(I a, I b) { return _mm512_or_si512(a, b); }
  static I and_i(I a, I b) { return _mm512_and_si512(a, b); }
  static I add_i(I a, I b) { return _mm512_add_epi32(a, b); }
  template <int k>
  static I shl(I a) { return _mm512_slli_epi32(a, k); }
  static I shr_var(I a, I counts) { return _mm512_srlv_epi32(a, counts); }
  // Byte shuffle within each 128-bit lane (a control byte with its top bit set gives 0).
  static I shuffle_bytes(I a, I ctl) { return _mm512_shuffle_epi8(a, ctl); }
  // acc[i] += sum over t < 4 of u8(x[4i+t]) * s8(w[4i+t]): through int16 pairs that
  // saturate (AVX512BW vpmaddubsw), so x must stay below 128 ...
  static I dot_bw(I acc, I x, I w) {
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(x, w), _mm512_set1_epi16(1)));
  }
#ifdef __AVX512VNNI__
  // ... or in one exact instruction (AVX512-VNNI vpdpbusd).
  // Written as the instruction itself: GCC 12 gives _mm512_dpbusd_epi32 an untied
  // destination, and in the 8 x 2 tile it copied accumulators around every product (34
  // register moves per 16 vpdpbusd in the inner loop); tied, the loop is loads, broadcasts
  // and products only.
  static I dot_vnni(I acc, I x, I w) {
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "vm"(w));
    return acc;
  }
#endif
#ifdef __AVX512BF16__
  // acc[i] += a[2i+1]*b[2i+1], then += a[2i]*b[2i], for 32 bf16 in a and b (AVX512-BF16
  // vdpbf16ps: each step an FMA, round to nearest even, bf16 denormals read as zero, fp32
  // denormal results flushed to zero).
  static F dot_bf16(F acc, I a, I b) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }
  // p[0..n-1] (n <= 32; missing floats read as 0) rounded to bf16, p[2i] in the low half of
  // lane i and p[2i+1] in its high half: the activation pairs dot_bf16 takes (AVX512-BF16
  // vcvtne2ps2bf16: round to nearest even, denormal inputs to signed zero, NaN kept quiet).
  static I bf16_pairs(const float* p, unsigned n) {
    const unsigned lo = n < 16 ? n : 16, hi = n - lo;
    const __m512 a = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1ull << lo) - 1), p);
    const __m512 b = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1ull << hi) - 1), p + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(b, a);
  }
#endif
};

}  // namespace
}  // namespace ttlpred::engine::detail
