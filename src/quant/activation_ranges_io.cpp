#include "quant/activation_ranges_io.hpp"

#include <cmath>

#include "util/binary_io.hpp"

namespace ttlpred::quant {

namespace {
// 2: adds act_qmax.
constexpr std::uint32_t kCalibrationVersion = 2;
}

std::vector<std::uint8_t> activation_ranges_bytes(const ActivationRanges& table) {
  BinaryWriter w;
  w.put<std::uint32_t>(kCalibrationVersion);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(table.method));
  w.put<std::uint64_t>(table.layer_inputs.size());
  for (const ActivationRange& r : table.layer_inputs) {
    w.put<float>(r.lo);
    w.put<float>(r.hi);
  }
  w.put<float>(table.act_qmax);
  return w.take();
}

ActivationRanges parse_activation_ranges(const std::vector<std::uint8_t>& bytes, const std::string& what) {
  BinaryReader r(bytes, what);
  const auto version = r.get<std::uint32_t>();
  if (version == 0 || version > kCalibrationVersion)
    r.fail("calibration format version " + std::to_string(version) + " is not supported (this build reads 1 and 2)");
  const auto method = r.get<std::uint8_t>();
  if (method > 2) r.fail("unknown calibration method " + std::to_string(method));
  ActivationRanges t;
  t.method = static_cast<RangeMethod>(method);
  const auto n = r.get<std::uint64_t>();
  if (n > 4096) r.fail("implausible layer count " + std::to_string(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    ActivationRange a;
    a.lo = r.get<float>();
    a.hi = r.get<float>();
    if (!std::isfinite(a.lo) || !std::isfinite(a.hi) || a.lo > 0.0f || a.hi < 0.0f)
      r.fail("layer " + std::to_string(i) + " range [" + std::to_string(a.lo) + ", " + std::to_string(a.hi) +
             "] must be finite and hold 0");
    t.layer_inputs.push_back(a);
  }
  if (version >= 2) {
    t.act_qmax = r.get<float>();
    if (!(t.act_qmax == 0.0f || (t.act_qmax >= 15.0f && t.act_qmax <= 255.0f && t.act_qmax == std::floor(t.act_qmax))))
      r.fail("activation levels " + std::to_string(t.act_qmax) + " must be 0 or an integer in [15, 255]");
  }
  if (!r.at_end()) r.fail("trailing bytes after the calibration table");
  return t;
}

}  // namespace ttlpred::quant
