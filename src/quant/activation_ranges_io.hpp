#pragma once
// The activation ranges as bytes: what ModelFile::int8_calibration carries (opaque to the
// model file). Layout: u32 format version, u8 method, u64 count, count x (f32 lo, f32 hi).
#include <cstdint>
#include <string>
#include <vector>

#include "quant/activation_ranges.hpp"

namespace ttlpred::quant {

std::vector<std::uint8_t> activation_ranges_bytes(const ActivationRanges& table);
// Throws ttlpred::Error naming `what` for truncated, newer-version or inconsistent bytes.
ActivationRanges parse_activation_ranges(const std::vector<std::uint8_t>& bytes, const std::string& what);

}  // namespace ttlpred::quant
