#pragma once
// 64-bit hashes of history keys. Keys are hashed from their string values (never from a
// table's dictionary codes), so a saved history state means the same thing for any table
// and for records parsed by the service. The key kind is mixed in, so user "x" and queue "x"
// are different keys.
#include <bit>
#include <cstdint>
#include <string_view>

#include "util/splitmix.hpp"

namespace ttlpred::keyhash {

// splitmix64's finalizer: spreads FNV's weak low bits before values are combined.
constexpr std::uint64_t mix(std::uint64_t x) { return splitmix64_mix(x); }

// FNV-1a over the bytes, then mixed; the same on every platform and every run.
constexpr std::uint64_t of_string(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return mix(h ^ s.size());
}

// Identifiers stored as numbers (master job id): hash the integer value, so 7 and 7.0 agree.
// Values outside int64 (never real ids) hash their bits instead of overflowing the cast.
inline std::uint64_t of_number(double v) {
  if (!(v > -9.0e18 && v < 9.0e18)) return mix(std::bit_cast<std::uint64_t>(v));
  const auto i = static_cast<std::int64_t>(v);
  return mix(std::bit_cast<std::uint64_t>(i) ^ 0x6e756d6265720000ULL);
}

// Combines a key kind with one or two part hashes (order matters: (a, b) != (b, a)).
constexpr std::uint64_t combine(std::uint8_t kind, std::uint64_t a, std::uint64_t b = 0) {
  std::uint64_t h = mix(0x9e3779b97f4a7c15ULL * (kind + 1u));
  h = mix(h ^ a);
  h = mix(h + 0x632be59bd9b4e019ULL + b);
  return h;
}

}  // namespace ttlpred::keyhash
