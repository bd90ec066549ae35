#pragma once
// Portable fp32 <-> fp16 / bf16 conversions (round to nearest even): the one definition both
// backends pack 16-bit weights with (the CPU packer and scalar kernels, the CUDA packer),
// so that every ISA and the GPU see the same 16-bit weights. They match F16C's
// vcvtps2ph/vcvtph2ps and CUDA's __float2half_rn bit for bit on finite values. memcpy
// instead of std::bit_cast: the CUDA backend's standalone build may meet a g++ before 11.
#include <cstdint>
#include <cstring>

namespace ttlpred::quant {

namespace half_detail {
template <class To, class From>
inline To bits_as(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
}  // namespace half_detail

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = half_detail::bits_as<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

inline float bf16_to_float(std::uint16_t h) {
  return half_detail::bits_as<float>(static_cast<std::uint32_t>(h) << 16);
}

inline std::uint16_t float_to_half(float f) {
  const std::uint32_t u = half_detail::bits_as<std::uint32_t>(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): scale by adding the magic 0.5 so the FPU rounds for us.
    const float magic = half_detail::bits_as<float>(0x3f000000u);  // 0.5
    const float r = half_detail::bits_as<float>(abs) + magic;
    return static_cast<std::uint16_t>(sign | (half_detail::bits_as<std::uint32_t>(r) - 0x3f000000u));
  }
  std::uint32_t m = abs + 0xc8000fffu + ((abs >> 13) & 1u);  // rebias exponent 127->15, round
  return static_cast<std::uint16_t>(sign | (m >> 13));
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(man) * 5.9604644775390625e-8f;  // 2^-24
    return half_detail::bits_as<float>(half_detail::bits_as<std::uint32_t>(v) | sign);
  }
  if (exp == 31) return half_detail::bits_as<float>(sign | 0x7f800000u | (man << 13));
  return half_detail::bits_as<float>(sign | ((exp + 112u) << 23) | (man << 13));
}

}  // namespace ttlpred::quant
