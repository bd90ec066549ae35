#pragma once
// The operations of vec16_native.hpp, lane by lane in plain C++: what each AVX-512
// instruction computes, written from its definition (Intel SDM), including rounding to
// nearest even, saturation and out-of-range conversions. With these the AVX-512 tiles run on
// any host, so that every host's tests check their logic (indexing, tails, epilogues); the
// native twin differs only in being one instruction per operation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "quant/half.hpp"

namespace ttlpred::engine::detail {
namespace {

struct Vec16Emulated {
  struct F {
    float v[16];
  };
  struct I {
    std::int32_t v[16];
  };

  static F zero() { return {}; }
  static F load(const float* p) {
    F r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static F load_f16(const std::uint16_t* p) {
    F r;
    for (int i = 0; i < 16; ++i) r.v[i] = quant::half_to_float(p[i]);
    return r;
  }
  static F load_bf16_slots(const std::uint16_t* p) {
    F r;
    for (int i = 0; i < 8; ++i) {
      r.v[i] = quant::bf16_to_float(p[2 * i]);
      r.v[8 + i] = quant::bf16_to_float(p[2 * i + 1]);
    }
    return r;
  }
  static F broadcast(float x) {
    F r;
    std::fill(r.v, r.v + 16, x);
    return r;
  }
  static F broadcast4(const float* p) {
    F r;
    for (int i = 0; i < 16; ++i) r.v[i] = p[i % 4];
    return r;
  }
  static F fmadd(F a, F b, F c) {
    for (int i = 0; i < 16; ++i) c.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
    return c;
  }
  static F fnmadd(F a, F b, F c) {
    for (int i = 0; i < 16; ++i) c.v[i] = std::fma(-a.v[i], b.v[i], c.v[i]);
    return c;
  }
  static F add(F a, F b) {
    for (int i = 0; i < 16; ++i) a.v[i] += b.v[i];
    return a;
  }
  static F mul(F a, F b) {
    for (int i = 0; i < 16; ++i) a.v[i] *= b.v[i];
    return a;
  }
  // vmaxps returns the second operand when either is NaN or both are zeros.
  static F max(F a, F b) {
    for (int i = 0; i < 16; ++i) a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static F permute_in_lanes(F a, I idx) {
    F r;
    for (int i = 0; i < 16; ++i) r.v[i] = a.v[4 * (i / 4) + (idx.v[i] & 3)];
    return r;
  }
  static F to_float(I a) {
    F r;
    for (int i = 0; i < 16; ++i) r.v[i] = static_cast<float>(a.v[i]);
    return r;
  }

  static void store(float* p, F v, unsigned n) { std::memcpy(p, v.v, std::min(n, 16u) * sizeof(float)); }
  // vcvtps2dq: round to nearest even; NaN and values outside int32 give INT32_MIN.
  static std::int32_t cvt_round(float x) {
    const float r = std::nearbyint(x);
    if (!(r >= -2147483648.0f && r < 2147483648.0f)) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(r);
  }
  static void store_u8(std::uint8_t* p, F v, float inv_scale, float zp, float qmax, unsigned n) {
    const std::int32_t top = static_cast<std::int32_t>(qmax);
    for (unsigned i = 0; i < std::min(n, 16u); ++i) {
      const std::int32_t q = cvt_round(std::fma(v.v[i], inv_scale, zp));
      p[i] = static_cast<std::uint8_t>(std::clamp(q, 0, top));
    }
  }

  static I izero() { return {}; }
  static I load_i(const void* p) {
    I r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static I broadcast32(std::int32_t x) {
    I r;
    std::fill(r.v, r.v + 16, x);
    return r;
  }
  static I broadcast64(std::int64_t x) {
    I r;
    for (int i = 0; i < 16; i += 2) std::memcpy(&r.v[i], &x, 8);
    return r;
  }
  static I halves32(std::uint32_t lo, std::uint32_t hi) {
    I r;
    for (int i = 0; i < 16; ++i) r.v[i] = static_cast<std::int32_t>(i < 8 ? lo : hi);
    return r;
  }
  static I lanes(const std::int32_t* p) { return load_i(p); }
  static void store_i(void* p, I v, unsigned n) { std::memcpy(p, v.v, std::min(n, 16u) * sizeof(std::int32_t)); }
  static I widen_u8(const std::uint8_t* p) {
    I r;
    for (int i = 0; i < 16; ++i) r.v[i] = p[i];
    return r;
  }
  static I or_i(I a, I b) {
    for (int i = 0; i < 16; ++i) a.v[i] |= b.v[i];
    return a;
  }
  static I and_i(I a, I b) {
    for (int i = 0; i < 16; ++i) a.v[i] &= b.v[i];
    return a;
  }
  static I add_i(I a, I b) {
    for (int i = 0; i < 16; ++i) a.v[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(a.v[i]) + static_cast<std::uint32_t>(b.v[i]));
    return a;
  }
  template <int k>
  static I shl(I a) {
    for (int i = 0; i < 16; ++i) a.v[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(a.v[i]) << k);
    return a;
  }
  static I shr_var(I a, I counts) {
    for (int i = 0; i < 16; ++i) {
      const auto c = static_cast<std::uint32_t>(counts.v[i]);
      a.v[i] = c > 31 ? 0 : static_cast<std::int32_t>(static_cast<std::uint32_t>(a.v[i]) >> c);
    }
    return a;
  }
  static I shuffle_bytes(I a, I ctl) {
    std::uint8_t in[64], c[64], out[64];
    std::memcpy(in, a.v, 64);
    std::memcpy(c, ctl.v, 64);
    for (int b = 0; b < 64; ++b) out[b] = (c[b] & 0x80) ? 0 : in[16 * (b / 16) + (c[b] & 15)];
    I r;
    std::memcpy(r.v, out, 64);
    return r;
  }
  // The four u8 x s8 products of each lane, added to it with wrap-around: vpdpbusd sums
  // them exactly; vpmaddubsw + vpmaddwd by 1 + vpaddd saturates each pair's sum to int16.
  static I dot_u8s8(I acc, I x, I w, bool saturate_pairs) {
    std::uint8_t xb[64];
    std::int8_t wb[64];
    std::memcpy(xb, x.v, 64);
    std::memcpy(wb, w.v, 64);
    for (int i = 0; i < 16; ++i) {
      std::int32_t sum = 0;
      for (int b = 4 * i; b < 4 * i + 4; b += 2) {
        const std::int32_t pair = xb[b] * wb[b] + xb[b + 1] * wb[b + 1];
        sum += saturate_pairs ? std::clamp(pair, -32768, 32767) : pair;
      }
      acc.v[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc.v[i]) + static_cast<std::uint32_t>(sum));
    }
    return acc;
  }
  static I dot_bw(I acc, I x, I w) { return dot_u8s8(acc, x, w, true); }
  static I dot_vnni(I acc, I x, I w) { return dot_u8s8(acc, x, w, false); }
  // vdpbf16ps, as the SDM spells it: per lane two FMAs, the odd element first, round to
  // nearest even, bf16 denormal inputs read as zero, denormal results flushed to zero.
  // (Whether hardware flushes a result that rounds up to the smallest normal is not
  // modelled: results that close to 1e-38 do not occur in a network's sums.)
  static float bf16_daz(std::uint16_t h) { return (h & 0x7f80u) == 0 ? std::copysign(0.0f, quant::bf16_to_float(h)) : quant::bf16_to_float(h); }
  static float ftz(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
  static F dot_bf16(F acc, I a, I b) {
    std::uint16_t ah[32], bh[32];
    std::memcpy(ah, a.v, 64);
    std::memcpy(bh, b.v, 64);
    for (int i = 0; i < 16; ++i) {
      float v = ftz(std::fma(bf16_daz(ah[2 * i + 1]), bf16_daz(bh[2 * i + 1]), acc.v[i]));
      acc.v[i] = ftz(std::fma(bf16_daz(ah[2 * i]), bf16_daz(bh[2 * i]), v));
    }
    return acc;
  }
  // vcvtne2ps2bf16 on p[0..n-1] (the rest read as 0), as the SDM spells its conversion: a
  // zero or denormal becomes a zero of its sign, a NaN keeps its top bits with the quiet
  // bit set, anything else rounds to nearest even (an integer add of 0x7fff + lsb).
  static std::uint32_t bf16_daz_bits(float f) {
    return std::fpclassify(f) == FP_SUBNORMAL ? quant::float_to_bf16(std::copysign(0.0f, f)) : quant::float_to_bf16(f);
  }
  static I bf16_pairs(const float* p, unsigned n) {
    I r;
    for (unsigned i = 0; i < 16; ++i) {
      const std::uint32_t lo = 2 * i < n ? bf16_daz_bits(p[2 * i]) : 0u;
      const std::uint32_t hi = 2 * i + 1 < n ? bf16_daz_bits(p[2 * i + 1]) : 0u;
      r.v[i] = static_cast<std::int32_t>(lo | hi << 16);
    }
    return r;
  }
};

}  // namespace
}  // namespace ttlpred::engine::detail
