#pragma once
// The calibration table as bytes: what ModelFile::int8_calibration carries (opaque to the
// model file). Layout: u32 format version, u8 method, u64 count, count x (f32 lo, f32 hi).
#include <cstdint>
#include <string>
#include <vector>

#include "quant/calibration.hpp"

namespace ttlpred::quant {

std::vector<std::uint8_t> calibration_bytes(const CalibrationTable& table);
// Throws ttlpred::Error naming `what` for truncated, newer-version or inconsistent bytes.
CalibrationTable parse_calibration(const std::vector<std::uint8_t>& bytes, const std::string& what);

}  // namespace ttlpred::quant
