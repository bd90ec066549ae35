// The int8 calibration reader's guards (quant/activation_ranges_io.cpp), each met by a hostile table.
// A model file carries the table as opaque bytes inside its checksum, and every plan compiled
// for the model reads it (`serve --model`, /admin/reload, bench); anyone can recompute a
// checksum, so these guards are what refuses a hand-edited table. A real table, calibrated on
// the tiny test network, is decoded into a mirror of its format, one field is broken, and each
// refusal must name its guard.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "model/model_test_util.hpp"
#include "quant/activation_ranges.hpp"
#include "quant/activation_ranges_io.hpp"
#include "section_bytes.hpp"

namespace ttlpred::quant {
namespace {


// The table's format: u32 version, u8 method, the layer ranges (counted), and from version 2
// the activation levels.
struct CalibrationPayload {
  struct Range {
    float lo = 0, hi = 0;
  };
  std::uint32_t version = 0;
  std::uint8_t method = 0;
  std::uint64_t n_layers = 0;
  std::vector<Range> layers;
  float act_qmax = 0;
  std::vector<std::uint8_t> trailing;
};

template <class IO>
void layout(IO& io, CalibrationPayload& p) {
  io(p.version);
  io(p.method);
  io.counted(p.n_layers, p.layers);
  for (auto& r : p.layers) {
    io(r.lo);
    io(r.hi);
  }
  if (p.version >= 2) io(p.act_qmax);
}

// Ranges of the tiny network's three layers over eight inputs, on the grid of a QAT model.
std::vector<std::uint8_t> real_table_bytes() {
  const MlpModel m = test::tiny_model();
  std::vector<float> dense;
  std::vector<std::uint32_t> cats;
  for (std::uint32_t i = 0; i < 8; ++i) {
    for (float v : {0.5f * static_cast<float>(i) - 1.0f, 0.25f * static_cast<float>(i), -0.1f * static_cast<float>(i)})
      dense.push_back(v);
    cats.push_back(i % 4);
  }
  ActivationRanges t = measure_activation_ranges(m, dense.data(), cats.data(), 8);
  t.act_qmax = 127;
  return activation_ranges_bytes(t);
}

CalibrationPayload real_table() { return test::decoded<CalibrationPayload>(real_table_bytes()); }

std::string refusal(const CalibrationPayload& p) {
  return test::error_of([&] { parse_activation_ranges(test::encoded(p), "hostile int8 calibration"); });
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Int8CalibrationSection, MirrorRewritesTheRealTableByteForByte) {
  const CalibrationPayload p = real_table();
  EXPECT_EQ(test::encoded(p), real_table_bytes());
  EXPECT_EQ(p.version, 2u);
  EXPECT_EQ(p.layers.size(), 3u);
  EXPECT_EQ(refusal(p), "(accepted)");
}

const test::Mutation<CalibrationPayload> kTableMutations[] = {
    {"format version 0", [](CalibrationPayload& p) { p.version = 0; },
     "calibration format version 0 is not supported (this build reads 1 and 2)"},
    {"format version of a later build", [](CalibrationPayload& p) { p.version = 3; },
     "calibration format version 3 is not supported"},
    {"method past the last", [](CalibrationPayload& p) { p.method = 3; }, "unknown calibration method 3"},
    {"layer count past the bound", [](CalibrationPayload& p) { p.n_layers = 4097; }, "implausible layer count 4097"},
    {"NaN range end", [](CalibrationPayload& p) { p.layers[1].lo = kNaN; }, "layer 1 range [nan, "},
    {"infinite range end", [](CalibrationPayload& p) { p.layers[0].hi = std::numeric_limits<float>::infinity(); },
     "must be finite and hold 0"},
    {"range above 0", [](CalibrationPayload& p) { p.layers[0].lo = 0.5f; }, "layer 0 range [0.500000, "},
    {"range below 0",
     [](CalibrationPayload& p) {
       p.layers[2].lo = -2.0f;
       p.layers[2].hi = -1.0f;
     },
     "layer 2 range [-2.000000, -1.000000] must be finite and hold 0"},
    {"activation levels below 15", [](CalibrationPayload& p) { p.act_qmax = 7; },
     "activation levels 7.000000 must be 0 or an integer in [15, 255]"},
    {"activation levels above 255", [](CalibrationPayload& p) { p.act_qmax = 256; }, "activation levels 256.000000"},
    {"fractional activation levels", [](CalibrationPayload& p) { p.act_qmax = 100.5f; }, "activation levels 100.500000"},
    {"NaN activation levels", [](CalibrationPayload& p) { p.act_qmax = kNaN; }, "activation levels nan"},
    {"trailing bytes", [](CalibrationPayload& p) { p.trailing = {0}; }, "trailing bytes after the calibration table"},
};

TEST(Int8CalibrationSection, EachGuardRefusesItsHostileTable) {
  test::expect_each_refused(kTableMutations, real_table(), refusal, "hostile int8 calibration: ");
}

}  // namespace
}  // namespace ttlpred::quant
